#include <kinesync/common/dynamics/second_order.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ks {

SodCoeffs sod_coefficients(const SodParams& p) {
    const float w = 2.0f * kPi * p.f;
    return {p.zeta / (kPi * p.f), 1.0f / (w * w), p.r * p.zeta / w};
}

float sod_critical_timestep(const SodCoeffs& c) { return std::sqrt(4.0f * c.k2 + c.k1 * c.k1) - c.k1; }

const char* sod_stability_name(SodStability m) {
    switch (m) {
        case SodStability::None: return "none";
        case SodStability::SubStep: return "substep";
        case SodStability::ClampK2: return "clamp";
        case SodStability::PoleZero: return "polezero";
    }
    return "?";
}

bool sod_stability_from_name(const char* name, SodStability& out) {
    for (SodStability m : {SodStability::None, SodStability::SubStep, SodStability::ClampK2, SodStability::PoleZero}) {
        if (std::strcmp(name, sod_stability_name(m)) == 0) {
            out = m;
            return true;
        }
    }
    return false;
}

namespace {
float clamped_k2(const SodCoeffs& c, float T) { return std::max({c.k2, T * T / 2.0f + T * c.k1 / 2.0f, T * c.k1}); }
}  // namespace

SodStep sod_plan_step(const SodCoeffs& c, SodStability mode, float T) {
    switch (mode) {
        case SodStability::None: return {c.k1, c.k2, 1};
        case SodStability::ClampK2: return {c.k1, clamped_k2(c, T), 1};
        case SodStability::SubStep: {
            const float limit = 0.5f * sod_critical_timestep(c);
            const int n = limit > 0.0f ? int(std::ceil(T / limit)) : 1;
            return {c.k1, c.k2, std::clamp(n, 1, 4096)};
        }
        case SodStability::PoleZero: {
            // k2 = 1/w^2 and k1 = 2 zeta / w, so w and zeta come back out of the coefficients.
            const float w = 1.0f / std::sqrt(c.k2);
            const float z = c.k1 * w / 2.0f;
            if (w * T < z) return {c.k1, clamped_k2(c, T), 1};
            const float d = w * std::sqrt(std::fabs(z * z - 1.0f));
            const float t1 = std::exp(-z * w * T);
            const float one_minus_t1 = -std::expm1(-z * w * T);
            // 1 + beta - alpha with beta = t1^2, alpha = 2 t1 cos(T d) (cosh for z > 1), written
            // without the cancellation that ruins it in float at small T.
            const float sh = z <= 1.0f ? std::sin(0.5f * T * d) : std::sinh(0.5f * T * d);
            const float denom = one_minus_t1 * one_minus_t1 + (z <= 1.0f ? 4.0f : -4.0f) * t1 * sh * sh;
            const float t2 = T / denom;
            return {one_minus_t1 * (1.0f + t1) * t2, T * t2, 1};
        }
    }
    return {c.k1, c.k2, 1};
}

namespace {

// The step plan both filters share. Guard only steps past T_crit: below it the pole-zero k2
// differs from nominal by O((wT)^2) and the plain update is stable.
template <typename D>
SodStep begin_update(const SodCoeffs& c, SodStability mode, float T, float& k2_state, D& yd) {
    const SodStep s = sod_plan_step(c, mode, T);
    const float k2_state_now = k2_state > 0.0f ? k2_state : c.k2;
    if (mode != SodStability::None && T > sod_critical_timestep(c)) yd = yd * sod_velocity_guard(k2_state_now, s.k2);
    k2_state = T > sod_critical_timestep(c) ? s.k2 : c.k2;
    return s;
}

}  // namespace

template <typename V>
V SecondOrder<V>::update(float T, V x, V xd) {
    if (T <= 0.0f) return y;
    const SodCoeffs c = sod_coefficients(params);
    const SodStep s = begin_update(c, mode, T, k2_state, yd);
    const float h = T / float(s.steps);
    for (int i = 1; i <= s.steps; ++i) {
        const V xi = xp + (x - xp) * (float(i) / float(s.steps));  // input interpolated over sub-steps
        y = y + yd * h;
        yd = yd + (xi + xd * c.k3 - y - yd * s.k1) * (h / s.k2);
    }
    xp = x;
    return y;
}

template struct SecondOrder<float>;
template struct SecondOrder<vec3>;

quat SecondOrderQuat::update(float T, quat x, vec3 xd) {
    if (T <= 0.0f) return y;
    const SodCoeffs c = sod_coefficients(params);
    const SodStep s = begin_update(c, mode, T, k2_state, yd);
    const float h = T / float(s.steps);
    for (int i = 1; i <= s.steps; ++i) {
        const quat xi = quat_slerp_shortest(xp, x, float(i) / float(s.steps));
        y = quat_normalize(quat_mul(quat_from_scaled_angle_axis(yd * h), y));
        const vec3 err = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(xi, y)));
        yd = yd + (err + xd * c.k3 - yd * s.k1) * (h / s.k2);
    }
    xp = x;
    return y;
}

}  // namespace ks
