#include <kinesync/common/math/quat.h>

namespace ks {

quat quat_exp(vec3 v) {
    const float halfangle = length(v);
    // sin(h)/h: Taylor below 1e-4 rad, where the closed form is 0/0-prone and 1 - h^2/6 is exact in float.
    const float s = halfangle < 1e-4f ? 1.0f - halfangle * halfangle / 6.0f : std::sin(halfangle) / halfangle;
    return {std::cos(halfangle), v.x * s, v.y * s, v.z * s};
}

vec3 quat_log(quat q) {
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
        a = 0.5f - t2 * (1.0f / 24.0f - t2 * (1.0f / 720.0f - t2 / 40320.0f));
        b = 1.0f / 6.0f - t2 * (1.0f / 120.0f - t2 * (1.0f / 5040.0f - t2 / 362880.0f));
        return;
    }
    a = 2.0f * sin_half * sin_half / t2;  // (1 - cos theta) / theta^2
    b = (theta - sin_theta) / (t2 * theta);
}

vec3 so3_left_jacobian_mul(vec3 phi, vec3 v) {
    const float t2 = dot(phi, phi);
    float a, b;
    if (t2 < 0.09f) {
        so3_left_jacobian_coeffs(t2, 0.0f, 0.0f, 0.0f, a, b);
    } else {
        const float theta = std::sqrt(t2);
        so3_left_jacobian_coeffs(t2, theta, std::sin(0.5f * theta), std::sin(theta), a, b);
    }
    const vec3 pv = cross(phi, v);
    return v + a * pv + b * cross(phi, pv);
}

float so3_left_jacobian_inv_coeff(float t2) {
    if (t2 < 0.25f)  // theta < 0.5
        return 1.0f / 12.0f + t2 * (1.0f / 720.0f + t2 * (1.0f / 30240.0f + t2 / 1209600.0f));
    // (1 - (theta/2) cot(theta/2)) / theta^2; singular only at theta = 2 pi.
    const float h = 0.5f * std::sqrt(t2);
    return (1.0f - h * std::cos(h) / std::sin(h)) / t2;
}

vec3 so3_left_jacobian_inv_mul(vec3 phi, vec3 v) {
    const float c = so3_left_jacobian_inv_coeff(dot(phi, phi));
    const vec3 pv = cross(phi, v);
    return v - 0.5f * pv + c * cross(phi, pv);
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
