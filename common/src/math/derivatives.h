#pragma once
// Time derivatives of common vector and quaternion functions: each *_dx takes a value and its
// derivative and returns the derivative of the function's output (the chain rule, spelt out).
// The procedural look-at is built from these.

#include <kinesync/common/math/quat.h>

namespace ks {

inline float sqrt_dx(float x, float dx, float eps = 1e-8f) { return dx / (2.0f * std::sqrt(x) + eps); }
inline float dot_dx(vec3 v, vec3 dv, vec3 w, vec3 dw) { return dot(dv, w) + dot(v, dw); }
inline vec3 cross_dx(vec3 v, vec3 dv, vec3 w, vec3 dw) { return cross(dv, w) + cross(v, dw); }
// d/dt normalize(v): the component of dv orthogonal to v, over |v|.
inline vec3 normalize_dx(vec3 v, vec3 dv, float eps = 1e-8f) {
    const vec3 n = normalize(v, eps);
    return (dv - n * dot(dv, n)) / (length(v) + eps);
}
inline quat quat_normalize_dx(quat q, quat dq, float eps = 1e-8f) {
    const float len = quat_length(q);
    const quat n = q / (len + eps);
    return (dq - n * quat_dot(dq, n)) / (len + eps);
}
// d/dt quat_between(p, q) for moving directions p and q.
quat quat_between_dx(vec3 p, vec3 dp, vec3 q, vec3 dq);
// Parent-frame angular velocity of a unit quaternion q moving at dq/dt: 2 dq q^-1 (vector part).
inline vec3 quat_delta_to_angular_velocity(quat q, quat dq) { return 2.0f * quat_vec(quat_mul_inv(dq, q)); }
// Inverse of the above: dq/dt = 0.5 (0, w) q.
inline quat quat_angular_velocity_to_delta(quat q, vec3 w) { return 0.5f * quat_mul(quat{0, w.x, w.y, w.z}, q); }

}  // namespace ks

namespace ks {

// Rotation Exp(a * u) * q with u = 2 log(path) and path = p q^-1 (hemisphere already chosen by
// the caller: quat_abs for the shortest arc, quat_via_path for slerp_via), for q and p moving at
// angular velocities wq and wp and the weight a moving at da. Returns the rotation and writes its
// exact angular velocity:  J_l(a u) (da u + a J_l(u)^-1 (wp - R(path) wq)) + R(Exp(a u)) wq.
// (The published "lerp of angular velocities plus da * u" is this with both Jacobians dropped.)
quat quat_slerp_path_kinematic(quat q, vec3 wq, vec3 wp, quat path, float a, float da, vec3& w_out);

}  // namespace ks
