// kform algebra: every operation's velocities against a central finite difference of its own
// output with the operands moving along their velocities; non-unit, non-uniform, animated scale.
#include <gtest/gtest.h>

#include <kinesync/common/math/kform.h>
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using ks::test::Rng;

namespace {

kform random_kform(Rng& rng, bool uniform_scale = false) {
    kform k;
    k.pos = rng.vec(-2, 2);
    k.rot = rng.rotation();
    k.scl = uniform_scale ? vec3(rng.uniform(0.5f, 2)) : vec3{rng.uniform(0.5f, 2), rng.uniform(0.5f, 2), rng.uniform(0.5f, 2)};
    k.vel = rng.vec(-2, 2);
    k.ang = rng.vec(-3, 3);
    k.svl = uniform_scale ? vec3(rng.uniform(-0.5f, 0.5f)) : rng.vec(-0.5f, 0.5f);
    return k;
}

// Wraps a kform-valued function of time as a one-joint pose for the shared FD checker.
void check_kform_op(const std::string& name, const std::function<kform(float)>& f) {
    ks::test::expect_velocities_match_fd(name, [&](float t, Pose& out) { out.set(0, f(t)); }, 1);
}

void expect_kform_near(const kform& a, const kform& b, float tol) {
    EXPECT_LT(length(a.pos - b.pos), tol);
    EXPECT_GT(std::fabs(quat_dot(a.rot, b.rot)), 1.0f - tol);
    EXPECT_LT(length(a.scl - b.scl), tol);
    EXPECT_LT(length(a.vel - b.vel), tol * 10);
    EXPECT_LT(length(a.ang - b.ang), tol * 10);
    EXPECT_LT(length(a.svl - b.svl), tol * 10);
}

}  // namespace

TEST(Kform, MulDivInvVelocitiesMatchFiniteDifference) {
    Rng rng(10);
    for (int i = 0; i < 200; ++i) {
        const kform v = random_kform(rng), w = random_kform(rng);
        check_kform_op("kform_mul", [&](float t) { return kform_mul(kform_integrate(v, t), kform_integrate(w, t)); });
        check_kform_op("kform_div", [&](float t) { return kform_div(kform_integrate(v, t), kform_integrate(w, t)); });
        check_kform_op("kform_inv", [&](float t) { return kform_inv(kform_integrate(v, t)); });
    }
}

TEST(Kform, DivUndoesMulAndInvIsLeftInverse) {
    Rng rng(11);
    for (int i = 0; i < 200; ++i) {
        const kform v = random_kform(rng), w = random_kform(rng);
        expect_kform_near(kform_div(v, kform_mul(v, w)), w, 1e-4f);
        expect_kform_near(kform_mul(kform_inv(v), v), kform{}, 1e-4f);
        // With uniform scale the product is associative and inv is a two-sided inverse.
        const kform u = random_kform(rng, true);
        expect_kform_near(kform_mul(u, kform_inv(u)), kform{}, 1e-4f);
        expect_kform_near(kform_div(u, kform{}), kform_inv(u), 1e-4f);
    }
}

TEST(Kform, DivIgnoringParentScaleWouldBeWrong) {
    // Guard against the published error: a div that omits the division by the parent scale
    // does not undo mul. Ours does, for non-unit scale.
    kform v;
    v.scl = {2, 3, 0.5f};
    v.svl = {0.3f, -0.2f, 0.1f};
    kform w;
    w.pos = {1, 1, 1};
    w.vel = {0.5f, 0, 0};
    const kform m = kform_mul(v, w);
    const vec3 published_pos = quat_inv_mul_vec3(v.rot, m.pos - v.pos);  // no / v.scl
    EXPECT_GT(length(published_pos - w.pos), 0.5f);
    EXPECT_LT(length(kform_div(v, m).pos - w.pos), 1e-6f);
    EXPECT_LT(length(kform_div(v, m).vel - w.vel), 1e-5f);
}

TEST(Kform, PointsVelocitiesAndDirections) {
    Rng rng(12);
    for (int i = 0; i < 100; ++i) {
        const kform v = random_kform(rng);
        const vec3 p = rng.vec(-1, 1), pv = rng.vec(-1, 1);
        const kform pk = kform_from_pos_vel(p, pv);
        EXPECT_LT(length(kform_mul_pos(v, p) - kform_mul(v, pk).pos), 1e-5f);
        EXPECT_LT(length(kform_mul_vel(v, p, pv) - kform_mul(v, pk).vel), 1e-4f);
        EXPECT_LT(length(kform_mul_dir(v, p) - quat_mul_vec3(v.rot, p)), 1e-6f);
        check_kform_op("kform_mul_pos", [&](float t) {
            return kform_from_pos_vel(kform_mul_pos(kform_integrate(v, t), p + pv * t), kform_mul_vel(kform_integrate(v, t), p + pv * t, pv));
        });
    }
}

TEST(Kform, NormalizeAndRotationBetweenMatchFiniteDifference) {
    Rng rng(13);
    for (int i = 0; i < 200; ++i) {
        const kform d0 = kform_from_pos_vel(rng.vec(-1, 1), rng.vec(-1, 1));
        const kform d1 = kform_from_pos_vel(rng.vec(-1, 1), rng.vec(-1, 1));
        if (length(d0.pos) < 0.2f || length(d1.pos) < 0.2f || dot(normalize(d0.pos), normalize(d1.pos)) < -0.9f) continue;
        check_kform_op("kform_pos_vel_normalize", [&](float t) { return kform_pos_vel_normalize(kform_integrate(d0, t)); });
        check_kform_op("kform_rot_ang_between", [&](float t) {
            return kform_rot_ang_between(kform_integrate(d0, t), kform_integrate(d1, t));
        });
        const kform r = kform_rot_ang_between(d0, d1);
        EXPECT_LT(length(quat_mul_vec3(r.rot, normalize(d0.pos)) - normalize(d1.pos)), 1e-5f);
    }
}
