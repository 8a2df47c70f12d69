#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/common/dynamics/springs.h>
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

// ---- Spring inertialization: PoseOffset, op_offset_capture / op_offset_decay / op_offset_apply ----

namespace {

// The rotation angle of b * a^-1 (shortest way), radians.
float rotation_step_angle(quat a, quat b) { return length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(b, a)))); }

std::vector<float> random_omegas(int n, Rng& rng, float lo, float hi) {
    std::vector<float> w(static_cast<size_t>(n));
    for (float& x : w) x = rng.uniform(lo, hi);
    return w;
}

}  // namespace

TEST(OpsInertialize, OffsetCaptureThenApplyReproducesTheSource) {
    Rng rng(70);
    for (int trial = 0; trial < 50; ++trial) {
        const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
        PoseOffset offset;
        offset.resize(16);
        Pose out(16);
        op_offset_capture(offset, src, dst);
        op_offset_apply(out, offset, dst);
        for (size_t j = 0; j < 16; ++j) {
            EXPECT_LT(length(out.pos[j] - src.pos[j]), 1e-5f) << "trial " << trial << " joint " << j;
            EXPECT_GT(std::fabs(quat_dot(out.rot[j], src.rot[j])), 1 - 1e-6f) << "trial " << trial << " joint " << j;
            EXPECT_LT(length(out.scl[j] - src.scl[j]), 1e-5f * length(src.scl[j])) << "trial " << trial << " joint " << j;
            EXPECT_LT(length(out.vel[j] - src.vel[j]), 1e-5f) << "trial " << trial << " joint " << j;
            EXPECT_LT(length(out.ang[j] - src.ang[j]), 2e-4f) << "trial " << trial << " joint " << j;
            EXPECT_LT(length(out.svl[j] - src.svl[j]), 1e-5f) << "trial " << trial << " joint " << j;
        }
    }
    // The rotation offset is the short way round (|x| <= pi) even when src and dst are stored on
    // opposite hemispheres.
    Pose src(1), dst(1), out(1);
    src.rot[0] = quat_from_angle_axis(kPi * 170 / 180, {0, 1, 0});
    dst.rot[0] = -quat{};
    PoseOffset offset;
    offset.resize(1);
    op_offset_capture(offset, src, dst);
    EXPECT_NEAR(length(offset.rot[0]), kPi * 170 / 180, 1e-5f);
    op_offset_apply(out, offset, dst);
    EXPECT_GT(std::fabs(quat_dot(out.rot[0], src.rot[0])), 1 - 1e-6f);
}

TEST(OpsInertialize, OffsetClearAndZeroOffsetIsTheIdentity) {
    Rng rng(71);
    const Pose src = random_pose(8, rng), dst = random_pose(8, rng);
    PoseOffset offset;
    offset.resize(8);
    op_offset_capture(offset, src, dst);
    offset.clear();
    for (size_t j = 0; j < 8; ++j)
        for (const auto* ch : {&offset.pos, &offset.vel, &offset.rot, &offset.ang, &offset.scl, &offset.svl})
            EXPECT_EQ(length((*ch)[j]), 0.0f);
    Pose out(8);
    op_offset_apply(out, offset, dst);
    for (size_t j = 0; j < 8; ++j) {
        EXPECT_EQ(out.pos[j].x, dst.pos[j].x);
        EXPECT_GT(std::fabs(quat_dot(out.rot[j], dst.rot[j])), 1 - 1e-6f);
        EXPECT_LT(length(out.scl[j] - dst.scl[j]), 1e-6f);
        EXPECT_LT(length(out.vel[j] - dst.vel[j]), 1e-7f);
        EXPECT_LT(length(out.ang[j] - dst.ang[j]), 1e-6f);
        EXPECT_LT(length(out.svl[j] - dst.svl[j]), 1e-7f);
    }
}

