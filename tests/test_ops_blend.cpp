#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {
// A random pose whose rotations are within 160 degrees of `near`'s: slerp_shortest switches sides
// at 180 degrees (a real discontinuity), which a finite difference must not straddle.
Pose random_pose_within(const Pose& near, Rng& rng) {
    Pose p = random_pose(near.size(), rng);
    for (size_t j = 0; j < size_t(p.size()); ++j) {
        const vec3 v = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(p.rot[j], near.rot[j])));
        if (length(v) > 2.8f) p.rot[j] = quat_mul(quat_from_scaled_angle_axis(normalize(v) * 2.8f), near.rot[j]);
    }
    return p;
}
}  // namespace

TEST(OpsBlend, StaticAndMovingWeightMatchFiniteDifference) {
    Rng rng(40);
    for (int trial = 0; trial < 30; ++trial) {
        const Pose lhs = random_pose(16, rng), rhs = random_pose_within(lhs, rng);
        Pose l(16), r(16);
        const float a0 = rng.uniform(0.05f, 0.95f), da = rng.uniform(-3, 3);
        expect_velocities_match_fd("blend_static", [&](float t, Pose& out) {
            op_integrate(l, lhs, t);
            op_integrate(r, rhs, t);
            op_blend_static(out, l, r, a0);
        }, 16);
        expect_velocities_match_fd("blend", [&](float t, Pose& out) {
            op_integrate(l, lhs, t);
            op_integrate(r, rhs, t);
            op_blend(out, l, r, a0 + da * t, da);
        }, 16);
        std::vector<quat> dirs(16);
        for (size_t j = 0; j < 16; ++j) dirs[j] = quat_abs(quat_mul_inv(rhs.rot[j], lhs.rot[j]));
        expect_velocities_match_fd("blend_via", [&](float t, Pose& out) {
            std::vector<quat> d = dirs;
            op_integrate(l, lhs, t);
            op_integrate(r, rhs, t);
            op_blend_via(out, l, r, d, a0 + da * t, da);
        }, 16);
    }
}

TEST(OpsBlend, PublishedWeightedSumIsMeasurablyOff) {
    // The exact derivative matters: the published lerp(w_l, w_r, a) + da * u is percent-level off
    // for poses far apart, while ours matches the finite difference (checked above).
    Rng rng(41);
    const Pose lhs = random_pose(64, rng), rhs = random_pose(64, rng);
    Pose out(64), l(64), r(64), p(64), m(64), fd(64);
    const float a = 0.4f, da = 1.5f, h = 1e-3f;
    auto eval = [&](float t, Pose& o) {
        op_integrate(l, lhs, t);
        op_integrate(r, rhs, t);
        op_blend(o, l, r, a + da * t, da);
    };
    eval(0, out);
    eval(h, p);
    eval(-h, m);
    op_finite_diff_central(fd, p, m, h);
    double worst_published = 0;
    for (size_t j = 0; j < 64; ++j) {
        const vec3 u = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(rhs.rot[j], lhs.rot[j])));
        const vec3 published = lerp(lhs.ang[j], rhs.ang[j], a) + u * da;
        worst_published = std::max(worst_published, double(length(published - fd.ang[j]) / length(fd.ang[j])));
    }
    EXPECT_GT(worst_published, 0.02);
}

TEST(OpsBlend, EndpointsAndSmoothstep) {
    Rng rng(42);
    const Pose lhs = random_pose(5, rng), rhs = random_pose(5, rng);
    Pose out(5);
    op_blend_static(out, lhs, rhs, 0.0f);
    for (size_t j = 0; j < 5; ++j) EXPECT_LT(length(out.ang[j] - lhs.ang[j]), 1e-4f);
    op_blend_static(out, lhs, rhs, 1.0f);
    for (size_t j = 0; j < 5; ++j) {
        EXPECT_LT(length(out.ang[j] - rhs.ang[j]), 1e-4f);
        EXPECT_GT(std::fabs(quat_dot(out.rot[j], rhs.rot[j])), 1 - 1e-6f);
    }
    EXPECT_FLOAT_EQ(smoothstep_blend_alpha(0.1f, 0.2f), 0.5f);
    EXPECT_FLOAT_EQ(smoothstep_blend_alpha_vel(0.1f, 0.2f), 1.5f / 0.2f);
    EXPECT_EQ(smoothstep_blend_alpha_vel(0.3f, 0.2f), 0.0f);
}

