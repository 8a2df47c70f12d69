#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include <kinesync/common/dynamics/springs.h>
#include "tests/support/synthetic.h"

using namespace ks;

TEST(Springs, HalflifeDampingRoundTripAndDamperHalves) {
    EXPECT_NEAR(damping_to_halflife(halflife_to_damping(0.3f)), 0.3f, 1e-4f);
    EXPECT_NEAR(damper_exact(0.0f, 1.0f, 0.2f, 0.2f), 0.5f, 1e-4f);
    EXPECT_NEAR(damper_decay_exact(8.0f, 0.1f, 0.3f), 1.0f, 1e-3f);
    // Exact: many small steps equal one big step.
    float x = 0.0f;
    for (int i = 0; i < 100; ++i) x = damper_exact(x, 1.0f, 0.2f, 0.003f);
    EXPECT_NEAR(x, damper_exact(0.0f, 1.0f, 0.2f, 0.3f), 1e-5f);
}

TEST(Springs, FastNegexpIsCloseButNotTheDefault) {
    float worst = 0;
    for (float x = 0; x <= 20; x += 0.001f) worst = std::max(worst, std::fabs(fast_negexp(x) - std::exp(-x)));
    EXPECT_LT(worst, 0.019f);  // the documented bound
    EXPECT_GT(worst, 0.018f);
    EXPECT_NE(fast_negexp(1.0f), std::exp(-1.0f));
    EXPECT_FLOAT_EQ(damper_decay_exact(1.0f, 0.5f, 1.0f, 0.0f), 0.25f);  // exact: two half-lives
}

TEST(Springs, ExactSpringMatchesFineNumericalIntegration) {
    // x'' = -d x' - (d/2)^2 (x - g), integrated with 1e-5 s semi-implicit Euler steps.
    for (float halflife : {0.05f, 0.2f, 1.0f}) {
        for (float v0 : {-3.0f, 0.0f, 5.0f}) {
            const float d = halflife_to_damping(halflife), k = d * d / 4.0f, goal = 2.0f;
            double xn = -1.0, vn = v0;
            float xe = -1.0f, ve = v0;
            const float frame = 1.0f / 30.0f;
            double worst = 0;
            for (int f = 0; f < 90; ++f) {
                for (int s = 0; s < 3333; ++s) {
                    const double h = frame / 3333.0;
                    vn += h * (-d * vn - k * (xn - goal));
                    xn += h * vn;
                }
                spring_critical_exact(xe, ve, goal, halflife, frame);
                worst = std::max(worst, std::fabs(xn - xe));
            }
            EXPECT_LT(worst, 2e-3 * (1 + std::fabs(v0) * halflife)) << "halflife " << halflife << " v0 " << v0;
        }
    }
}

TEST(Springs, QuaternionSpringTakesTheShortWay) {
    quat x = quat_from_angle_axis(kPi * 0.95f, {0, 1, 0});
    const quat goal = -quat{};  // identity, other hemisphere
    vec3 v{};
    float prev = kPi * 0.95f;
    for (int i = 0; i < 120; ++i) {
        spring_critical_exact(x, v, goal, 0.15f, 1.0f / 60.0f);
        const float angle = length(quat_to_scaled_angle_axis(quat_abs(x)));
        EXPECT_LE(angle, prev + 1e-4f);
        prev = angle;
    }
    EXPECT_LT(prev, 0.01f);
}

