#include <kinesync/common/anim/ops_lookat.h>

#include "common/src/anim/op_checks.h"

namespace ks {

namespace detail {
// A finite target, a forward axis of some length (it is normalized), a finite weight.
inline void check_lookat(const char* op, vec3 target_pos, vec3 fwd, float weight) {
    check_finite(op, "target_pos", target_pos);
    check_finite(op, "fwd", fwd);
    if (!(length(fwd) > 1e-6f)) throw Error(Errc::InvalidArgument, std::string(op) + ": fwd is (nearly) zero: it must give a direction", "fwd");
    check_finite(op, "weight", weight);
}
}  // namespace detail

void op_lookat(Pose& local, const Pose& global, int joint, vec3 target_pos, vec3 target_vel, vec3 fwd,
               float weight) {
    detail::check_joint(__func__, "joint", joint, detail::check_poses(__func__, {{"global", &global}, {"local", &local}}));
    detail::check_lookat(__func__, target_pos, fwd, weight);
    detail::check_finite(__func__, "target_vel", target_vel);
    // Target relative to the joint's position and rotation (not its scale: the rotation alone
    // decides where `fwd` points), then as a moving direction.
    kform frame = global.get(joint);
    frame.scl = vec3{1, 1, 1};
    frame.svl = vec3{};
    const kform tar = kform_pos_vel_normalize(kform_inv_mul(frame, kform_from_pos_vel(target_pos, target_vel)));
    kform diff = kform_rot_ang_between(kform_from_pos_vel(fwd, vec3{}), tar);
    if (weight != 1.0f) {
        const vec3 phi = quat_to_scaled_angle_axis(quat_abs(diff.rot));
        const vec3 dphi = so3_left_jacobian_inv_mul(phi, diff.ang);
        diff.rot = quat_from_scaled_angle_axis(phi * weight);
        diff.ang = so3_left_jacobian_mul(phi * weight, dphi * weight);
    }
    const kform rotated = kform_mul(local.get(joint), diff);
    local.rot[size_t(joint)] = rotated.rot;
    local.ang[size_t(joint)] = rotated.ang;
}

void op_lookat_values(Pose& local, const Pose& global, int joint, vec3 target_pos, vec3 fwd, float weight) {
    detail::check_joint(__func__, "joint", joint, detail::check_poses(__func__, {{"global", &global}, {"local", &local}}));
    detail::check_lookat(__func__, target_pos, fwd, weight);
    const size_t j = size_t(joint);
    const vec3 to = quat_inv_mul_vec3(global.rot[j], target_pos - global.pos[j]);
    quat diff = quat_between(fwd, to / std::max(length(to), 1e-20f));
    if (weight != 1.0f) diff = quat_from_scaled_angle_axis(quat_to_scaled_angle_axis(quat_abs(diff)) * weight);
    local.rot[j] = quat_mul(local.rot[j], diff);
}

}  // namespace ks
