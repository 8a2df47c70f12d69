#include <gtest/gtest.h>

#include "common/src/math/derivatives.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using ks::test::Rng;

TEST(Derivatives, ScalarAndVectorHelpersMatchFiniteDifference) {
    Rng rng(20);
    const float h = 1e-3f;
    for (int i = 0; i < 100; ++i) {
        const vec3 v = rng.vec(-1, 1), dv = rng.vec(-1, 1), w = rng.vec(-1, 1), dw = rng.vec(-1, 1);
        const float x = rng.uniform(0.5f, 2.0f), dx = rng.uniform(-1, 1);
        EXPECT_NEAR(sqrt_dx(x, dx), (std::sqrt(x + dx * h) - std::sqrt(x - dx * h)) / (2 * h), 1e-3);
        EXPECT_NEAR(dot_dx(v, dv, w, dw), (dot(v + dv * h, w + dw * h) - dot(v - dv * h, w - dw * h)) / (2 * h), 1e-3);
        const vec3 cfd = (cross(v + dv * h, w + dw * h) - cross(v - dv * h, w - dw * h)) / (2 * h);
        EXPECT_LT(length(cross_dx(v, dv, w, dw) - cfd), 1e-3f);
        if (length(v) < 0.2f) continue;
        const vec3 nfd = (normalize(v + dv * h) - normalize(v - dv * h)) / (2 * h);
        EXPECT_LT(length(normalize_dx(v, dv) - nfd), 1e-3f * (1 + length(nfd)));
    }
}

TEST(Derivatives, QuaternionHelpersMatchFiniteDifference) {
    Rng rng(21);
    const float h = 1e-3f;
    for (int i = 0; i < 100; ++i) {
        const quat q = rng.rotation() * 1.7f;  // not unit
        const quat dq{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
        const quat nfd = (quat_normalize(q + dq * h) - quat_normalize(q - dq * h)) / (2 * h);
        const quat an = quat_normalize_dx(q, dq);
        EXPECT_LT(quat_length(an - nfd), 1e-3f * (1 + quat_length(nfd)));

        const vec3 p = rng.vec(-1, 1), dp = rng.vec(-1, 1), r = rng.vec(-1, 1), dr = rng.vec(-1, 1);
        if (length(p) < 0.2f || length(r) < 0.2f || dot(normalize(p), normalize(r)) < -0.9f) continue;
        const quat bfd = (quat_between(p + dp * h, r + dr * h) - quat_between(p - dp * h, r - dr * h)) / (2 * h);
        const quat ban = quat_between_dx(p, dp, r, dr);
        EXPECT_LT(quat_length(ban - bfd), 1e-3f * (1 + quat_length(bfd)));

        // delta <-> angular velocity round trip, and against a rotation moving at w.
        const quat u = rng.rotation();
        const vec3 w = rng.vec(-3, 3);
        EXPECT_LT(length(quat_delta_to_angular_velocity(u, quat_angular_velocity_to_delta(u, w)) - w), 1e-5f);
        const quat ufd = (quat_mul(quat_from_scaled_angle_axis(w * h), u) - quat_mul(quat_from_scaled_angle_axis(-w * h), u)) / (2 * h);
        EXPECT_LT(length(quat_delta_to_angular_velocity(u, ufd) - w), 1e-3f * length(w) + 1e-4f);
    }
}

namespace {
// The textbook chain the fused quat_slerp_path_kinematic replaces: log, J_l^-1, exp, J_l, each
// with its own trig calls.
quat slerp_path_kinematic_reference(quat q, vec3 wq, vec3 wp, quat path, float a, float da, vec3& w_out) {
    const vec3 u = quat_to_scaled_angle_axis(path);
    const vec3 w_path = wp - quat_mul_vec3(path, wq);
    const vec3 du = so3_left_jacobian_inv_mul(u, w_path);
    const vec3 phi = u * a;
    const quat rot_a = quat_from_scaled_angle_axis(phi);
    w_out = so3_left_jacobian_mul(phi, u * da + du * a) + quat_mul_vec3(rot_a, wq);
    return quat_mul(rot_a, q);
}
}  // namespace

TEST(Derivatives, FusedSlerpPathKinematicMatchesTheTextbookChain) {
    // Random rotations and velocities, paths on both hemispheres (slerp_via), tiny and near-pi
    // paths, weights in [-0.5, 1.5] with their rates. Bound: rotations within 2e-6 (chordal), angular
    // velocities within 2e-5 of their size (+1e-5): float rounding of differently ordered trig.
    Rng rng(17);
    double worst_rot = 0, worst_ang = 0;
    for (int i = 0; i < 20000; ++i) {
        const quat q = rng.rotation(), p = rng.rotation();
        quat path = quat_mul_inv(p, q);
        if (i % 3 == 0) path = quat_abs(path);
        if (i % 7 == 0) path = quat_normalize(quat{1.0f, rng.uniform(-1e-4f, 1e-4f), rng.uniform(-1e-4f, 1e-4f), 0.0f});
        if (i % 11 == 0) path = quat_normalize(quat{rng.uniform(-1e-3f, 1e-3f), 1.0f, rng.uniform(-1.0f, 1.0f), 0.2f});
        const vec3 wq = rng.vec(-5.0f, 5.0f), wp = rng.vec(-5.0f, 5.0f);
        const float a = rng.uniform(-0.5f, 1.5f), da = rng.uniform(-3.0f, 3.0f);
        // J_l(u)^-1 is singular at |u| = 2 pi (a path of w = -1): near it both forms are
        // ill-conditioned alike, so paths beyond 0.9 of that are not compared.
        if (std::atan2(length(quat_vec(path)), path.w) > 0.9f * 3.14159265f) continue;
        vec3 w_fused, w_ref;
        const quat r_fused = quat_slerp_path_kinematic(q, wq, wp, path, a, da, w_fused);
        const quat r_ref = slerp_path_kinematic_reference(q, wq, wp, path, a, da, w_ref);
        worst_rot = std::max(worst_rot, double(quat_length(quat_abs(quat_mul_inv(r_fused, r_ref)) - quat{})));
        const double e = double(length(w_fused - w_ref) / (1.0f + length(w_ref)));
        if (e > 1e-3) ADD_FAILURE() << i << " path " << path.w << " " << path.x << " " << path.y << " " << path.z << " a " << a << " da " << da
                                    << " fused " << w_fused.x << " " << w_fused.y << " " << w_fused.z << " ref " << w_ref.x << " " << w_ref.y << " " << w_ref.z;
        worst_ang = std::max(worst_ang, e);
    }
    EXPECT_LT(worst_rot, 2e-6);
    EXPECT_LT(worst_ang, 2e-5);
    test::record_figure("slerp_path_kinematic fused vs textbook: rot", worst_rot);
    test::record_figure("slerp_path_kinematic fused vs textbook: ang", worst_ang);
}
