#include <gtest/gtest.h>

#include <cstring>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "common/src/anim/ops_simd.h"
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(OpsFk, SyntheticFkAndBkMatchFiniteDifference) {
    Rng rng(30);
    for (int trial = 0; trial < 20; ++trial) {
        const Skeleton skel = random_skeleton(24, rng);
        const Pose local = random_pose(24, rng);
        Pose moved(24), global(24);
        expect_velocities_match_fd("fk", [&](float t, Pose& out) {
            op_integrate(moved, local, t);
            op_fk(out, moved, skel.parents);
        }, 24);
        // BK of a moving global pose.
        const Pose g = random_pose(24, rng);
        expect_velocities_match_fd("bk", [&](float t, Pose& out) {
            op_integrate(moved, g, t);
            op_bk(out, moved, skel.parents);
        }, 24);
    }
}

TEST(OpsFk, BkUndoesFkWithVelocities) {
    Rng rng(31);
    const Skeleton skel = random_skeleton(40, rng);
    const Pose local = random_pose(40, rng);
    Pose global(40), back(40), global_static(40);
    op_fk(global, local, skel.parents);
    op_bk(back, global, skel.parents);
    for (size_t j = 0; j < 40; ++j) {
        const float s = 1 + length(local.pos[j]);
        EXPECT_LT(length(back.pos[j] - local.pos[j]), 1e-4f * s) << j;
        EXPECT_GT(std::fabs(quat_dot(back.rot[j], local.rot[j])), 1 - 1e-5f) << j;
        EXPECT_LT(length(back.scl[j] - local.scl[j]), 1e-4f) << j;
        EXPECT_LT(length(back.vel[j] - local.vel[j]), 1e-3f * (1 + length(local.vel[j]))) << j;
        EXPECT_LT(length(back.ang[j] - local.ang[j]), 1e-3f * (1 + length(local.ang[j]))) << j;
        EXPECT_LT(length(back.svl[j] - local.svl[j]), 1e-4f) << j;
    }
    op_fk_static(global_static, local, skel.parents);
    for (size_t j = 0; j < 40; ++j) EXPECT_LT(length(global_static.pos[j] - global.pos[j]), 1e-5f * (1 + length(global.pos[j])));
}

TEST(OpsFk, FiniteDiffRecoversVelocities) {
    Rng rng(32);
    const Pose p = random_pose(10, rng);
    Pose a(10), b(10), out(10);
    const float dt = 1e-3f;
    op_integrate(a, p, dt);
    op_finite_diff(out, a, p, dt);
    for (size_t j = 0; j < 10; ++j) {
        EXPECT_LT(length(out.vel[j] - p.vel[j]), 1e-2f);
        EXPECT_LT(length(out.ang[j] - p.ang[j]), 1e-2f);
        EXPECT_LT(length(out.svl[j] - p.svl[j]), 1e-2f);
        EXPECT_EQ(out.pos[j].x, a.pos[j].x);
    }
}

TEST(OpsFk, SharedClipsFkMatchesFiniteDifference) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : shared_clip_infos()) {
        const Clip& clip = shared_clip(info.file);
        Pose local(clip.joints()), global(clip.joints()), back(clip.joints());
        const float h = clip.frame_dt / 32.0f;
        for (int k = 0; k < 15; ++k) {
            const double t0 = (double(2 + k * (clip.frames - 5) / 15) + 0.5) * clip.frame_dt;  // mid-interval: the cubic is C1, not C2, at frames
            expect_velocities_match_fd("mocap fk", [&](float t, Pose& out) {
                op_sample_cubic(local, clip, t0 + t);
                op_fk(out, local, clip.skeleton.parents);
            }, clip.joints(), h);
            // BK(FK(x)) == x on real data.
            op_sample_cubic(local, clip, t0);
            op_fk(global, local, clip.skeleton.parents);
            op_bk(back, global, clip.skeleton.parents);
            for (size_t j = 0; j < size_t(clip.joints()); ++j) {
                EXPECT_LT(length(back.pos[j] - local.pos[j]), 1e-4f * (1 + length(local.pos[j])));
                EXPECT_LT(length(back.ang[j] - local.ang[j]), 1e-3f * (1 + length(local.ang[j])));
                EXPECT_LT(length(back.vel[j] - local.vel[j]), 1e-3f * (1 + length(local.vel[j])));
            }
        }
    }
}

