#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(OpsDeadBlend, ExtrapolateDecayedMatchesFiniteDifference) {
    Rng rng(70);
    const Pose in = random_pose(16, rng);
    for (float halflife : {0.05f, 0.2f, 1.0f, 100.0f}) {
        for (float t0 : {0.0f, 0.05f, 0.3f}) {
            expect_velocities_match_fd("extrapolate_decayed", [&](float t, Pose& out) {
                op_extrapolate_decayed(out, in, t0 + t, halflife);
            }, 16);
        }
    }
    // Velocity halves every half-life; a huge half-life is plain dead reckoning.
    Pose out(16);
    op_extrapolate_decayed(out, in, 0.2f, 0.2f);
    EXPECT_NEAR(length(out.vel[3]), 0.5f * length(in.vel[3]), 1e-4f);
    op_extrapolate_decayed(out, in, 0.1f, 1e6f);
    EXPECT_LT(length(out.pos[3] - (in.pos[3] + in.vel[3] * 0.1f)), 1e-5f);
}

TEST(OpsDeadBlend, BlendMatchesFiniteDifferenceAndHitsEnds) {
    Rng rng(71);
    for (int trial = 0; trial < 20; ++trial) {
        const Pose shown = random_pose(16, rng), input = random_pose(16, rng);
        Pose transition(16), ext(16), in(16), out(16);
        std::vector<quat> dirs(16);
        op_dead_blending_transition(transition, dirs, shown);
        const float duration = 0.25f, halflife = 0.1f;
        // Run the blend forward as a client would, updating the remembered paths each frame.
        for (int frame = 0; frame <= 15; ++frame) {
            const float bt = float(frame) / 60.0f;
            SCOPED_TRACE(std::string("blend frame ") + std::to_string(frame));
            // The blend weight's second derivative jumps where it is clamped (frames 0 and 15), so
            // a central difference straddling those instants is not a valid reference there.
            const std::vector<quat> dirs_now = dirs;
            if (frame > 0 && frame < 15) {
                expect_velocities_match_fd("dead_blending", [&](float t, Pose& o) {
                    std::vector<quat> d = dirs_now;
                    op_integrate(in, input, bt + t);
                    op_dead_blending(o, ext, d, transition, in, halflife, bt + t, duration);
                }, 16);
            }
            op_integrate(in, input, bt);
            op_dead_blending(out, ext, dirs, transition, in, halflife, bt, duration);
            if (frame == 0) {
                for (size_t j = 0; j < 16; ++j) {
                    EXPECT_LT(length(out.pos[j] - shown.pos[j]), 1e-5f);
                    EXPECT_LT(length(out.vel[j] - shown.vel[j]), 1e-4f);
                    EXPECT_LT(length(out.ang[j] - shown.ang[j]), 1e-4f);
                }
            }
        }
        op_integrate(in, input, duration);
        op_dead_blending(out, ext, dirs, transition, in, halflife, duration, duration);
        for (size_t j = 0; j < 16; ++j) {
            EXPECT_GT(std::fabs(quat_dot(out.rot[j], in.rot[j])), 1 - 1e-6f);
            EXPECT_LT(length(out.ang[j] - in.ang[j]), 1e-4f);
        }
    }
}

TEST(OpsDeadBlend, SharedClipsDeadBlendThenFkMatchesFiniteDifference) {
    KS_REQUIRE_MOCAP();
    const Clip& walk = shared_clip("cmu_02_01_walk.bvh");
    const Clip& dance = shared_clip("cmu_05_20_dance_leaps.bvh");
    const int n = walk.joints();
    Pose shown(n), transition(n), ext(n), in(n), local(n);
    std::vector<quat> dirs(static_cast<size_t>(n));
    const float h = walk.frame_dt / 32.0f;
    op_sample_cubic(shown, walk, 150.5f * walk.frame_dt);
    op_dead_blending_transition(transition, dirs, shown);
    const double t_dance = 300.5f * dance.frame_dt;
    for (float bt : {0.03f, 0.1f, 0.18f}) {
        const std::vector<quat> dirs_now = dirs;
        expect_velocities_match_fd("mocap dead_blending+fk", [&](float t, Pose& out) {
            std::vector<quat> d = dirs_now;
            op_sample_cubic(in, dance, t_dance + bt + t);
            op_dead_blending(local, ext, d, transition, in, 0.15f, bt + t, 0.25f);
            op_fk(out, local, walk.skeleton.parents);
        }, n, h);
        op_sample_cubic(in, dance, t_dance + bt);
        op_dead_blending(local, ext, dirs, transition, in, 0.15f, bt, 0.25f);
    }
}
