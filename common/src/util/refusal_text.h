#pragma once
// How refusals (ks::Error messages) spell values, joints and configuration fields, so every check
// reads the same.

#include <sstream>
#include <string>

#include <kinesync/common/anim/skeleton.h>
#include <kinesync/common/errors.h>
#include <kinesync/common/math/quat.h>

namespace ks::detail {

inline std::string vec_text(vec3 v) {
    std::ostringstream o;
    o << '(' << v.x << ", " << v.y << ", " << v.z << ')';
    return o.str();
}

inline std::string quat_text(quat q) {
    std::ostringstream o;
    o << "(w " << q.w << ", x " << q.x << ", y " << q.y << ", z " << q.z << ')';
    return o.str();
}

// "joint 12 (LeftHand)", or "joint 12" without a skeleton or a name.
inline std::string joint_text(const Skeleton* s, int j) {
    std::string out = "joint " + std::to_string(j);
    if (s && j >= 0 && size_t(j) < s->names.size() && !s->names[size_t(j)].empty()) out += " (" + s->names[size_t(j)] + ")";
    return out;
}

// Unless ok: Errc::InvalidConfig, "WHO: config.FIELD = VALUE: RULE", field "config.FIELD".
inline void check_config_field(bool ok, const char* who, const char* field, double value, const char* rule) {
    if (ok) return;
    std::ostringstream o;
    o << who << ": config." << field << " = " << value << ": " << rule;
    throw Error(Errc::InvalidConfig, o.str(), std::string("config.") + field);
}

}  // namespace ks::detail