// Joints at rest take shortcuts (no trigonometry for a zero rotation offset or an unchanged
// rotation, one damped step per distinct frequency); each must give what the formulas give.
TEST(OpsInertialize, ShortcutsForJointsAtRestGiveTheFormulasResults) {
    Rng rng(74);
    Pose src = random_pose(5, rng), dst = random_pose(5, rng);
    src.rot[1] = dst.rot[1], src.ang[1] = dst.ang[1];  // joint 1: the same rotation and rate
    src.rot[2] = dst.rot[2];                            // joint 2: the same rotation, another rate
    src.scl[3] = dst.scl[3];
    PoseOffset offset;
    offset.resize(5);
    op_offset_capture(offset, src, dst);
    EXPECT_EQ(length(offset.rot[1]), 0.0f);
    EXPECT_EQ(length(offset.ang[1]), 0.0f);
    EXPECT_LT(length(offset.rot[2]), 1e-6f);
    EXPECT_LT(length(offset.ang[2] - (src.ang[2] - dst.ang[2])), 1e-5f) << "an offset in rate alone is kept";
    EXPECT_EQ(length(offset.scl[3]), 0.0f);
    // Applying: a zero rotation offset with a rate offset still adds the rate.
    offset.rot[2] = vec3{};
    Pose out(5);
    op_offset_apply(out, offset, dst);
    EXPECT_LT(length(out.ang[2] - (dst.ang[2] + offset.ang[2])), 1e-5f);
    EXPECT_GT(std::fabs(quat_dot(out.rot[2], dst.rot[2])), 1 - 1e-6f);
    EXPECT_EQ(out.ang[1].x, dst.ang[1].x);
    // Decay with repeated and returning frequencies: every joint its own step.
    const PoseOffset before = offset;
    const std::vector<float> omega = {5.0f, 5.0f, 1.0f, 5.0f, 1.0f};
    op_offset_decay(offset, omega, 0.8f, 0.04f);
    for (size_t j = 0; j < 5; ++j) {
        const DampedStep st = damped_decay_step(omega[j], 0.8f, 0.04f);
        EXPECT_LT(length(offset.pos[j] - (st.xx * before.pos[j] + st.xv * before.vel[j])), 1e-6f * (1 + length(before.pos[j]) + length(before.vel[j])))
            << "joint " << j;
    }
}

TEST(OpsInertialize, OffsetDecayIsTheDampedStepPerJoint) {
    // Each joint decays with its own omega, every channel with the same exact step.
    Rng rng(72);
    const Pose src = random_pose(6, rng), dst = random_pose(6, rng);
    PoseOffset offset;
    offset.resize(6);
    op_offset_capture(offset, src, dst);
    const PoseOffset before = offset;
    const std::vector<float> omega = {0.0f, 1.0f, 5.0f, 12.0f, 30.0f, 80.0f};
    const float zeta = 0.7f, dt = 0.05f;
    op_offset_decay(offset, omega, zeta, dt);
    for (size_t j = 0; j < 6; ++j) {
        const DampedStep s = damped_decay_step(omega[j], zeta, dt);
        auto check = [&](vec3 x0, vec3 v0, vec3 x, vec3 v, const char* what) {
            EXPECT_LT(length(x - (s.xx * x0 + s.xv * v0)), 1e-6f * (1 + length(x0) + length(v0))) << what << " joint " << j;
            EXPECT_LT(length(v - (s.vx * x0 + s.vv * v0)), 1e-6f * (1 + omega[j]) * (1 + length(x0) + length(v0)))
                << what << " joint " << j;
        };
        check(before.pos[j], before.vel[j], offset.pos[j], offset.vel[j], "pos");
        check(before.rot[j], before.ang[j], offset.rot[j], offset.ang[j], "rot");
        check(before.scl[j], before.svl[j], offset.scl[j], offset.svl[j], "scl");
    }
    // omega = 0: free motion of the offset.
    EXPECT_LT(length(offset.pos[0] - (before.pos[0] + before.vel[0] * dt)), 1e-6f);
    EXPECT_LT(length(offset.vel[0] - before.vel[0]), 1e-7f);
}

