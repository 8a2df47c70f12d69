#include <kinesync/common/math/kform.h>

#include "common/src/math/derivatives.h"

namespace ks {

kform kform_mul(const kform& v, const kform& w) {
    kform out;
    const vec3 r = quat_mul_vec3(v.rot, w.pos * v.scl);  // w's offset in v's parent frame
    out.pos = r + v.pos;
    out.rot = quat_mul(v.rot, w.rot);
    out.scl = w.scl * v.scl;
    out.vel = quat_mul_vec3(v.rot, w.vel * v.scl) + v.vel + cross(v.ang, r) +
              quat_mul_vec3(v.rot, w.pos * v.scl * v.svl);
    out.ang = quat_mul_vec3(v.rot, w.ang) + v.ang;
    out.svl = w.svl + v.svl;
    return out;
}

kform kform_div(const kform& v, const kform& w) {
    kform out;
    const vec3 d = w.pos - v.pos;
    out.pos = quat_inv_mul_vec3(v.rot, d) / v.scl;
    out.rot = quat_inv_mul(v.rot, w.rot);
    out.scl = w.scl / v.scl;
    out.vel = quat_inv_mul_vec3(v.rot, w.vel - v.vel - cross(v.ang, d)) / v.scl - v.svl * out.pos;
    out.ang = quat_inv_mul_vec3(v.rot, w.ang - v.ang);
    out.svl = w.svl - v.svl;
    return out;
}

kform kform_inv(const kform& v) {
    kform out;
    const vec3 y = v.pos / v.scl;
    out.pos = -quat_inv_mul_vec3(v.rot, y);
    out.rot = quat_inv(v.rot);
    out.scl = 1.0f / v.scl;
    out.vel = quat_inv_mul_vec3(v.rot, cross(v.ang, y) - (v.vel - v.svl * v.pos) / v.scl);
    out.ang = -quat_inv_mul_vec3(v.rot, v.ang);
    out.svl = -v.svl;
    return out;
}

vec3 kform_mul_pos(const kform& v, vec3 pos) { return quat_mul_vec3(v.rot, pos * v.scl) + v.pos; }

vec3 kform_mul_vel(const kform& v, vec3 pos, vec3 vel) {
    return quat_mul_vec3(v.rot, vel * v.scl) + v.vel + cross(v.ang, quat_mul_vec3(v.rot, pos * v.scl)) +
           quat_mul_vec3(v.rot, pos * v.scl * v.svl);
}

kform kform_pos_vel_normalize(const kform& d) {
    kform out = d;
    out.pos = normalize(d.pos);
    out.vel = normalize_dx(d.pos, d.vel);
    return out;
}

kform kform_rot_ang_between(const kform& dir0, const kform& dir1) {
    kform out;
    out.rot = quat_between(dir0.pos, dir1.pos);
    const quat drot = quat_between_dx(dir0.pos, dir0.vel, dir1.pos, dir1.vel);
    out.ang = quat_delta_to_angular_velocity(out.rot, drot);
    return out;
}

kform kform_integrate(const kform& k, float dt) {
    kform out = k;
    out.pos = k.pos + k.vel * dt;
    out.rot = quat_mul(quat_from_scaled_angle_axis(k.ang * dt), k.rot);
    out.scl = k.scl * exp(k.svl * dt);
    return out;
}

}  // namespace ks
