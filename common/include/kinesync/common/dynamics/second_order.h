#pragma once
// Second-order dynamics (t3ssel8r, "Giving Personality to Procedural Animations using Math"):
//
//     y + k1 y' + k2 y'' = x + k3 x'
//
// parameterised by the natural frequency f (Hz), the damping ratio zeta and the initial response
// r: k1 = zeta / (pi f), k2 = 1 / (2 pi f)^2, k3 = r zeta / (2 pi f). zeta = 0 oscillates forever,
// zeta < 1 overshoots, zeta >= 1 settles without vibrating; r = 0 starts slowly, r > 0 reacts at
// once, r > 1 overshoots, r < 0 anticipates (first moves away).
//
// Integrated by semi-implicit Euler (position first, then velocity with the new position). That
// update is only stable for T < T_crit = sqrt(4 k2 + k1^2) - k1, so a frame-time spike can blow it
// up; the stability modes guard against that:
//   SubStep  - split a long step into sub-steps of at most T_crit / 2 (input interpolated);
//   ClampK2  - raise k2 to max(k2, T^2/2 + T k1/2, T k1) for that step (slower, never unstable,
//              and free of the period-2 jitter negative eigenvalues give);
//   PoleZero - per-step k1, k2 chosen so the discrete poles equal the exact continuous ones
//              (cos for zeta < 1, cosh for zeta > 1, the critically damped case included),
//              falling back to ClampK2 when w T < zeta (overdamped and fine-stepped);
//   ClampK2 and PoleZero also apply the momentum guard (sod_velocity_guard) when k2 rises;
//   None     - the naive update, for comparison only.
// The input's velocity x' is used when the caller knows it (snapshots carry velocities) and
// estimated as (x - x_prev) / T otherwise.

#include <kinesync/common/math/quat.h>

namespace ks {

struct SodParams {
    float f = 2.0f;     // natural frequency, Hz
    float zeta = 1.0f;  // damping ratio
    float r = 0.0f;     // initial response
};

struct SodCoeffs {
    float k1, k2, k3;
};

enum class SodStability { None, SubStep, ClampK2, PoleZero };

SodCoeffs sod_coefficients(const SodParams& p);
float sod_critical_timestep(const SodCoeffs& c);  // sqrt(4 k2 + k1^2) - k1
const char* sod_stability_name(SodStability m);
// Parses "none", "substep", "clamp", "polezero"; returns false on an unknown name.
bool sod_stability_from_name(const char* name, SodStability& out);

// Per-step integration plan: the k1, k2 to use and how many sub-steps of T / steps.
struct SodStep {
    float k1, k2;
    int steps;
};
SodStep sod_plan_step(const SodCoeffs& c, SodStability mode, float T);

// The momentum guard. ClampK2 and PoleZero raise k2 (a heavier, slower system) on a step past
// T_crit. A semi-implicit step moves y by T * y' with the velocity the *lighter* system built up,
// which turns kinetic energy k2 y'^2 into a jump worth (T w)^2 times as much; repeated lag spikes
// then pump the filter until it diverges (measured: |y| ~ 1e7 for a +-1 input). So when a step's
// k2 is larger than the k2 the velocity state was built under, the velocity is first scaled by
// their ratio (momentum kept, energy can only fall); steps at a constant k2 are untouched.
inline float sod_velocity_guard(float k2_state, float k2_step) {
    return k2_state > 0.0f && k2_step > k2_state ? k2_state / k2_step : 1.0f;
}

// Scalar and vector filter. V is float or vec3.
template <typename V>
struct SecondOrder {
    SodParams params;
    SodStability mode = SodStability::PoleZero;
    V xp{};  // previous input
    V y{};   // output
    V yd{};  // output velocity
    float k2_state = 0.0f;  // the k2 the velocity state was built under (0: the nominal one)

    SecondOrder() = default;
    SecondOrder(const SodParams& p, V x0, SodStability m = SodStability::PoleZero) : params(p), mode(m) { reset(x0); }

    // Re-initialises the state at x with velocity xd (used at teleports: no blending across).
    void reset(V x, V xd = V{}) {
        xp = x;
        y = x;
        yd = xd;
        k2_state = 0.0f;
    }
    // One frame of duration T towards input x, whose velocity is estimated from the previous input.
    V update(float T, V x) {
        const V xd = T > 0.0f ? (x - xp) / T : V{};
        return update(T, x, xd);
    }
    // One frame with the input's velocity given.
    V update(float T, V x, V xd);
};

extern template struct SecondOrder<float>;
extern template struct SecondOrder<vec3>;

// Rotation filter: y is a rotation, yd its angular velocity (parent frame). The spring term is
// the hemisphere-corrected error Log(abs(x y^-1)), so it never takes the long way round, and the
// input's angular velocity (given or estimated) drives the k3 term.
struct SecondOrderQuat {
    SodParams params;
    SodStability mode = SodStability::PoleZero;
    quat xp{};
    quat y{};
    vec3 yd{};
    float k2_state = 0.0f;

    SecondOrderQuat() = default;
    SecondOrderQuat(const SodParams& p, quat x0, SodStability m = SodStability::PoleZero) : params(p), mode(m) {
        reset(x0);
    }
    void reset(quat x, vec3 xd = {}) {
        xp = x;
        y = x;
        yd = xd;
        k2_state = 0.0f;
    }
    quat update(float T, quat x) {
        const vec3 xd = T > 0.0f ? quat_differentiate_angular_velocity(x, xp, T) : vec3{};
        return update(T, x, xd);
    }
    quat update(float T, quat x, vec3 xd);
};

}  // namespace ks