TEST(OpsInertialize, OffsetVelocitiesMatchFiniteDifferenceAsItDecays) {
    Rng rng(73);
    int evaluated = 0;
    for (int trial = 0; trial < 8; ++trial) {
        const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
        PoseOffset captured;
        captured.resize(16);
        op_offset_capture(captured, src, dst);
        const std::vector<float> omega = random_omegas(16, rng, 2.0f, 40.0f);
        for (float zeta : {0.5f, 1.0f, 2.0f}) {
            for (float t0 : {0.01f, 0.1f, 0.3f}) {
                Pose in(16);
                PoseOffset off;
                expect_velocities_match_fd(std::string("offset spring zeta ") + std::to_string(zeta), [&](float t, Pose& out) {
                    // The input moves along its own velocities; the offset decays from the capture (time 0).
                    op_integrate(in, dst, t0 + t);
                    off = captured;
                    op_offset_decay(off, omega, zeta, t0 + t);
                    op_offset_apply(out, off, in);
                }, 16);
                ++evaluated;
            }
        }
    }
    EXPECT_EQ(evaluated, 8 * 3 * 3);
}

TEST(OpsInertialize, OffsetVelocitiesMatchFiniteDifferenceStartingAtTheCapture) {
    // At the capture itself (t0 just after 0) the output moves as the source did: its analytic
    // velocity is the source's and the finite difference agrees.
    Rng rng(74);
    const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
    PoseOffset captured;
    captured.resize(16);
    op_offset_capture(captured, src, dst);
    const std::vector<float> omega = random_omegas(16, rng, 2.0f, 40.0f);
    Pose in(16), out(16);
    PoseOffset off = captured;
    op_offset_decay(off, omega, 1.0f, 0.0f);
    op_offset_apply(out, off, dst);
    for (size_t j = 0; j < 16; ++j) EXPECT_LT(length(out.ang[j] - src.ang[j]), 2e-4f) << j;
    expect_velocities_match_fd("offset spring at capture", [&](float t, Pose& o) {
        op_integrate(in, dst, 0.005f + t);
        off = captured;
        op_offset_decay(off, omega, 1.0f, 0.005f + t);
        op_offset_apply(o, off, in);
    }, 16);
}

TEST(OpsInertialize, OffsetRotationPassingPiStaysContinuous) {
    // A 3 rad rotation offset whose rate pushes it further: with zeta = 1 and a small omega the
    // rotation vector grows past pi before it turns back. Kept as a vector (never re-wrapped), the
    // output rotation moves continuously: each 1/60 s step turns it by no more than its angular
    // velocity allows, and it comes back to the input the way it went out.
    const vec3 axis = normalize(vec3{0.3f, 1.0f, -0.2f});
    Pose src(1), dst(1), in(1), out(1), prev(1);
    dst.rot[0] = quat_from_angle_axis(0.4f, normalize(vec3{1, 0, 1}));
    dst.ang[0] = {0.2f, -0.1f, 0.3f};
    src.rot[0] = quat_mul(quat_from_angle_axis(3.0f, axis), dst.rot[0]);
    src.ang[0] = axis * 8.0f + quat_mul_vec3(quat_from_angle_axis(3.0f, axis), dst.ang[0]);
    PoseOffset captured, off;
    captured.resize(1);
    op_offset_capture(captured, src, dst);
    PoseOffset stepped = captured;  // decayed frame by frame, as a renderer does
    Pose out_stepped(1);
    ASSERT_NEAR(length(captured.rot[0]), 3.0f, 1e-4f);
    ASSERT_GT(dot(captured.ang[0], captured.rot[0]), 0.0f) << "the rate pushes the angle further";
    const std::vector<float> omega = {1.5f};
    const float dt = 1.0f / 60.0f;
    float max_angle = 0, worst_excess = 0;
    int steps = 0;
    for (int k = 0; k <= 600; ++k) {
        const float t = float(k) * dt;
        op_integrate(in, dst, t);
        off = captured;
        op_offset_decay(off, omega, 1.0f, t);
        op_offset_apply(out, off, in);
        max_angle = std::max(max_angle, length(off.rot[0]));
        if (k > 0) op_offset_decay(stepped, omega, 1.0f, dt);
        op_offset_apply(out_stepped, stepped, in);
        // Frame by frame is the same path as one step from the capture (the vector is not re-wrapped
        // at pi between frames, which would send it back the other way round).
        EXPECT_LT(length(stepped.rot[0] - off.rot[0]), 1e-4f) << "step " << k;
        EXPECT_GT(std::fabs(quat_dot(out_stepped.rot[0], out.rot[0])), 1 - 1e-6f) << "step " << k;
        if (k > 0) {
            // The angle turned in the step, against what the angular velocities at its ends allow
            // (the speed varies smoothly: 10 % of slack plus float noise).
            const float turned = rotation_step_angle(prev.rot[0], out.rot[0]);
            const float allowed = 1.1f * std::max(length(prev.ang[0]), length(out.ang[0])) * dt + 1e-4f;
            worst_excess = std::max(worst_excess, turned - allowed);
            EXPECT_LE(turned, allowed) << "step " << k << " offset angle " << length(off.rot[0]);
            // And the finite difference over the step points the way the analytic velocity does.
            const vec3 fd = quat_differentiate_angular_velocity(out.rot[0], prev.rot[0], dt);
            const vec3 mid = 0.5f * (prev.ang[0] + out.ang[0]);
            EXPECT_LT(length(fd - mid), 0.05f * length(mid) + 0.02f) << "step " << k;
            ++steps;
        }
        prev = out;
    }
    EXPECT_EQ(steps, 600);
    EXPECT_GT(max_angle, kPi + 0.2f) << "the offset really went past pi";
    // Ten seconds later it has decayed back to the input, by unwinding (not by a jump).
    EXPECT_LT(length(off.rot[0]), 1e-3f);
    EXPECT_GT(std::fabs(quat_dot(out.rot[0], in.rot[0])), 1 - 1e-6f);
}

