#include <kinesync/common/dynamics/springs.h>

#include <algorithm>
#include <cmath>

namespace ks {

namespace {
template <typename V>
void spring_step(V& x, V& v, V goal, float halflife, float dt) {
    const float y = halflife_to_damping(halflife) / 2.0f;
    const V j0 = x - goal;
    const V j1 = v + j0 * y;
    const float eydt = std::exp(-y * dt);
    x = (j0 + j1 * dt) * eydt + goal;
    v = (v - j1 * (y * dt)) * eydt;
}
}  // namespace

void spring_critical_exact(float& x, float& v, float goal, float halflife, float dt) {
    spring_step(x, v, goal, halflife, dt);
}
void spring_critical_exact(vec3& x, vec3& v, vec3 goal, float halflife, float dt) {
    spring_step(x, v, goal, halflife, dt);
}
void spring_critical_exact(quat& x, vec3& v, quat goal, float halflife, float dt) {
    vec3 e = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(x, goal)));
    spring_step(e, v, vec3{}, halflife, dt);
    x = quat_mul(quat_from_scaled_angle_axis(e), goal);
}

DampedStep damped_decay_step(float omega, float zeta, float dt) {
    const double w = std::max(0.0, double(omega)), z = std::max(0.0, double(zeta)), t = std::max(0.0, double(dt));
    DampedStep s;
    if (w == 0.0 || t == 0.0) {
        s.xv = float(t);  // no spring: free motion
        return s;
    }
    // One form for every zeta: with a = zeta w and q^2 = w^2 (zeta^2 - 1),
    // C = cosh(q t) and S = sinh(q t) / q (cos and sin / w_d when q^2 < 0, their series near
    // critical damping, so the result is continuous and exact to rounding as zeta crosses 1):
    // [x, v](t) = e^{-a t} [[C + a S, S], [-w^2 S, C - a S]] [x, v](0).
    const double a = z * w, q2 = w * w * (z * z - 1.0), u = q2 * t * t;
    double C, S;
    if (std::fabs(u) < 1e-4) {
        C = 1.0 + u / 2.0 + u * u / 24.0 + u * u * u / 720.0;
        S = t * (1.0 + u / 6.0 + u * u / 120.0 + u * u * u / 5040.0);
    } else if (q2 < 0.0) {
        const double wd = std::sqrt(-q2);
        C = std::cos(wd * t);
        S = std::sin(wd * t) / wd;
    } else {
        const double q = std::sqrt(q2);
        C = std::cosh(q * t);
        S = std::sinh(q * t) / q;
    }
    const double e = std::exp(-a * t);
    const double xx = e * (C + a * S), xv = e * S, vx = -e * w * w * S, vv = e * (C - a * S);
    s.xx = float(xx);
    s.xv = float(xv);
    s.vx = float(vx);
    s.vv = float(vv);
    return s;
}

vec3 decayed_offset(vec3 x, vec3 v, float halflife, float t, vec3& rate) {
    vec3 xx = x, vv = v;
    spring_step(xx, vv, vec3{}, halflife, t);
    rate = vv;
    return xx;
}

vec3 decayed_offset_cubic(vec3 x, vec3 v, float blendtime, float t, vec3& rate) {
    const float d = std::max(blendtime, 1e-8f);
    const float u = clampf(t / d, 0.0f, 1.0f);
    // a u^3 + b u^2 + c u + x with c = v d, b = -3x - 2c, a = 2x + c
    const vec3 c = v * d, b = -3.0f * x - 2.0f * c, a = 2.0f * x + c;
    rate = (t >= d || t < 0.0f) ? vec3{} : (3.0f * a * u * u + 2.0f * b * u + c) / d;
    return a * (u * u * u) + b * (u * u) + c * u + x;
}

vec3 decayed_velocity_offset_cubic(vec3 v, float blendtime, float t, vec3& rate) {
    const float d = std::max(blendtime, 1e-8f);
    const float u = clampf(t / d, 0.0f, 1.0f);
    const vec3 c = v * d;  // c u^3 - 2 c u^2 + c u
    rate = (t >= d || t < 0.0f) ? vec3{} : (3.0f * c * u * u - 4.0f * c * u + c) / d;
    return c * (u * u * u) - 2.0f * c * (u * u) + c * u;
}

float softfade(float u, float hardness) {
    // log1p(exp(z)) / h, written to stay finite for large z.
    const float z = hardness - 2.0f * hardness * u;
    return (z > 20.0f ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z))) / hardness;
}

float softfade_dx(float u, float hardness) {
    const float z = hardness - 2.0f * hardness * u;
    return -2.0f / (1.0f + std::exp(-z));  // -2 * sigmoid(z)
}

vec3 decayed_offset_softfade(vec3 x, float duration, float hardness, float t, vec3& rate) {
    const float u = t / duration;
    rate = x * (softfade_dx(u, hardness) / duration);
    return x * softfade(u, hardness);
}

}  // namespace ks
