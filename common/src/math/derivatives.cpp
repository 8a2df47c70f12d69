#include "common/src/math/derivatives.h"

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
    // The path's half angle h comes from one atan2; cot h is w / |v| of the path itself (no trig);
    // the partial rotation's exponential and left Jacobian share one sincos of a h. (Algebraically
    // the textbook chain log -> J^-1 -> exp -> J, with 2 instead of 7 transcendental calls.)
    const vec3 pv = quat_vec(path);
    const float s = length(pv);
    const float h = std::atan2(s, path.w);
    const float k = s < 1e-20f ? (path.w != 0.0f ? 2.0f / path.w : 0.0f) : 2.0f * h / s;  // u = pv k
    const vec3 u = pv * k;
    const float t2u = 4.0f * h * h;
    // J_l(u)^-1 = I - [u]x / 2 + c [u]x^2, with cot h = w / s from the path itself.
    const float c = t2u < 0.25f ? so3_left_jacobian_inv_coeff(t2u) : (1.0f - h * path.w / s) / t2u;
    const vec3 w_path = wp - quat_mul_vec3(path, wq);  // angular velocity of p q^-1
    const vec3 uw = cross(u, w_path);
    const vec3 du = w_path - 0.5f * uw + c * cross(u, uw);
    const vec3 phi = u * a;
    const float half = a * h, theta = 2.0f * std::fabs(half), t2 = theta * theta;
    float sh, ch;
    sincosf(half, &sh, &ch);
    const float e = std::fabs(half) < 1e-4f ? 0.5f * (1.0f - half * half / 6.0f) : 0.5f * sh / half;  // sin(half) / (2 half)
    const quat rot_a{ch, phi.x * e, phi.y * e, phi.z * e};
    float ja, jb;  // sin theta = 2 sin|half| cos half
    so3_left_jacobian_coeffs(t2, theta, sh, 2.0f * (half < 0.0f ? -sh : sh) * ch, ja, jb);
    const vec3 v = u * da + du * a;
    const vec3 pvv = cross(phi, v);
    w_out = v + ja * pvv + jb * cross(phi, pvv) + quat_mul_vec3(rot_a, wq);
    return quat_mul(rot_a, q);
}

}  // namespace ks