TEST(OpsInertialize, CriticallyDampedOffsetDecaysToZero) {
    Rng rng(75);
    const Pose src = random_pose(16, rng), dst = random_pose(16, rng);
    PoseOffset offset;
    offset.resize(16);
    op_offset_capture(offset, src, dst);
    const std::vector<float> omega = random_omegas(16, rng, 4.0f, 30.0f);
    // Many half-lives of the slowest joint (w = 4: e^{-wt}(1 + wt) halves in ~0.42 s), in 1/60 s frames.
    PoseOffset stepped = offset;
    const int frames = 60 * 8;
    for (int k = 0; k < frames; ++k) op_offset_decay(stepped, omega, 1.0f, 1.0f / 60.0f);
    PoseOffset once = offset;
    op_offset_decay(once, omega, 1.0f, float(frames) / 60.0f);
    for (size_t j = 0; j < 16; ++j) {
        for (const PoseOffset* o : {&stepped, &once}) {
            EXPECT_LT(length(o->pos[j]), 1e-5f) << j;
            EXPECT_LT(length(o->vel[j]), 1e-4f) << j;
            EXPECT_LT(length(o->rot[j]), 1e-5f) << j;
            EXPECT_LT(length(o->ang[j]), 1e-4f) << j;
            EXPECT_LT(length(o->scl[j]), 1e-5f) << j;
            EXPECT_LT(length(o->svl[j]), 1e-4f) << j;
        }
    }
    Pose in(16), out(16);
    op_integrate(in, dst, float(frames) / 60.0f);
    op_offset_apply(out, stepped, in);
    for (size_t j = 0; j < 16; ++j) {
        EXPECT_LT(length(out.pos[j] - in.pos[j]), 1e-5f);
        EXPECT_GT(std::fabs(quat_dot(out.rot[j], in.rot[j])), 1 - 1e-6f);
        EXPECT_LT(length(out.ang[j] - in.ang[j]), 1e-4f);
    }
    // Halfway through it has not: the test is not vacuous, and the decay is monotone for zeta = 1
    // from a pure displacement (no overshoot through zero).
    Pose a(1), b(1);
    a.pos[0] = {0.3f, 0, 0};
    PoseOffset single;
    single.resize(1);
    op_offset_capture(single, a, b);
    const std::vector<float> w1 = {6.0f};
    float prev = 0.3f;
    for (int k = 0; k < 120; ++k) {
        op_offset_decay(single, w1, 1.0f, 1.0f / 60.0f);
        EXPECT_LE(single.pos[0].x, prev + 1e-7f);
        EXPECT_GE(single.pos[0].x, 0.0f);
        prev = single.pos[0].x;
    }
    EXPECT_NEAR(single.pos[0].x, 0.3f * std::exp(-12.0f) * 13.0f, 1e-6f);
}
