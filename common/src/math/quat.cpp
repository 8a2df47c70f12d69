#include <kinesync/common/math/quat.h>

namespace ks {

quat detail::quat_exp_wide(vec3 v, float h2) {
    const float halfangle = std::sqrt(h2), s = std::sin(halfangle) / halfangle;
    return {std::cos(halfangle), v.x * s, v.y * s, v.z * s};
}

vec3 detail::quat_log_wide(quat q) {
    const float s = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    if (s < 1e-20f) {
        // Identity (or -identity, whose axis is undefined): the limit of atan2(s, w)/s is 1/w.
        return q.w != 0.0f ? quat_vec(q) / q.w : vec3{};
    }
    const float halfangle = std::atan2(s, q.w);
    return quat_vec(q) * (halfangle / s);
}

quat quat_from_angle_axis(float angle, vec3 axis) {
    const float c = std::cos(0.5f * angle), s = std::sin(0.5f * angle);
    return {c, s * axis.x, s * axis.y, s * axis.z};
}

quat quat_scale_path(quat path, float alpha) {
    const vec3 v = quat_vec(path);
    const float s = length(v);
    const float half = alpha * std::atan2(s, path.w);
    float sh, ch;
    sincosf(half, &sh, &ch);
    // sin(alpha h) / s, with its limit alpha / w for a vanishing path.
    const float k = s < 1e-20f ? (path.w != 0.0f ? alpha / path.w : 0.0f) : sh / s;
    return {ch, v.x * k, v.y * k, v.z * k};
}

quat quat_slerp_shortest(quat q, quat p, float t) { return quat_mul(quat_scale_path(quat_abs(quat_mul_inv(p, q)), t), q); }

quat quat_nlerp_shortest(quat q, quat p, float t) {
    if (quat_dot(q, p) < 0.0f) p = -p;
    return quat_normalize(q * (1.0f - t) + p * t);
}

quat quat_between(vec3 a, vec3 b) {
    const vec3 c = cross(a, b);
    const float w = std::sqrt(dot(a, a) * dot(b, b)) + dot(a, b);
    return quat_normalize(quat{w, c.x, c.y, c.z});
}

quat quat_via_path(quat q, quat p, quat dir) {
    quat e = quat_abs(quat_mul_inv(p, q));
    if (quat_dot(dir, e) < 0.0f) e = -e;
    return e;
}

quat quat_slerp_via(quat q, quat p, quat& dir, float t) {
    dir = quat_via_path(q, p, dir);
    return quat_mul(quat_exp(quat_log(dir) * t), q);
}

// J_l(phi) = I + a [phi]x + b [phi]x^2 and J_l(phi)^-1 = I - 1/2 [phi]x + c [phi]x^2. The closed
// forms of b and c cancel catastrophically at small angles, so below a threshold their Taylor
// series are used (truncation < 1e-10 there); above it float evaluation is accurate to ~1e-6.
void so3_left_jacobian_coeffs(float t2, float theta, float sin_half, float sin_theta, float& a, float& b) {
    if (t2 < 0.09f) {  // theta < 0.3
        detail::so3_left_jacobian_series(t2, a, b);
        return;
    }
    a = 2.0f * sin_half * sin_half / t2;  // (1 - cos theta) / theta^2
    b = (theta - sin_theta) / (t2 * theta);
}

vec3 detail::so3_left_jacobian_mul_wide(vec3 phi, vec3 v) {
    const float t2 = dot(phi, phi), theta = std::sqrt(t2);
    float a, b;
    so3_left_jacobian_coeffs(t2, theta, std::sin(0.5f * theta), std::sin(theta), a, b);
    const vec3 pv = cross(phi, v);
    return v + a * pv + b * cross(phi, pv);
}

float detail::so3_left_jacobian_inv_coeff_wide(float t2) {
    // (1 - (theta/2) cot(theta/2)) / theta^2; singular only at theta = 2 pi.
    const float h = 0.5f * std::sqrt(t2);
    return (1.0f - h * std::cos(h) / std::sin(h)) / t2;
}


quat quat_from_euler(const char order[3], const float angles[3]) {
    quat q;
    for (int i = 0; i < 3; ++i) {
        vec3 axis;
        switch (order[i]) {
            case 'X': case 'x': axis = {1, 0, 0}; break;
            case 'Y': case 'y': axis = {0, 1, 0}; break;
            default: axis = {0, 0, 1}; break;
        }
        q = quat_mul(q, quat_from_angle_axis(angles[i], axis));
    }
    return q;
}

}  // namespace ks
