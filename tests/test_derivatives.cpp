#include <gtest/gtest.h>

#include "common/math/derivatives.h"
#include "tests/support/synthetic.h"

using namespace ks;
using ks::test::Rng;

TEST(Derivatives, ScalarAndVectorHelpersMatchFiniteDifference) {
    Rng rng(20);
    const float h = 1e-3f;
    for (int i = 0; i < 100; ++i) {
        const vec3 v = rng.vec(-1, 1), dv = rng.vec(-1, 1), w = rng.vec(-1, 1), dw = rng.vec(-1, 1);
        const float x = rng.uniform(0.5f, 2.0f), dx = rng.uniform(-1, 1);
        EXPECT_NEAR(sqrt_dx(x, dx), (std::sqrt(x + dx * h) - std::sqrt(x - dx * h)) / (2 * h), 1e-3);
        EXPECT_NEAR(dot_dx(v, dv, w, dw), (dot(v + dv * h, w + dw * h) - dot(v - dv * h, w - dw * h)) / (2 * h), 1e-3);
        const vec3 cfd = (cross(v + dv * h, w + dw * h) - cross(v - dv * h, w - dw * h)) / (2 * h);
        EXPECT_LT(length(cross_dx(v, dv, w, dw) - cfd), 1e-3f);
        if (length(v) < 0.2f) continue;
        const vec3 nfd = (normalize(v + dv * h) - normalize(v - dv * h)) / (2 * h);
        EXPECT_LT(length(normalize_dx(v, dv) - nfd), 1e-3f * (1 + length(nfd)));
    }
}

TEST(Derivatives, QuaternionHelpersMatchFiniteDifference) {
    Rng rng(21);
    const float h = 1e-3f;
    for (int i = 0; i < 100; ++i) {
        const quat q = rng.rotation() * 1.7f;  // not unit
        const quat dq{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
        const quat nfd = (quat_normalize(q + dq * h) - quat_normalize(q - dq * h)) / (2 * h);
        const quat an = quat_normalize_dx(q, dq);
        EXPECT_LT(quat_length(an - nfd), 1e-3f * (1 + quat_length(nfd)));

        const vec3 p = rng.vec(-1, 1), dp = rng.vec(-1, 1), r = rng.vec(-1, 1), dr = rng.vec(-1, 1);
        if (length(p) < 0.2f || length(r) < 0.2f || dot(normalize(p), normalize(r)) < -0.9f) continue;
        const quat bfd = (quat_between(p + dp * h, r + dr * h) - quat_between(p - dp * h, r - dr * h)) / (2 * h);
        const quat ban = quat_between_dx(p, dp, r, dr);
        EXPECT_LT(quat_length(ban - bfd), 1e-3f * (1 + quat_length(bfd)));

        // delta <-> angular velocity round trip, and against a rotation moving at w.
        const quat u = rng.rotation();
        const vec3 w = rng.vec(-3, 3);
        EXPECT_LT(length(quat_delta_to_angular_velocity(u, quat_angular_velocity_to_delta(u, w)) - w), 1e-5f);
        const quat ufd = (quat_mul(quat_from_scaled_angle_axis(w * h), u) - quat_mul(quat_from_scaled_angle_axis(-w * h), u)) / (2 * h);
        EXPECT_LT(length(quat_delta_to_angular_velocity(u, ufd) - w), 1e-3f * length(w) + 1e-4f);
    }
}
