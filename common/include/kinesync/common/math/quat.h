#pragma once
// Quaternions (w, x, y, z), Hamilton product.
//
// Conventions used everywhere in kinesync:
//  - global = parent * local (quat_mul(parent, local)); quat_mul_vec3(q, v) rotates v by q.
//  - An angular velocity w lives in the parent (left, "spatial") frame:
//        q(t + dt) = quat_from_scaled_angle_axis(w * dt) * q(t),   dq/dt = 0.5 * (0, w) * q.
//  - A "scaled angle axis" is angle * axis (the rotation vector); quat_log/quat_exp use the
//    half-angle convention, so quat_to_scaled_angle_axis(q) == 2 * quat_log(q).
//  - Scalar velocity (scale) is d(log scale)/dt, component-wise.

#include <kinesync/common/math/vec3.h>

namespace ks {

struct quat {
    float w = 1.0f, x = 0.0f, y = 0.0f, z = 0.0f;
    constexpr quat() = default;
    constexpr quat(float w_, float x_, float y_, float z_) : w(w_), x(x_), y(y_), z(z_) {}
};

constexpr quat operator+(quat a, quat b) { return {a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z}; }
constexpr quat operator-(quat a, quat b) { return {a.w - b.w, a.x - b.x, a.y - b.y, a.z - b.z}; }
constexpr quat operator-(quat a) { return {-a.w, -a.x, -a.y, -a.z}; }
constexpr quat operator*(quat a, float s) { return {a.w * s, a.x * s, a.y * s, a.z * s}; }
constexpr quat operator*(float s, quat a) { return a * s; }
constexpr quat operator/(quat a, float s) { return {a.w / s, a.x / s, a.y / s, a.z / s}; }

constexpr float quat_dot(quat a, quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }
inline float quat_length(quat q) { return std::sqrt(quat_dot(q, q)); }
inline quat quat_normalize(quat q, float eps = 1e-8f) { return q / (quat_length(q) + eps); }
constexpr quat quat_inv(quat q) { return {q.w, -q.x, -q.y, -q.z}; }  // conjugate; q is unit
constexpr vec3 quat_vec(quat q) { return {q.x, q.y, q.z}; }
// The same rotation on the w >= 0 hemisphere.
constexpr quat quat_abs(quat q) { return q.w < 0.0f ? -q : q; }

constexpr quat quat_mul(quat a, quat b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
constexpr quat quat_mul_inv(quat a, quat b) { return quat_mul(a, quat_inv(b)); }  // a * b^-1
constexpr quat quat_inv_mul(quat a, quat b) { return quat_mul(quat_inv(a), b); }  // a^-1 * b

constexpr vec3 quat_mul_vec3(quat q, vec3 v) {
    // v + 2w (u x v) + 2 u x (u x v), u = vector part
    const vec3 u{q.x, q.y, q.z};
    const vec3 t = 2.0f * cross(u, v);
    return v + q.w * t + cross(u, t);
}
constexpr vec3 quat_inv_mul_vec3(quat q, vec3 v) { return quat_mul_vec3(quat_inv(q), v); }

namespace detail {
quat quat_exp_wide(vec3 v, float h2);  // quat_exp for |v|^2 = h2 >= 1/16
// Taylor series of the left Jacobian's coefficients (see so3_left_jacobian_coeffs), truncation
// < 1e-10 for t2 = |phi|^2 < 0.09.
inline void so3_left_jacobian_series(float t2, float& a, float& b) {
    a = 0.5f - t2 * (1.0f / 24.0f - t2 * (1.0f / 720.0f - t2 / 40320.0f));
    b = 1.0f / 6.0f - t2 * (1.0f / 120.0f - t2 * (1.0f / 5040.0f - t2 / 362880.0f));
}
}  // namespace detail

// Half-angle exponential map: (0, v) -> (cos|v|, v sin|v| / |v|). Inline: the offsets and steps it
// mostly takes are below a quarter radian, where the Taylor series of sin(h)/h and cos(h),
// truncated past h^8 (error < 3e-13), replace the square root, sine and cosine.
inline quat quat_exp(vec3 v) {
    const float h2 = dot(v, v);
    if (h2 >= 0.0625f) return detail::quat_exp_wide(v, h2);
    const float s = 1.0f - h2 * (1.0f / 6.0f - h2 * (1.0f / 120.0f - h2 * (1.0f / 5040.0f - h2 * (1.0f / 362880.0f))));
    const float c = 1.0f - h2 * (0.5f - h2 * (1.0f / 24.0f - h2 * (1.0f / 720.0f - h2 * (1.0f / 40320.0f))));
    return {c, v.x * s, v.y * s, v.z * s};
}
namespace detail {
vec3 quat_log_wide(quat q);
}
// Inverse of quat_exp, accurate at small angles (atan2, never acos). For q with w < 0 it returns
// the long-way vector (half angle in (pi/2, pi]); apply quat_abs first for the short way. Below
// |v| / w = 1/8 (a quarter radian) atan(x)/x's Taylor series, truncated past x^8 (error < 1e-10).
inline vec3 quat_log(quat q) {
    const vec3 v{q.x, q.y, q.z};
    const float s2 = dot(v, v);
    if (!(q.w > 0.0f && s2 < 0.015625f * q.w * q.w)) return detail::quat_log_wide(q);
    const float inv_w = 1.0f / q.w, x2 = s2 * inv_w * inv_w;
    const float k = 1.0f - x2 * (1.0f / 3.0f - x2 * (1.0f / 5.0f - x2 * (1.0f / 7.0f - x2 * (1.0f / 9.0f))));
    return v * (k * inv_w);
}
inline quat quat_from_scaled_angle_axis(vec3 v) { return quat_exp(v * 0.5f); }
inline vec3 quat_to_scaled_angle_axis(quat q) { return 2.0f * quat_log(q); }
quat quat_from_angle_axis(float angle, vec3 axis);  // axis must be unit

// Angular velocity (parent frame) that takes q0 to q1 in dt, shortest way.
inline vec3 quat_differentiate_angular_velocity(quat q1, quat q0, float dt) {
    return quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(q1, q0))) / dt;
}