TEST(Springs, DecayedOffsetsEndAsPromisedAndRatesMatch) {
    const vec3 x{1, -2, 0.5f}, v{3, 0, -1};
    vec3 r0, r1, r;
    // Cubic: exact zero value and rate at the blend time; initial value and rate as given.
    EXPECT_LT(length(decayed_offset_cubic(x, v, 0.3f, 0.0f, r0) - x), 1e-6f);
    EXPECT_LT(length(r0 - v), 1e-5f);
    EXPECT_EQ(length(decayed_offset_cubic(x, v, 0.3f, 0.3f, r1)), 0.0f);
    EXPECT_EQ(length(r1), 0.0f);
    EXPECT_EQ(length(decayed_velocity_offset_cubic(v, 0.3f, 0.0f, r0)), 0.0f);
    EXPECT_LT(length(r0 - v), 1e-5f);
    EXPECT_EQ(length(decayed_velocity_offset_cubic(v, 0.3f, 0.4f, r1)), 0.0f);
    // Spring: starts at x with rate v, residual after 10 half-lives is tiny but not zero.
    EXPECT_LT(length(decayed_offset(x, v, 0.1f, 0.0f, r0) - x), 1e-6f);
    EXPECT_LT(length(r0 - v), 1e-5f);
    const float residual = length(decayed_offset(x, v, 0.1f, 1.0f, r));
    EXPECT_GT(residual, 0.0f);
    EXPECT_LT(residual, 1e-2f);
    // Rates are the derivatives of the offsets.
    const float h = 1e-3f;
    for (float t : {0.05f, 0.1f, 0.2f}) {
        vec3 a, b;
        const vec3 fd_c = (decayed_offset_cubic(x, v, 0.3f, t + h, a) - decayed_offset_cubic(x, v, 0.3f, t - h, b)) / (2 * h);
        decayed_offset_cubic(x, v, 0.3f, t, r);
        EXPECT_LT(length(fd_c - r), 1e-3f * (1 + length(r)));
        const vec3 fd_s = (decayed_offset(x, v, 0.1f, t + h, a) - decayed_offset(x, v, 0.1f, t - h, b)) / (2 * h);
        decayed_offset(x, v, 0.1f, t, r);
        EXPECT_LT(length(fd_s - r), 1e-3f * (1 + length(r)));
        const vec3 fd_f = (decayed_offset_softfade(x, 0.5f, 8.0f, t + h, a) - decayed_offset_softfade(x, 0.5f, 8.0f, t - h, b)) / (2 * h);
        decayed_offset_softfade(x, 0.5f, 8.0f, t, r);
        EXPECT_LT(length(fd_f - r), 1e-3f * (1 + length(r)));
    }
    // Softfade: ~1 at the start, ~0 at the end, slope -2 sigmoid(h) at zero.
    EXPECT_NEAR(softfade(0.0f, 10.0f), 1.0f, 1e-4f);
    EXPECT_NEAR(softfade(1.0f, 10.0f), 0.0f, 1e-4f);
    EXPECT_NEAR(softfade_grad_zero(10.0f), -2.0f * std::exp(10.0f) / (1 + std::exp(10.0f)), 1e-5f);
    EXPECT_TRUE(std::isfinite(softfade(-5.0f, 50.0f)));
}

namespace {

// RK4 of x'' + 2 zeta w x' + w^2 x = 0 in double with 1e-5 s steps (the last step shortened).
void rk4_damped(double w, double zeta, double t, double& x, double& v) {
    auto acc = [&](double xx, double vv) { return -2.0 * zeta * w * vv - w * w * xx; };
    const double h0 = 1e-5;
    double done = 0.0;
    while (done < t) {
        const double h = std::min(h0, t - done);
        const double k1x = v, k1v = acc(x, v);
        const double k2x = v + 0.5 * h * k1v, k2v = acc(x + 0.5 * h * k1x, v + 0.5 * h * k1v);
        const double k3x = v + 0.5 * h * k2v, k3v = acc(x + 0.5 * h * k2x, v + 0.5 * h * k2v);
        const double k4x = v + h * k3v, k4v = acc(x + h * k3x, v + h * k3v);
        x += h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x);
        v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v);
        done += h;
    }
}

// Compares the step's columns (responses to (x0, v0) = (1, 0) and (0, 1)) with RK4. The
// tolerance is relative to each entry's natural scale: x ~ 1 and v ~ w for the first column,
// x ~ 1 / w and v ~ 1 for the second (float rounding of the result is ~6e-8 of that).
void expect_step_matches_rk4(float omega, float zeta, float dt, double tol) {
    const DampedStep s = damped_decay_step(omega, zeta, dt);
    const double w = omega;
    double x = 1, v = 0;
    rk4_damped(omega, zeta, dt, x, v);
    EXPECT_NEAR(s.xx, x, tol) << "zeta " << zeta << " omega " << omega << " dt " << dt;
    EXPECT_NEAR(s.vx, v, tol * w) << "zeta " << zeta << " omega " << omega << " dt " << dt;
    x = 0, v = 1;
    rk4_damped(omega, zeta, dt, x, v);
    EXPECT_NEAR(s.xv, x, tol / w) << "zeta " << zeta << " omega " << omega << " dt " << dt;
    EXPECT_NEAR(s.vv, v, tol) << "zeta " << zeta << " omega " << omega << " dt " << dt;
}

}  // namespace

