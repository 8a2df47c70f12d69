#include <kinesync/common/anim/skeleton.h>

#include <cmath>

#include <kinesync/common/errors.h>

#include "common/src/util/refusal_text.h"

namespace ks {

namespace {

struct Problem {
    std::string field;
    int joint = -1;
    std::string what;
};

Problem find_problem(const Skeleton& s) {
    const size_t n = s.parents.size();
    if (n == 0) return {"skeleton.parents", -1, "has no joints"};
    if (n > size_t(kMaxJoints))
        return {"skeleton.parents", -1, "has " + std::to_string(n) + " joints, more than the limit " + std::to_string(kMaxJoints)};
    if (s.names.size() != n || s.offsets.size() != n)
        return {"skeleton", -1, "names, parents and offsets have different sizes (" + std::to_string(s.names.size()) + ", " +
                                    std::to_string(n) + ", " + std::to_string(s.offsets.size()) + ")"};
    if (s.parents[0] != -1)
        return {"skeleton.parents", 0, "joint 0 has parent " + std::to_string(s.parents[0]) + ": joint 0 must be the root (-1)"};
    for (int i = 1; i < int(n); ++i) {
        const int p = s.parents[size_t(i)];
        if (p == -1) return {"skeleton.parents", i, detail::joint_text(&s, i) + " is a second root (parent -1): one root only, joint 0"};
        if (p < 0 || p >= i)
            return {"skeleton.parents", i, detail::joint_text(&s, i) + " has parent " + std::to_string(p) + ", which is not a joint before it"};
    }
    for (int i = 0; i < int(n); ++i)
        if (!isfinite(s.offsets[size_t(i)]))
            return {"skeleton.offsets", i, detail::joint_text(&s, i) + " has offset " + detail::vec_text(s.offsets[size_t(i)]) + ", not finite"};
    return {};
}

}  // namespace

int Skeleton::find(const std::string& name) const {
    for (int i = 0; i < int(names.size()); ++i)
        if (names[size_t(i)] == name) return i;
    return -1;
}

std::string Skeleton::validate() const { return find_problem(*this).what; }

void Skeleton::check(const char* where) const {
    const Problem p = find_problem(*this);
    if (!p.what.empty()) throw Error(Errc::InvalidSkeleton, std::string(where) + ": " + p.field + ": " + p.what, p.field, p.joint);
}

}  // namespace ks
