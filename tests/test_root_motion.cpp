#include <gtest/gtest.h>

#include <kinesync/common/anim/root_motion.h>
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(RootMotion, ExtractionVelocitiesMatchFiniteDifference) {
    Rng rng(100);
    for (int trial = 0; trial < 100; ++trial) {
        kform hips;
        hips.pos = rng.vec(-5, 5);
        hips.rot = quat_mul(quat_from_angle_axis(rng.uniform(-3, 3), {0, 1, 0}), quat_from_scaled_angle_axis(rng.vec(-0.4f, 0.4f)));
        hips.vel = rng.vec(-3, 3);
        hips.ang = rng.vec(-2, 2);
        expect_velocities_match_fd("root_motion_extract", [&](float t, Pose& out) {
            out.set(0, root_motion_extract(kform_integrate(hips, t)));
        }, 1);
        const kform r = root_motion_extract(hips);
        EXPECT_EQ(r.pos.y, 0.0f);
        const vec3 f = quat_mul_vec3(hips.rot, {0, 0, 1}), rf = quat_mul_vec3(r.rot, {0, 0, 1});
        EXPECT_GT(dot(normalize(vec3{f.x, 0, f.z}), rf), 1 - 1e-5f) << "root faces the hips' heading";
    }
}

TEST(RootMotion, RemovedHipsRecomposeWithRoot) {
    Rng rng(101);
    Pose local = random_pose(3, rng, false);
    const kform hips = local.get(0);
    const kform root = root_motion_extract(hips);
    op_root_motion_remove(local, root);
    const kform back = kform_mul(root, local.get(0));
    EXPECT_LT(length(back.pos - hips.pos), 1e-5f);
    EXPECT_LT(length(back.vel - hips.vel), 1e-4f);
    EXPECT_LT(length(back.ang - hips.ang), 1e-4f);
}

TEST(RootMotion, AccumulationIsContinuousAcrossALoopWrap) {
    // A clip root walking along +Z at 1.5 m/s for 2 s, turning slowly; when the clip wraps, the
    // world root must continue from where it was, with the same velocity.
    auto clip_root = [](float t) {
        kform k;
        k.pos = {0.1f * t, 0, 1.5f * t};
        k.vel = {0.1f, 0, 1.5f};
        k.rot = quat_from_angle_axis(0.2f * t, {0, 1, 0});
        k.ang = {0, 0.2f, 0};
        return k;
    };
    kform anchor = root_motion_anchor(kform{}, clip_root(0));
    const float dt = 1.0f / 60.0f, period = 2.0f;
    kform prev = root_motion_apply(anchor, clip_root(0));
    float clip_t = 0;
    for (int i = 1; i < 400; ++i) {
        float next_t = clip_t + dt;
        kform world;
        if (next_t >= period) {
            // Where the world root would be at the end of the clip, then re-anchor at the start.
            const kform end_world = root_motion_apply(anchor, clip_root(period));
            next_t -= period;
            anchor = root_motion_anchor(end_world, clip_root(0));
        }
        world = root_motion_apply(anchor, clip_root(next_t));
        const float step = length(world.pos - prev.pos);
        EXPECT_NEAR(step, length(prev.vel) * dt, 2e-3f) << "frame " << i;
        EXPECT_NEAR(length(world.vel), length(clip_root(next_t).vel), 1e-4f);
        prev = world;
        clip_t = next_t;
    }
    EXPECT_GT(length(prev.pos), 8.0f) << "the character keeps travelling across loops";
}
