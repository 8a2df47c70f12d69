// Looping on real clips (walk, run, dance) and on built-in motion, every method and root mode.
//
// Seam checks, in character space (joint positions relative to the ground-level root, metres):
//  - first and last frame equal within 1e-4 m / 1e-4 rad for methods whose offsets end exactly
//    (all but Spring, whose residual is recorded);
//  - velocity continuous: the velocity change across the seam may not exceed twice the largest
//    change over the two frames on either side of it, plus 2 cm/s. Mocap is noisy (its own
//    99th-percentile frame-to-frame velocity change is 0.7-3 m/s on these clips), so comparing
//    the seam with its neighbours is what tells a discontinuity from ordinary motion; the
//    unlooped clips exceed this by 0.2-7 m/s, which the test also asserts;
//  - the character root's velocity (Accumulate) continuous in its own frame within 2 cm/s and
//    0.03 rad/s: the residue of the discrete (second-order one-sided) velocity estimates.
#include <gtest/gtest.h>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/looping.h>
#include <kinesync/common/anim/ops_sample.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"

using namespace ks;
using namespace ks::test;

namespace {

constexpr LoopMethod kMethods[] = {LoopMethod::Spring, LoopMethod::Cubic, LoopMethod::Linear, LoopMethod::Softfade};
constexpr RootMode kRoots[] = {RootMode::Accumulate, RootMode::Loop, RootMode::Fix};

void expect_first_equals_last(const Clip& c, float tol_m, float tol_rad, const std::string& what, double* worst = nullptr) {
    double w = 0;
    for (int j = 1; j < c.joints(); ++j) {
        const float dp = length(c.pos(c.frames - 1, j) - c.pos(0, j)) * c.metres_per_unit;
        const float dr = length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(c.rot(c.frames - 1, j), c.rot(0, j)))));
        w = std::max({w, double(dp), double(dr)});
        if (tol_m > 0) {
            EXPECT_LE(dp, tol_m) << what << " joint " << c.skeleton.names[size_t(j)];
            EXPECT_LE(dr, tol_rad) << what << " joint " << c.skeleton.names[size_t(j)];
        }
    }
    if (worst) *worst = w;
}

void check_clip(const Clip& clip, const std::string& label, bool expect_raw_discontinuity) {
    const SeamReport raw = measure_seam(clip);
    if (expect_raw_discontinuity) {
        EXPECT_GT(raw.vel_excess_mps + raw.root_vel_mps, 0.1f) << label << ": the unlooped clip should show its seam";
    }
    for (LoopMethod m : kMethods) {
        for (RootMode r : kRoots) {
            LoopOptions o;
            o.method = m;
            o.root = r;
            const Clip looped = make_loop(clip, o);
            const std::string what = label + " " + loop_method_name(m) + "/" + root_mode_name(r);
            ASSERT_EQ(looped.frames, clip.frames);
            for (int f = 0; f < looped.frames; ++f)
                for (int j = 0; j < looped.joints(); ++j) ASSERT_TRUE(isfinite(looped.pos(f, j)) && isfinite(looped.rot(f, j))) << what;
            const SeamReport s = measure_seam(looped);
            if (m == LoopMethod::Spring) {
                double residual = 0;
                expect_first_equals_last(looped, 0, 0, what, &residual);
                record_figure("loop spring residual (max m or rad), " + label, residual);
            } else {
                expect_first_equals_last(looped, 1e-4f, 1e-4f, what);
                EXPECT_LE(s.pos_m, 1e-4f) << what;
            }
            EXPECT_LE(s.vel_excess_mps, 0.02f) << what << " worst joint " << s.vel_joint;
            if (r == RootMode::Accumulate) {
                EXPECT_LE(s.root_vel_mps, 0.02f) << what;
                EXPECT_LE(s.root_turn_rads, 0.03f) << what;
            }
            if (r == RootMode::Fix) {
                // In place: the hips do not travel.
                EXPECT_LT(std::fabs(looped.pos(looped.frames / 2, 0).x), 1e-4f) << what;
                EXPECT_LT(std::fabs(looped.pos(looped.frames / 2, 0).z), 1e-4f) << what;
            }
            record_figure("loop seam vel jump m/s (" + std::string(loop_method_name(m)) + "), " + label, s.vel_mps);
        }
    }
    record_figure("loop seam vel jump m/s (raw), " + label, raw.vel_mps);
    record_figure("loop seam pos jump m (raw), " + label, raw.pos_m);
}

}  // namespace

