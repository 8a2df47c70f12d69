#include "common/math/derivatives.h"

namespace ks {

quat quat_between_dx(vec3 p, vec3 dp, vec3 q, vec3 dq) {
    // quat_between(p, q) = normalize(a, c) with c = p x q, a = sqrt(|p|^2 |q|^2) + p.q
    const vec3 c = cross(p, q);
    const vec3 dc = cross_dx(p, dp, q, dq);
    const float pp = dot(p, p), qq = dot(q, q);
    const float a = std::sqrt(pp * qq) + dot(p, q);
    const float da = sqrt_dx(pp * qq, dot_dx(p, dp, p, dp) * qq + dot_dx(q, dq, q, dq) * pp) + dot_dx(p, dp, q, dq);
    return quat_normalize_dx(quat{a, c.x, c.y, c.z}, quat{da, dc.x, dc.y, dc.z});
}

}  // namespace ks

namespace ks {

quat quat_slerp_path_kinematic(quat q, vec3 wq, vec3 wp, quat path, float a, float da, vec3& w_out) {
    const vec3 u = quat_to_scaled_angle_axis(path);
    const vec3 w_path = wp - quat_mul_vec3(path, wq);  // angular velocity of p q^-1
    const vec3 du = so3_left_jacobian_inv_mul(u, w_path);
    const vec3 phi = u * a;
    const quat rot_a = quat_from_scaled_angle_axis(phi);
    w_out = so3_left_jacobian_mul(phi, u * da + du * a) + quat_mul_vec3(rot_a, wq);
    return quat_mul(rot_a, q);
}

}  // namespace ks
