#include <gtest/gtest.h>

#include "common/anim/ops_fk.h"
#include "common/anim/ops_inertialize.h"
#include "common/anim/ops_sample.h"
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(OpsInertialize, VelocitiesMatchFiniteDifferenceThroughTheBlend) {
    Rng rng(60);
    for (int trial = 0; trial < 20; ++trial) {
        const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
        Pose offset(16), in(16);
        op_inertialize_transition(offset, src, dst);
        const float duration = 0.3f;
        for (float bt : {0.01f, 0.1f, 0.2f, 0.29f}) {
            expect_velocities_match_fd("inertialize", [&](float t, Pose& out) {
                op_integrate(in, dst, bt + t);
                op_inertialize(out, offset, in, bt + t, duration);
            }, 16);
        }
    }
}

TEST(OpsInertialize, StartsAtSourceAndEndsExactlyAtDestination) {
    Rng rng(61);
    const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
    Pose offset(16), out(16);
    op_inertialize_transition(offset, src, dst);
    op_inertialize(out, offset, dst, 0.0f, 0.25f);
    for (size_t j = 0; j < 16; ++j) {
        EXPECT_LT(length(out.pos[j] - src.pos[j]), 1e-5f);
        EXPECT_GT(std::fabs(quat_dot(out.rot[j], src.rot[j])), 1 - 1e-6f);
        EXPECT_LT(length(out.scl[j] - src.scl[j]), 1e-5f);
        EXPECT_LT(length(out.vel[j] - src.vel[j]), 1e-5f);
        EXPECT_LT(length(out.ang[j] - src.ang[j]), 1e-4f) << "velocity continuous at the transition";
        EXPECT_LT(length(out.svl[j] - src.svl[j]), 1e-5f);
    }
    Pose moved(16);
    op_integrate(moved, dst, 0.25f);
    op_inertialize(out, offset, moved, 0.25f, 0.25f);
    for (size_t j = 0; j < 16; ++j) {
        EXPECT_EQ(out.pos[j].x, moved.pos[j].x);
        EXPECT_GT(std::fabs(quat_dot(out.rot[j], moved.rot[j])), 1 - 1e-6f);
        EXPECT_LT(length(out.ang[j] - moved.ang[j]), 1e-6f);
    }
}

TEST(OpsInertialize, OffsetTakesTheShortWayRound) {
    // src and dst 170 degrees apart, stored on opposite hemispheres: without quat_abs the
    // offset would be the 190-degree rotation and the blend would spin the long way.
    Pose src(1), dst(1), offset(1), out(1);
    src.rot[0] = quat_from_angle_axis(kPi * 170 / 180, {0, 1, 0});
    dst.rot[0] = -quat{};  // identity on the w < 0 hemisphere
    op_inertialize_transition(offset, src, dst);
    EXPECT_LE(length(quat_to_scaled_angle_axis(quat_abs(offset.rot[0]))), kPi);
    float prev = 170.0f;
    for (int i = 1; i <= 20; ++i) {
        op_inertialize(out, offset, dst, 0.3f * float(i) / 20.0f, 0.3f);
        const vec3 f = quat_mul_vec3(out.rot[0], {0, 0, 1});
        const float yaw = std::atan2(f.x, f.z) * 180 / kPi;
        EXPECT_LE(yaw, prev + 1e-3f) << "monotonic decay from 170 to 0 degrees";
        EXPECT_GE(yaw, -1e-3f);
        prev = yaw;
    }
}

TEST(OpsInertialize, SharedClipsTransitionThenFkMatchesFiniteDifference) {
    KS_REQUIRE_MOCAP();
    const Clip& walk = shared_clip("cmu_02_01_walk.bvh");
    const Clip& run = shared_clip("cmu_35_24_run_jog.bvh");
    const int n = walk.joints();
    Pose src(n), dst(n), offset(n), local(n);
    const float h = walk.frame_dt / 32.0f;
    op_sample_cubic(src, walk, 100.5f * walk.frame_dt);
    const double t_run = 20.5f * run.frame_dt;
    op_sample_cubic(dst, run, t_run);
    op_inertialize_transition(offset, src, dst);
    for (float bt : {0.02f, 0.1f, 0.2f}) {
        expect_velocities_match_fd("mocap inertialize+fk", [&](float t, Pose& out) {
            op_sample_cubic(dst, run, t_run + bt + t);
            op_inertialize(local, offset, dst, bt + t, 0.25f);
            op_fk(out, local, walk.skeleton.parents);
        }, n, h);
    }
}
