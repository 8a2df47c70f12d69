#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_lookat.h>
#include <kinesync/common/anim/ops_sample.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {
Skeleton chain(int n) {
    Skeleton s;
    for (int i = 0; i < n; ++i) {
        s.names.push_back(std::string("c") + std::to_string(i));
        s.parents.push_back(i - 1);
        s.offsets.push_back({0, 0.3f, 0.05f});
    }
    return s;
}
}  // namespace

TEST(OpsLookat, VelocitiesMatchFiniteDifferenceAndJointFacesTarget) {
    Rng rng(80);
    const Skeleton skel = chain(6);
    const int head = 5;
    const vec3 fwd{0, 0, 1};
    for (int trial = 0; trial < 30; ++trial) {
        const Pose local = random_pose(6, rng);
        const vec3 target = rng.vec(-3, 3) + vec3{0, 0, 4}, target_vel = rng.vec(-2, 2);
        const float weight = trial % 2 ? 1.0f : 0.6f;
        Pose moved(6), global(6);
        expect_velocities_match_fd(weight == 1.0f ? "lookat+fk" : "lookat(weight)+fk", [&](float t, Pose& out) {
            op_integrate(moved, local, t);
            op_fk(global, moved, skel.parents);
            op_lookat(moved, global, head, target + target_vel * t, target_vel, fwd, weight);
            op_fk(out, moved, skel.parents);
        }, 6, 2.5e-4f);  // targets can pass close to the head: a small step keeps the reference's truncation error down
        if (weight == 1.0f) {
            moved = local;
            op_fk(global, moved, skel.parents);
            op_lookat(moved, global, head, target, target_vel, fwd);
            op_fk(global, moved, skel.parents);
            const vec3 facing = quat_mul_vec3(global.rot[size_t(head)], fwd);
            EXPECT_GT(dot(facing, normalize(target - global.pos[size_t(head)])), 1 - 1e-5f);
        }
    }
}

TEST(OpsLookat, SharedClipHeadTracksMovingTarget) {
    KS_REQUIRE_MOCAP();
    const Clip& walk = shared_clip("cmu_02_01_walk.bvh");
    const int head = walk.skeleton.find("Head");
    ASSERT_GE(head, 0);
    const int n = walk.joints();
    Pose local(n), global(n);
    const float h = walk.frame_dt / 32.0f;
    for (int k = 0; k < 10; ++k) {
        const double t0 = double(10.5f + 30.0f * float(k)) * walk.frame_dt;
        const vec3 target{20.0f * std::sin(float(k)), 30.0f, 40.0f}, target_vel{5.0f, -3.0f, 2.0f};
        expect_velocities_match_fd("mocap lookat+fk", [&](float t, Pose& out) {
            op_sample_cubic(local, walk, t0 + t);
            op_fk(global, local, walk.skeleton.parents);
            op_lookat(local, global, head, target + target_vel * t, target_vel, {0, 0, 1}, 0.7f);
            op_fk(out, local, walk.skeleton.parents);
        }, n, h);
    }
}
