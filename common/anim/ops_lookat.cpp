#include "common/anim/ops_lookat.h"

namespace ks {

void op_lookat(Pose& local, const Pose& global, int joint, vec3 target_pos, vec3 target_vel, vec3 fwd,
               float weight) {
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

}  // namespace ks
