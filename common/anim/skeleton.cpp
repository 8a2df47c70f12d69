#include "common/anim/skeleton.h"

namespace ks {

int Skeleton::find(const std::string& name) const {
    for (int i = 0; i < int(names.size()); ++i)
        if (names[i] == name) return i;
    return -1;
}

std::string Skeleton::validate() const {
    if (names.size() != parents.size() || offsets.size() != parents.size())
        return "names, parents and offsets have different sizes";
    for (int i = 0; i < size(); ++i) {
        if (parents[i] >= i) return "joint " + std::to_string(i) + " (" + names[i] + ") has parent " +
                                    std::to_string(parents[i]) + ", which is not before it";
        if (parents[i] < -1) return "joint " + std::to_string(i) + " has invalid parent " + std::to_string(parents[i]);
    }
    return {};
}

}  // namespace ks
