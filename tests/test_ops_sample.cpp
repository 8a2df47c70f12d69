#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_sample.h>
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
    const SampleCache cache = build_sample_cache(clip);
    for (double t0 : interior_times(clip, count, 7, first_frame)) {
        expect_velocities_match_fd(label + "sample_linear_cached",
                                   [&](float t, Pose& out) { op_sample_linear(out, clip, cache, t0 + t); }, clip.joints(), h);
        expect_velocities_match_fd(label + "sample_cubic_cached",
                                   [&](float t, Pose& out) { op_sample_cubic(out, clip, cache, t0 + t); }, clip.joints(), h);
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

namespace {
// The cached sampler against the plain one over a whole clip, both wraps, random times (also
// outside the clip and at exact frames): values within float rounding, velocities within 1e-5 of
// their size plus 1e-5 absolute. (The plain sampler computes sin/cos of the half angle and of the
// angle separately, the cached one derives the second pair from the first, and a clamped end's zero
// rotation vector is exact instead of log(r r^-1); nothing else differs.)
void expect_cached_matches_plain(const Clip& clip, const std::string& label) {
    const SampleCache cache = build_sample_cache(clip);
    Rng rng(3);
    Pose a(clip.joints()), b(clip.joints()), v(clip.joints());
    double worst_rot = 0, worst_ang = 0, worst_pos = 0, worst_scl = 0;
    for (Wrap wrap : {Wrap::Clamp, Wrap::Loop})
        for (int i = 0; i < 300; ++i) {
            double t = double(rng.uniform(-0.2f, 1.2f)) * double(clip.duration());
            if (i % 10 == 0) t = double(i % clip.frames) * double(clip.frame_dt);  // on a frame
            if (i % 2) {
                op_sample_linear(a, clip, t, wrap);
                op_sample_linear(b, clip, cache, t, wrap);
                op_sample_linear_values(v, clip, cache, t, wrap);
            } else {
                op_sample_cubic(a, clip, t, wrap);
                op_sample_cubic(b, clip, cache, t, wrap);
                op_sample_cubic_values(v, clip, cache, t, wrap);
            }
            for (int j = 0; j < clip.joints(); ++j) {
                const size_t o = size_t(j);
                worst_pos = std::max(worst_pos, double(length(a.pos[o] - b.pos[o]) / (1.0f + length(a.pos[o]))));
                worst_rot = std::max(worst_rot, double(quat_length(quat_abs(quat_mul_inv(a.rot[o], b.rot[o])) - quat{})));
                worst_ang = std::max(worst_ang, double(length(a.ang[o] - b.ang[o]) / (1.0f + length(a.ang[o]))));
                worst_scl = std::max(worst_scl, double(length(a.scl[o] - b.scl[o]) + length(a.svl[o] - b.svl[o]) / (1.0f + length(a.svl[o]))));
                ASSERT_EQ(v.pos[o].x, b.pos[o].x) << label;
                ASSERT_EQ(v.rot[o].w, b.rot[o].w) << label << " values-only path, same values";
            }
        }
    EXPECT_LT(worst_pos, 1e-6) << label;
    EXPECT_LT(worst_rot, 2e-6) << label;
    EXPECT_LT(worst_ang, 1e-5) << label;
    EXPECT_LT(worst_scl, 1e-5) << label;
    record_figure("sample_cached_vs_plain_rot " + label, worst_rot);
    record_figure("sample_cached_vs_plain_ang " + label, worst_ang);
}
}  // namespace

TEST(OpsSample, CachedSamplerMatchesThePlainOne) {
    expect_cached_matches_plain(synthetic_clip(12, 90, 30.0f, 1), "synthetic (animated scales)");
    expect_cached_matches_plain(synthetic_clip(66, 60, 60.0f, 5), "synthetic 66");
}

TEST(OpsSample, CachedSamplerMatchesThePlainOneOnSharedClips) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : shared_clip_infos()) expect_cached_matches_plain(shared_clip(info.file), info.file);
}

TEST(OpsSample, SampleCacheSizeIsWhatTheHeaderSays) {
    const Clip c = synthetic_clip(31, 343, 120.0f, 1);
    Clip unit = c;
    for (auto& s : unit.scl_) s = vec3{1, 1, 1};
    EXPECT_EQ(sample_cache_bytes(build_sample_cache(unit)), size_t(343) * 31 * 16 + 31);
    EXPECT_EQ(sample_cache_bytes(build_sample_cache(c)), size_t(343) * 31 * (16 + 12) + 31);
}