TEST(OpsBlend, SharedClipsBlendThenFkMatchesFiniteDifference) {
    KS_REQUIRE_MOCAP();
    const Clip& walk = shared_clip("cmu_02_01_walk.bvh");
    const Clip& run = shared_clip("cmu_35_24_run_jog.bvh");
    const Clip& dance = shared_clip("cmu_05_20_dance_leaps.bvh");
    ASSERT_EQ(walk.joints(), run.joints());
    const int n = walk.joints();
    Pose a(n), b(n), blended(n);
    const float h = walk.frame_dt / 32.0f;
    for (const Clip* other : {&run, &dance}) {
        for (int k = 0; k < 12; ++k) {
            const double ta = double(3.5f + 20.0f * float(k)) * walk.frame_dt, tb = double(4.5f + 9.0f * float(k)) * other->frame_dt;
            const float a0 = 0.1f + 0.07f * float(k), da = 2.0f;
            expect_velocities_match_fd("mocap blend+fk", [&](float t, Pose& out) {
                op_sample_cubic(a, walk, ta + t);
                op_sample_cubic(b, *other, tb + t);
                op_blend(blended, a, b, a0 + da * t, da);
                op_fk(out, blended, walk.skeleton.parents);
            }, n, h);
        }
    }
}

TEST(OpsBlendVia, KeepsItsSideAcrossTheFlipWithExactVelocity) {
    // Two rotations 180 degrees apart (about Y) moving so the shortest arc flips at t = 0. Once a
    // blend has chosen a side, blend_via keeps it and its velocity stays exact through the flip.
    Pose lhs(1), rhs(1), l(1), r(1), out(1);
    lhs.ang[0] = {0, 0.5f, 0};
    rhs.rot[0] = quat_from_angle_axis(kPi, {0, 1, 0});
    rhs.ang[0] = {0.1f, -0.5f, 0.2f};
    std::vector<quat> dirs = {quat_from_angle_axis(kPi - 0.01f, {0, 1, 0})};  // side chosen earlier
    expect_velocities_match_fd("blend_via across flip", [&](float t, Pose& o) {
        std::vector<quat> d = dirs;
        op_integrate(l, lhs, t);
        op_integrate(r, rhs, t);
        op_blend_via(o, l, r, d, 0.4f + 0.5f * t, 0.5f);
    }, 1);
}

TEST(OpsBlend, ValuesOnlyPathGivesTheSameValues) {
    // op_blend_values (fused slerp: one atan2, one sincos) against op_blend's values, random
    // poses with non-uniform scales, weights in [-0.25, 1.25]: rotations within 2e-6 (chordal),
    // positions and scales within 1e-6 relative.
    ks::test::Rng rng(23);
    double worst_rot = 0, worst_lin = 0;
    for (int k = 0; k < 200; ++k) {
        const Pose a = ks::test::random_pose(40, rng), b = ks::test::random_pose(40, rng);
        Pose full(40), values(40);
        const float alpha = rng.uniform(-0.25f, 1.25f);
        op_blend(full, a, b, alpha, 0.3f);
        op_blend_values(values, a, b, alpha);
        for (size_t i = 0; i < 40; ++i) {
            worst_rot = std::max(worst_rot, double(quat_length(quat_abs(quat_mul_inv(full.rot[i], values.rot[i])) - quat{})));
            worst_lin = std::max(worst_lin, double(length(full.pos[i] - values.pos[i]) / (1.0f + length(full.pos[i]))));
            worst_lin = std::max(worst_lin, double(length(full.scl[i] - values.scl[i]) / length(full.scl[i])));
        }
    }
    EXPECT_LT(worst_rot, 2e-6);
    EXPECT_LT(worst_lin, 1e-6);
}
