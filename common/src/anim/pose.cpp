#include <kinesync/common/anim/pose.h>

#include <cmath>
#include <string>

#include <kinesync/common/errors.h>

#include "common/src/util/refusal_text.h"

namespace ks {

namespace {

[[noreturn]] void refuse(const Skeleton* s, const char* where, const char* name, const char* field, int j, const std::string& why) {
    const std::string f = std::string(name) + "." + field;
    throw Error(Errc::InvalidPose, std::string(where) + ": " + f + " of " + detail::joint_text(s, j) + " " + why, f, j);
}

bool finite(quat q) { return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z); }

void check_joint(const kform& k, const Skeleton* s, int j, const char* where, const char* name) {
    const struct { const char* field; vec3 v; } vecs[] = {{"pos", k.pos}, {"scl", k.scl}, {"vel", k.vel}, {"ang", k.ang}, {"svl", k.svl}};
    for (const auto& f : vecs)
        if (!isfinite(f.v)) refuse(s, where, name, f.field, j, "is " + detail::vec_text(f.v) + ", not finite");
    const quat q = k.rot;
    if (!finite(q)) refuse(s, where, name, "rot", j, "is " + detail::quat_text(q) + ", not finite");
    const float len = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    if (!(std::fabs(len - 1.0f) <= kUnitQuatTolerance))
        refuse(s, where, name, "rot", j, "is " + detail::quat_text(q) + ", not a unit quaternion (|q| = " + std::to_string(len) + ")");
    const vec3 c = k.scl;
    if (!(c.x > 0 && c.y > 0 && c.z > 0)) refuse(s, where, name, "scl", j, "is " + detail::vec_text(c) + ": scales must be positive");
}

}  // namespace

bool pose_has_size(const Pose& p, int joints) {
    const size_t n = size_t(joints);
    return joints >= 0 && p.pos.size() == n && p.rot.size() == n && p.scl.size() == n && p.vel.size() == n &&
           p.ang.size() == n && p.svl.size() == n;
}

void check_pose_size(const Pose& p, int joints, const char* where, const char* name) {
    if (pose_has_size(p, joints)) return;
    std::string sizes = "pos " + std::to_string(p.pos.size()) + ", rot " + std::to_string(p.rot.size()) + ", scl " +
                        std::to_string(p.scl.size()) + ", vel " + std::to_string(p.vel.size()) + ", ang " +
                        std::to_string(p.ang.size()) + ", svl " + std::to_string(p.svl.size());
    throw Error(Errc::InvalidPose, std::string(where) + ": " + name + " has " + std::to_string(p.size()) + " joints (" + sizes +
                                       "), expected " + std::to_string(joints),
                name);
}

void check_pose(const Pose& p, const Skeleton& skeleton, const char* where, const char* name) {
    check_pose_size(p, skeleton.size(), where, name);
    for (int j = 0; j < p.size(); ++j) check_joint(p.get(j), &skeleton, j, where, name);
}

void check_pose_values(const Pose& p, const char* where, const char* name) {
    check_pose_size(p, p.size(), where, name);
    for (int j = 0; j < p.size(); ++j) check_joint(p.get(j), nullptr, j, where, name);
}

void check_kform(const kform& k, const char* where, const char* name, int joint) { check_joint(k, nullptr, joint, where, name); }

}  // namespace ks
