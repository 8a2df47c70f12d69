#include <gtest/gtest.h>

#include "common/anim/ops_sample.h"
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {

// Times in the middle part of frame intervals, so t +- h stays inside one interval.
std::vector<double> interior_times(const Clip& clip, int count, unsigned seed, int first_frame = 1) {
    Rng rng(seed);
    std::vector<double> ts;
    for (int i = 0; i < count; ++i) {
        const int f = first_frame + int(rng.gen() % unsigned(clip.frames - 2 - first_frame));
        ts.push_back((double(f) + double(rng.uniform(0.2f, 0.8f))) * double(clip.frame_dt));
    }
    return ts;
}

void check_sampling(const Clip& clip, const std::string& label, int count, int first_frame) {
    const float h = clip.frame_dt / 32.0f;
    for (double t0 : interior_times(clip, count, 7, first_frame)) {
        expect_velocities_match_fd(label + "sample_linear",
                                   [&](float t, Pose& out) { op_sample_linear(out, clip, t0 + t); }, clip.joints(), h);
        expect_velocities_match_fd(label + "sample_cubic",
                                   [&](float t, Pose& out) { op_sample_cubic(out, clip, t0 + t); }, clip.joints(), h);
    }
}

}  // namespace

TEST(OpsSample, SyntheticVelocitiesMatchFiniteDifference) {
    const Clip clip = synthetic_clip(12, 90, 30.0f, 1);
    check_sampling(clip, "", 40, 0);
}

TEST(OpsSample, LinearHitsFramesAndCubicIsSmoothAcrossFrames) {
    const Clip clip = synthetic_clip(8, 60, 30.0f, 2);
    Pose a(clip.joints()), b(clip.joints());
    for (int f = 1; f < clip.frames - 2; ++f) {
        const float t = float(f) * clip.frame_dt;
        op_sample_linear(a, clip, t);
        op_sample_cubic(b, clip, t);
        for (int j = 0; j < clip.joints(); ++j) {
            EXPECT_LT(length(a.pos[size_t(j)] - clip.pos(f, j)), 1e-5f);
            EXPECT_GT(std::fabs(quat_dot(b.rot[size_t(j)], clip.rot(f, j))), 1 - 1e-6f);
        }
        // Cubic velocities just before and just after a frame agree (C1), linear ones jump.
        const float e = 1e-4f * clip.frame_dt;
        op_sample_cubic(a, clip, t - e);
        op_sample_cubic(b, clip, t + e);
        for (size_t j = 0; j < size_t(clip.joints()); ++j) {
            EXPECT_LT(length(a.vel[j] - b.vel[j]), 1e-3f * (1 + length(a.vel[j])));
            EXPECT_LT(length(a.ang[j] - b.ang[j]), 1e-3f * (1 + length(a.ang[j])));
            EXPECT_LT(length(a.svl[j] - b.svl[j]), 1e-3f * (1 + length(a.svl[j])));
        }
    }
}

TEST(OpsSample, ClampHoldsStillAndLoopWraps) {
    Clip clip = synthetic_clip(4, 31, 30.0f, 3);
    // Make it a loop: last frame equals the first.
    for (int j = 0; j < clip.joints(); ++j) {
        clip.pos(clip.frames - 1, j) = clip.pos(0, j);
        clip.rot(clip.frames - 1, j) = clip.rot(0, j);
        clip.scl(clip.frames - 1, j) = clip.scl(0, j);
    }
    Pose p(clip.joints()), q(clip.joints());
    op_sample_cubic(p, clip, clip.duration() + 1.0f);
    for (size_t j = 0; j < 4; ++j) {
        EXPECT_EQ(length(p.vel[j]), 0.0f);
        EXPECT_EQ(length(p.ang[j]), 0.0f);
    }
    // Looping: time and time + period give the same pose; velocities continuous across the seam.
    const float period = clip.duration();
    op_sample_cubic(p, clip, 0.3f, Wrap::Loop);
    op_sample_cubic(q, clip, 0.3f + 2 * period, Wrap::Loop);
    for (size_t j = 0; j < 4; ++j) EXPECT_LT(length(p.pos[j] - q.pos[j]), 1e-4f);
    const double e = 1e-7;  // the made-up seam has a large curvature jump: look very close
    op_sample_cubic(p, clip, double(period) - e, Wrap::Loop);
    op_sample_cubic(q, clip, double(period) + e, Wrap::Loop);
    for (size_t j = 0; j < 4; ++j) {
        EXPECT_LT(length(p.vel[j] - q.vel[j]), 1e-3f * (1 + length(p.vel[j])));
        EXPECT_LT(length(p.ang[j] - q.ang[j]), 1e-3f * (1 + length(p.ang[j])));
    }
    expect_velocities_match_fd("sample_cubic loop", [&](float t, Pose& out) { op_sample_cubic(out, clip, period * 0.5f + 0.3f * clip.frame_dt + t, Wrap::Loop); }, 4);
}

TEST(OpsSample, TimescaleScalesVelocities) {
    const Clip clip = synthetic_clip(6, 60, 30.0f, 4);
    const float speed = 1.7f, t0 = 0.61f;
    expect_velocities_match_fd("sample_cubic+timescale", [&](float t, Pose& out) {
        op_sample_cubic(out, clip, (t0 + t) * speed);
        op_timescale(out, speed);
    }, clip.joints());
}

TEST(OpsSample, SharedClipsVelocitiesMatchFiniteDifference) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : shared_clip_infos()) check_sampling(shared_clip(info.file), "mocap ", 25, 2);
}