TEST(Springs, DampedDecayStepMatchesFineNumericalIntegration) {
    int checked = 0;
    for (float zeta : {0.0f, 0.3f, 0.99f, 1.0f, 1.0002f, 1.01f, 2.5f}) {
        for (float omega : {0.5f, 4.0f, 18.0f, 60.0f}) {
            for (float dt : {1.0f / 240.0f, 1.0f / 60.0f, 0.1f, 0.7f}) {
                expect_step_matches_rk4(omega, zeta, dt, 2e-6);
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 7 * 4 * 4);
    // Near critical (|zeta - 1| < 1e-4) the step uses the zeta = 1 formula and is only ~5e-5
    // accurate: see DampedDecayStepIsAccurateNearCritical. Checked here at that level.
    for (float zeta : {1.00005f, 0.99995f})
        for (float omega : {0.5f, 4.0f, 18.0f, 60.0f})
            for (float dt : {1.0f / 60.0f, 0.1f, 0.7f}) expect_step_matches_rk4(omega, zeta, dt, 1e-4);
}

// Disabled: fails on e445fc4. damped_decay_step (common/src/dynamics/springs.cpp, the branch
// `std::fabs(z - 1.0) < 1e-4`) uses the exactly critical solution for every zeta within 1e-4 of 1,
// ignoring zeta - 1 altogether (it is first order in it): e.g. omega 4, zeta 1.00005, dt 0.5 gives
// xx 0.40600586 (the zeta = 1 value) where the exact value is 0.40602388, and the entries jump by
// up to ~4e-5 where zeta crosses 1 +- 1e-4 (vs ~1e-7 float accuracy elsewhere).
TEST(Springs, DampedDecayStepIsAccurateNearCritical) {
    for (float zeta = 0.9998f; zeta <= 1.0002f; zeta += 0.00001f)
        for (float omega : {3.0f, 37.7f})
            for (float dt : {1.0f / 60.0f, 0.2f}) expect_step_matches_rk4(omega, zeta, dt, 2e-6);
}

TEST(Springs, DampedDecayStepIsASemigroup) {
    // Exact over any dt: step(dt1) then step(dt2) is step(dt1 + dt2), as a matrix product.
    for (float zeta : {0.3f, 1.0f, 1.00005f, 2.5f}) {
        for (float omega : {1.0f, 7.0f, 40.0f}) {
            for (auto [dt1, dt2] : {std::pair{0.004f, 0.013f}, std::pair{1.0f / 60.0f, 1.0f / 60.0f}, std::pair{0.05f, 0.3f},
                                    std::pair{0.2f, 0.0f}}) {
                const DampedStep a = damped_decay_step(omega, zeta, dt1), b = damped_decay_step(omega, zeta, dt2);
                const DampedStep c = damped_decay_step(omega, zeta, dt1 + dt2);
                // [b] * [a]
                const float xx = b.xx * a.xx + b.xv * a.vx, xv = b.xx * a.xv + b.xv * a.vv;
                const float vx = b.vx * a.xx + b.vv * a.vx, vv = b.vx * a.xv + b.vv * a.vv;
                const float w = omega;
                const std::string where = std::string("zeta ") + std::to_string(zeta) + " omega " + std::to_string(omega) +
                                          std::string(" dt ") + std::to_string(dt1) + " + " + std::to_string(dt2);
                EXPECT_NEAR(xx, c.xx, 1e-6f) << where;
                EXPECT_NEAR(xv, c.xv, 1e-6f / w) << where;
                EXPECT_NEAR(vx, c.vx, 1e-6f * w) << where;
                EXPECT_NEAR(vv, c.vv, 1e-6f) << where;
            }
        }
    }
    // Many small steps applied to a state equal one big step.
    for (float zeta : {0.3f, 1.0f, 2.5f}) {
        float x = 0.7f, v = -2.0f;
        const DampedStep s = damped_decay_step(9.0f, zeta, 0.01f);
        for (int i = 0; i < 50; ++i) {
            const float x0 = x;
            x = s.xx * x0 + s.xv * v;
            v = s.vx * x0 + s.vv * v;
        }
        const DampedStep big = damped_decay_step(9.0f, zeta, 0.5f);
        EXPECT_NEAR(x, big.xx * 0.7f + big.xv * -2.0f, 2e-6f) << zeta;
        EXPECT_NEAR(v, big.vx * 0.7f + big.vv * -2.0f, 2e-5f) << zeta;
    }
}

TEST(Springs, DampedDecayStepWithoutSpringIsFreeMotion) {
    for (float zeta : {0.0f, 1.0f, 2.5f}) {
        for (float dt : {0.0f, 0.01f, 0.5f, 3.0f}) {
            const DampedStep s = damped_decay_step(0.0f, zeta, dt);
            EXPECT_EQ(s.xx, 1.0f);
            EXPECT_EQ(s.xv, dt) << "x += v dt";
            EXPECT_EQ(s.vx, 0.0f);
            EXPECT_EQ(s.vv, 1.0f);
        }
    }
    // dt = 0 is the identity for any spring.
    const DampedStep id = damped_decay_step(25.0f, 0.7f, 0.0f);
    EXPECT_EQ(id.xx, 1.0f);
    EXPECT_EQ(id.xv, 0.0f);
    EXPECT_EQ(id.vx, 0.0f);
    EXPECT_EQ(id.vv, 1.0f);
}
