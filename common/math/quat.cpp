#include "common/math/quat.h"

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

quat quat_slerp_shortest(quat q, quat p, float t) {
    const vec3 u = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(p, q)));
    return quat_mul(quat_from_scaled_angle_axis(u * t), q);
}

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

namespace {
// Coefficients of J_l(phi) = I + a [phi]x + b [phi]x^2, computed in double: the closed forms
// cancel catastrophically in float below ~0.05 rad.
void left_jacobian_coeffs(double theta, double& a, double& b) {
    if (theta < 1e-3) {
        const double t2 = theta * theta;
        a = 0.5 - t2 / 24.0;
        b = 1.0 / 6.0 - t2 / 120.0;
    } else {
        const double sh = std::sin(0.5 * theta);
        a = 2.0 * sh * sh / (theta * theta);                    // (1 - cos)/theta^2
        b = (theta - std::sin(theta)) / (theta * theta * theta);
    }
}
}  // namespace

vec3 so3_left_jacobian_mul(vec3 phi, vec3 v) {
    const double theta = std::sqrt(double(phi.x) * phi.x + double(phi.y) * phi.y + double(phi.z) * phi.z);
    double a, b;
    left_jacobian_coeffs(theta, a, b);
    const vec3 pv = cross(phi, v);
    return v + float(a) * pv + float(b) * cross(phi, pv);
}

vec3 so3_left_jacobian_inv_mul(vec3 phi, vec3 v) {
    const double theta = std::sqrt(double(phi.x) * phi.x + double(phi.y) * phi.y + double(phi.z) * phi.z);
    double c;
    if (theta < 1e-2) {
        const double t2 = theta * theta;
        c = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
    } else {
        // (1 - (theta/2) cot(theta/2)) / theta^2; singular only at theta = 2 pi.
        const double h = 0.5 * theta;
        c = (1.0 - h * std::cos(h) / std::sin(h)) / (theta * theta);
    }
    const vec3 pv = cross(phi, v);
    return v - 0.5f * pv + float(c) * cross(phi, pv);
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