// exp(t * log(abs(p q^-1))) q: shortest-arc spherical interpolation, left form.
quat quat_slerp_shortest(quat q, quat p, float t);
quat quat_nlerp_shortest(quat q, quat p, float t);
// Rotation taking direction a to direction b (needn't be unit; not both opposite).
quat quat_between(vec3 a, vec3 b);

// The Dead Blending article's slerp that remembers its direction: `dir` holds the path used last
// time; if the shortest path between q and p now lies on the other hemisphere from `dir`, the
// long way is taken so the blend never switches sides mid-blend. Reset dir to identity when a
// blend starts. The path is returned in `dir` and also used by the velocity code.
quat quat_slerp_via(quat q, quat p, quat& dir, float t);
// The path quaternion slerp_via would use (no side effects): abs(p q^-1), flipped to match dir.
quat quat_via_path(quat q, quat p, quat dir);

// Left Jacobian of the rotation-vector exponential and its inverse, applied to a vector:
// for R(t) = Exp(phi(t)), the parent-frame angular velocity is J_l(phi) dphi/dt.
// These make weighted exponential-map blends (slerp, partial additives, inertialization)
// give exact angular velocities instead of the published weighted sums.
namespace detail {
vec3 so3_left_jacobian_mul_wide(vec3 phi, vec3 v);  // for |phi| >= 0.3
}
inline vec3 so3_left_jacobian_mul(vec3 phi, vec3 v) {
    const float t2 = dot(phi, phi);
    if (t2 >= 0.09f) return detail::so3_left_jacobian_mul_wide(phi, v);
    float a, b;
    detail::so3_left_jacobian_series(t2, a, b);
    const vec3 pv = cross(phi, v);
    return v + a * pv + b * cross(phi, pv);
}
namespace detail {
float so3_left_jacobian_inv_coeff_wide(float t2);  // for t2 >= 0.25
}
// J_l(phi)^-1's c from t2 = |phi|^2: its series below 0.5 rad (truncation < 1e-10), else the closed form.
inline float so3_left_jacobian_inv_coeff(float t2) {
    if (t2 >= 0.25f) return detail::so3_left_jacobian_inv_coeff_wide(t2);
    return 1.0f / 12.0f + t2 * (1.0f / 720.0f + t2 * (1.0f / 30240.0f + t2 / 1209600.0f));
}
inline vec3 so3_left_jacobian_inv_mul(vec3 phi, vec3 v) {
    const float c = so3_left_jacobian_inv_coeff(dot(phi, phi));
    const vec3 pv = cross(phi, v);
    return v - 0.5f * pv + c * cross(phi, pv);
}
// Their coefficients, for callers that fuse them with other work: J_l(phi) = I + a [phi]x +
// b [phi]x^2 from t2 = |phi|^2 and, at theta = |phi| >= 0.3 (Taylor series below), theta,
// sin(theta / 2) and sin(theta) the caller already has; J_l(phi)^-1 = I - [phi]x / 2 + c [phi]x^2.
void so3_left_jacobian_coeffs(float t2, float theta, float sin_half, float sin_theta, float& a, float& b);
// exp(alpha log(path)) of a unit quaternion: one atan2 and one sincos.
quat quat_scale_path(quat path, float alpha);

// Rotation from intrinsic Euler channels as BVH lists them, e.g. order "ZYX" means Rz * Ry * Rx.
// angles in radians, given per axis letter in the order string.
quat quat_from_euler(const char order[3], const float angles[3]);

inline bool isfinite(quat q) {
    return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}

}  // namespace ks
