#pragma once
// Kineform ("kform"): a position, rotation and scale together with their velocities, after
// D. Holden, "Propagating Velocities through Animation Systems".
//
// mul(v, w) attaches w (expressed in v's frame) to v: pos = v.pos + v.rot * (v.scl * w.pos),
// rot = v.rot * w.rot, scl = v.scl * w.scl (Unreal-style component scale), with the velocities
// of that composition: the linear velocity carries "leverage" (v.ang x r) and "expansion"
// (v.svl * r) terms.
//
// With non-uniform scale this product is not associative, so left and right inverses differ:
//   div(v, w) solves mul(v, x) == w        (so div(v, mul(v, w)) == w; this is backward kinematics)
//   inv(v)    solves mul(x, v) == identity (the left inverse)
// For uniform scale, inv(v) == div(v, identity) and mul(v, inv(v)) == identity as well.
// Unlike the published code, div and inv divide by the parent scale and keep the scale-velocity
// term in the local frame.

#include <kinesync/common/math/quat.h>

namespace ks {

struct kform {
    vec3 pos{0, 0, 0};  // position
    quat rot{1, 0, 0, 0};  // rotation
    vec3 scl{1, 1, 1};  // scale
    vec3 vel{0, 0, 0};  // linear velocity
    vec3 ang{0, 0, 0};  // angular velocity (parent frame)
    vec3 svl{0, 0, 0};  // scalar velocity, d(log scl)/dt
};

kform kform_mul(const kform& v, const kform& w);
kform kform_div(const kform& v, const kform& w);
inline kform kform_inv_mul(const kform& v, const kform& w) { return kform_div(v, w); }
kform kform_inv(const kform& v);

vec3 kform_mul_pos(const kform& v, vec3 pos);
vec3 kform_mul_vel(const kform& v, vec3 pos, vec3 vel);  // velocity of kform_mul_pos(v, pos(t))
inline vec3 kform_mul_dir(const kform& v, vec3 dir) { return quat_mul_vec3(v.rot, dir); }

inline kform kform_from_pos_vel(vec3 pos, vec3 vel) {
    kform out;
    out.pos = pos;
    out.vel = vel;
    return out;
}
// Normalizes pos as a direction; vel becomes the direction's rate of change.
kform kform_pos_vel_normalize(const kform& d);
// Rotation (and angular velocity) between the directions held in dir0.pos and dir1.pos.
kform kform_rot_ang_between(const kform& dir0, const kform& dir1);

// Moves k along its own velocities for dt (velocities unchanged): constant linear velocity,
// constant angular velocity, constant scalar velocity.
kform kform_integrate(const kform& k, float dt);

}  // namespace ks
