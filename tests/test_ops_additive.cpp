#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_additive.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {
using AdditiveOp = void (*)(Pose&, const Pose&, float, float);

void check_additive(const char* name, AdditiveOp op, bool moving_weight, unsigned seed) {
    Rng rng(seed);
    for (int trial = 0; trial < 30; ++trial) {
        const Pose base = random_pose(16, rng), add = random_pose(16, rng);
        Pose a(16);
        const float w0 = rng.uniform(0.1f, 0.9f), dw = moving_weight ? rng.uniform(-2, 2) : 0.0f;
        expect_velocities_match_fd(name, [&](float t, Pose& out) {
            op_integrate(out, base, t);
            op_integrate(a, add, t);
            op(out, a, w0 + dw * t, dw);
        }, 16);
    }
}
}  // namespace

TEST(OpsAdditive, LeftStaticMatchesFiniteDifference) { check_additive("additive_static", op_additive, false, 50); }
TEST(OpsAdditive, LeftMovingMatchesFiniteDifference) { check_additive("additive", op_additive, true, 51); }
TEST(OpsAdditive, LocalStaticMatchesFiniteDifference) { check_additive("additive_local_static", op_additive_local, false, 52); }
TEST(OpsAdditive, LocalMovingMatchesFiniteDifference) { check_additive("additive_local", op_additive_local, true, 53); }

TEST(OpsAdditive, FullWeightComposesExactly) {
    Rng rng(54);
    const Pose base = random_pose(8, rng), add = random_pose(8, rng);
    Pose left = base, right = base;
    op_additive_static(left, add, 1.0f);
    op_additive_local_static(right, add, 1.0f);
    for (size_t j = 0; j < 8; ++j) {
        const quat a = quat_abs(add.rot[j]);
        EXPECT_GT(std::fabs(quat_dot(left.rot[j], quat_mul(a, base.rot[j]))), 1 - 1e-6f);
        EXPECT_GT(std::fabs(quat_dot(right.rot[j], quat_mul(base.rot[j], a))), 1 - 1e-6f);
        EXPECT_LT(length(left.pos[j] - (base.pos[j] + add.pos[j])), 1e-5f);
        EXPECT_LT(length(left.scl[j] - base.scl[j] * add.scl[j]), 1e-4f);
    }
}

TEST(OpsAdditive, SharedClipAdditiveThenFkMatchesFiniteDifference) {
    KS_REQUIRE_MOCAP();
    // An additive layer made from another clip's motion relative to its first frame.
    const Clip& walk = shared_clip("cmu_02_01_walk.bvh");
    const Clip& dance = shared_clip("cmu_05_20_dance_leaps.bvh");
    const int n = walk.joints();
    Pose base(n), add(n), layered(n);
    const float h = walk.frame_dt / 32.0f;
    for (int k = 0; k < 10; ++k) {
        const double tb = double(5.5f + 25.0f * float(k)) * walk.frame_dt, ta = double(50.5f + 80.0f * float(k)) * dance.frame_dt;
        for (bool local : {false, true}) {
            expect_velocities_match_fd(local ? "mocap additive_local+fk" : "mocap additive+fk", [&](float t, Pose& out) {
                op_sample_cubic(base, walk, tb + t);
                op_sample_cubic(add, dance, ta + t);
                for (size_t j = 0; j < size_t(n); ++j) add.pos[j] = add.pos[j] * 0.1f, add.vel[j] = add.vel[j] * 0.1f;
                (local ? op_additive_local : op_additive)(base, add, 0.3f + 0.5f * t, 0.5f);
                op_fk(out, base, walk.skeleton.parents);
            }, n, h);
        }
    }
}