TEST(OpsFk, MatchesTheKformProductChain) {
    // op_fk (merged rotations, three at once in SIMD) against kform_mul joint by joint: within
    // float rounding (1e-6 relative).
    ks::test::Rng rng(77);
    for (int trial = 0; trial < 50; ++trial) {
        const int n = 40;
        const Skeleton sk = ks::test::random_skeleton(n, rng);
        const Pose local = ks::test::random_pose(n, rng);
        Pose global(n);
        op_fk(global, local, sk.parents);
        std::vector<kform> ref(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            const int p = sk.parents[size_t(i)];
            ref[size_t(i)] = p < 0 ? local.get(i) : kform_mul(ref[size_t(p)], local.get(i));
            const kform g = global.get(i), r = ref[size_t(i)];
            for (const auto& [a, b] : {std::pair{g.pos, r.pos}, {g.vel, r.vel}, {g.ang, r.ang}, {g.scl, r.scl}, {g.svl, r.svl}})
                ASSERT_LT(length(a - b), 1e-5f * (1.0f + length(b))) << "joint " << i;
            ASSERT_LT(quat_length(g.rot - r.rot), 1e-5f) << "joint " << i;
        }
    }
}

namespace {

// Channels compared as bits: 0 when every float of every joint is the same.
size_t differing_floats(const Pose& a, const Pose& b) {
    size_t n = 0;
    auto count = [&](const float* x, const float* y, size_t floats) {
        for (size_t k = 0; k < floats; ++k) n += std::memcmp(&x[k], &y[k], sizeof(float)) != 0;
    };
    const size_t j = size_t(a.size());
    count(&a.pos[0].x, &b.pos[0].x, 3 * j), count(&a.vel[0].x, &b.vel[0].x, 3 * j), count(&a.rot[0].w, &b.rot[0].w, 4 * j);
    count(&a.ang[0].x, &b.ang[0].x, 3 * j), count(&a.scl[0].x, &b.scl[0].x, 3 * j), count(&a.svl[0].x, &b.svl[0].x, 3 * j);
    return n;
}

// FK as it was on AArch64 before one order was fixed: the same product, the quaternion sums
// taken left to right (quat_mul) rather than paired as the vector lanes pair them.
void fk_other_order(Pose& global, const Pose& local, Span<const int> parents) {
    op_fk(global, local, parents);
    for (size_t i = 0; i < parents.size(); ++i)
        if (parents[i] >= 0) global.rot[i] = quat_mul(global.rot[size_t(parents[i])], local.rot[i]);
}

}  // namespace

// The world pose is the same bits whatever the instruction set: every SIMD level this CPU has
// against the scalar path (the one AArch64 runs), with and without velocities. The comparison is
// shown able to see an order's difference: FK with the quaternion sums in another order differs.
TEST(OpsFk, EverySimdLevelGivesTheScalarPathsBits) {
    const SimdLevel saved = simd_level();
    ks::test::Rng rng(91);
    size_t other_order = 0;
    for (int trial = 0; trial < 20; ++trial) {
        const int n = 250;
        const Skeleton sk = ks::test::random_skeleton(n, rng);
        const Pose local = ks::test::random_pose(n, rng);
        Pose scalar(n), scalar_static(n);
        set_simd_level(SimdLevel::Scalar);
        op_fk(scalar, local, sk.parents);
        op_fk_static(scalar_static, local, sk.parents);
        for (SimdLevel level : {SimdLevel::SSE2, SimdLevel::AVX2, SimdLevel::NEON}) {
            set_simd_level(level);
            if (simd_level() != level) continue;
            Pose got(n), got_static(n);
            op_fk(got, local, sk.parents);
            op_fk_static(got_static, local, sk.parents);
            EXPECT_EQ(differing_floats(scalar, got), 0u) << simd_level_name(level) << ", trial " << trial;
            for (int j = 0; j < n; ++j) {
                ASSERT_EQ(std::memcmp(&scalar_static.pos[size_t(j)], &got_static.pos[size_t(j)], sizeof(vec3)), 0) << j;
                ASSERT_EQ(std::memcmp(&scalar_static.rot[size_t(j)], &got_static.rot[size_t(j)], sizeof(quat)), 0) << j;
            }
        }
        set_simd_level(SimdLevel::Scalar);
        Pose other(n);
        fk_other_order(other, local, sk.parents);
        other_order += differing_floats(scalar, other);
    }
    set_simd_level(saved);
    record_figure("fk: floats differing with the quaternion sums in another order (20 x 250 joints)", double(other_order));
    EXPECT_GT(other_order, 0u) << "the comparison cannot see an order's difference";
}
