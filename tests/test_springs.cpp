#include <gtest/gtest.h>

#include "common/dynamics/springs.h"
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