TEST(Looping, SharedWalkRunDance) {
    KS_REQUIRE_MOCAP();
    struct Item {
        const char* file;
        int skip;
        const char* label;
    };
    for (const Item& it : {Item{"cmu_02_01_walk.bvh", 0, "walk"}, Item{"cmu_35_24_run_jog.bvh", 1, "run"},
                           Item{"cmu_05_20_dance_leaps.bvh", 1, "dance"}, Item{"cmu_05_11_dance_pirouette_daz.bvh", 1, "pirouette"}}) {
        BvhOptions bo;
        bo.skip_frames = it.skip;
        check_clip(load_bvh(mocap_path(it.file), bo).clip, it.label, true);
    }
}

TEST(Looping, BuiltinMotion) {
    for (const auto& c : builtin_clips()) check_clip(c, c.name, false);
}

TEST(Looping, AccumulatedRootKeepsTravellingWithContinuousVelocity) {
    KS_REQUIRE_MOCAP();
    const Clip walk = load_bvh(mocap_path("cmu_02_01_walk.bvh")).clip;
    const Clip looped = make_loop(walk, {});
    const float m = walk.metres_per_unit;
    // The root still travels about as far as the original (~3.6 m per loop per the README).
    const float travel = length(vec3{looped.pos(looped.frames - 1, 0).x - looped.pos(0, 0).x, 0,
                                     looped.pos(looped.frames - 1, 0).z - looped.pos(0, 0).z}) * m;
    EXPECT_GT(travel, 3.0f);
    EXPECT_LT(travel, 4.2f);
    // Loop mode returns the root to where it started.
    LoopOptions o;
    o.root = RootMode::Loop;
    const Clip closed = make_loop(walk, o);
    EXPECT_LT(length(closed.pos(closed.frames - 1, 0) - closed.pos(0, 0)) * m, 1e-4f);
}

TEST(Looping, OptionsParseAndRejectShortClips) {
    LoopMethod m;
    RootMode r;
    EXPECT_TRUE(loop_method_from_name("softfade", m));
    EXPECT_EQ(m, LoopMethod::Softfade);
    EXPECT_FALSE(loop_method_from_name("bogus", m));
    EXPECT_TRUE(root_mode_from_name("fix", r));
    EXPECT_EQ(r, RootMode::Fix);
    Clip tiny = builtin_clip("walk");
    tiny.resize(2);
    EXPECT_THROW(make_loop(tiny, {}), std::invalid_argument);
}

TEST(Looping, LoopedClipPlaysSeamlesslyUnderLoopSampling) {
    // Wrap::Loop sampling of a looped clip: pose just before the end equals pose just after the
    // start (non-root joints).
    const Clip c = make_loop(builtin_clip("run"), {});
    Pose a(c.joints()), b(c.joints());
    op_sample_cubic(a, c, double(c.duration()) - 1e-6, Wrap::Loop);
    op_sample_cubic(b, c, 1e-6, Wrap::Loop);
    for (size_t j = 1; j < size_t(c.joints()); ++j) {
        EXPECT_LT(length(a.pos[j] - b.pos[j]), 1e-4f);
        EXPECT_GT(std::fabs(quat_dot(a.rot[j], b.rot[j])), 1 - 1e-6f);
        EXPECT_LT(length(a.ang[j] - b.ang[j]), 1e-2f * (1 + length(a.ang[j])));
    }
}
