// Two-bone IK: the heel reaches the target, and the velocity obtained from two evaluations is
// within the bound its step gives: |error| <= (delta/2) |d2 theta/dt2| (first-order backward
// difference along straight input paths) + 1e-3 |w| + float rounding 4e-7/delta.
#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_ik.h>
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {
Skeleton leg() {
    Skeleton s;
    s.names = {"pelvis", "hip", "knee", "heel"};
    s.parents = {-1, 0, 1, 2};
    s.offsets = {{0, 1, 0}, {0.1f, -0.1f, 0}, {0, -0.45f, 0.06f}, {0, -0.42f, -0.05f}};
    return s;
}
Pose leg_pose(Rng& rng) {
    const Skeleton s = leg();
    Pose p(4);
    for (size_t i = 0; i < 4; ++i) {
        p.pos[i] = s.offsets[i];
        p.rot[i] = quat_from_scaled_angle_axis(rng.vec(-0.3f, 0.3f));
        p.vel[i] = i == 0 ? rng.vec(-1, 1) : vec3{};
        p.ang[i] = rng.vec(-1.5f, 1.5f);
    }
    return p;
}
}  // namespace

TEST(OpsIk, HeelReachesReachableTarget) {
    Rng rng(90);
    const Skeleton s = leg();
    for (int trial = 0; trial < 100; ++trial) {
        Pose local = leg_pose(rng), global(4);
        op_fk_static(global, local, s.parents);
        const vec3 target = global.pos[1] + normalize(rng.vec(-1, 1)) * rng.uniform(0.3f, 0.8f);
        op_two_bone_ik_static(local, global, 1, 2, 3, target);
        op_fk_static(global, local, s.parents);
        EXPECT_LT(length(global.pos[3] - target), 2e-4f) << trial;
        EXPECT_GT(std::fabs(quat_length(local.rot[1]) - 1.0f), -1e-6f);
    }
}

TEST(OpsIk, VelocityWithinTheBoundOfItsStep) {
    Rng rng(91);
    const Skeleton s = leg();
    for (float delta : {1e-3f, 1e-2f}) {
        double worst_rel = 0;
        for (int trial = 0; trial < 60; ++trial) {
            const Pose local = leg_pose(rng);
            Pose g(4);
            op_fk_static(g, local, s.parents);
            const vec3 target = g.pos[1] + normalize(rng.vec(-1, 1) + vec3{0, -2, 0}) * rng.uniform(0.5f, 0.75f);
            const vec3 target_vel = rng.vec(-1, 1);
            // Reference: the static IK along the same straight input paths, differenced centrally.
            auto ik_at = [&](float t) {
                Pose l(4), gl(4);
                op_integrate(l, local, t);
                op_fk_static(gl, l, s.parents);
                op_two_bone_ik_static(l, gl, 1, 2, 3, target + target_vel * t);
                return l;
            };
            // Curvature over the backward interval [-delta, 0], which is what the backward
            // difference's error is made of: x(0) - 2 x(-delta/2) + x(-delta), over (delta/2)^2.
            const float h = 1e-3f;
            const Pose p = ik_at(h), m = ik_at(-h), c = ik_at(0), mid = ik_at(-0.5f * delta), end = ik_at(-delta);
            Pose l = local, lp(4), gc(4), gp(4);
            op_two_bone_ik(l, lp, gc, gp, s.parents, 1, 2, 3, target, target_vel, delta);
            for (size_t j : {size_t(1), size_t(2)}) {
                const vec3 ref = quat_differentiate_angular_velocity(p.rot[j], m.rot[j], 2 * h);
                const vec3 acc = (quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(c.rot[j], mid.rot[j]))) -
                                  quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(mid.rot[j], end.rot[j])))) /
                                 (0.25f * delta * delta);
                const float bound = 0.5f * delta * length(acc) * 1.5f + 1e-3f * length(ref) + 4e-7f / delta + 2e-4f;
                const float err = length(l.ang[j] - ref);
                EXPECT_LE(err, bound) << "delta " << delta << " joint " << j << " |w| " << length(ref) << " |acc| " << length(acc);
                EXPECT_GT(std::fabs(quat_dot(l.rot[j], c.rot[j])), 1 - 1e-6f);
                if (length(ref) > 0.5f) worst_rel = std::max(worst_rel, double(err / length(ref)));
            }
        }
        record_figure("two_bone_ik worst rel ang error, |w| > 0.5 rad/s, delta=" + std::string(delta < 5e-3f ? "1e-3" : "1e-2") + " s", worst_rel);
    }
}
