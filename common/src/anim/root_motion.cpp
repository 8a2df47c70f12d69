#include <kinesync/common/anim/root_motion.h>

#include <cmath>

namespace ks {

kform root_motion_extract(const kform& hips_global, vec3 fwd_local) {
    kform out;
    out.pos = {hips_global.pos.x, 0.0f, hips_global.pos.z};
    out.vel = {hips_global.vel.x, 0.0f, hips_global.vel.z};
    const vec3 f = quat_mul_vec3(hips_global.rot, fwd_local);
    const vec3 df = cross(hips_global.ang, f);
    const float h2 = f.x * f.x + f.z * f.z;
    const float yaw = std::atan2(f.x, f.z);
    // d/dt atan2(fx, fz); a forward axis pointing straight up has no heading rate.
    const float yaw_rate = h2 > 1e-12f ? (f.z * df.x - f.x * df.z) / h2 : 0.0f;
    out.rot = quat_from_angle_axis(yaw, {0, 1, 0});
    out.ang = {0.0f, yaw_rate, 0.0f};
    return out;
}

void op_root_motion_remove(Pose& local, const kform& root) { local.set(0, kform_div(root, local.get(0))); }

kform root_motion_anchor(const kform& world_root, const kform& clip_root) {
    kform out;
    out.rot = quat_normalize(quat_mul_inv(world_root.rot, clip_root.rot));
    out.pos = world_root.pos - quat_mul_vec3(out.rot, clip_root.pos);
    return out;
}

}  // namespace ks
