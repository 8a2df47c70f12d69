// Every op's values-only path (the cost baseline beside each op with velocities) gives the same
// values as the op itself: rotations within 2e-6 (chordal), positions and scales within 2e-6
// relative. (The values-only paths take one atan2 + one sincos where the full ops take the
// Jacobian chain, so they differ by float rounding only.)
#include <gtest/gtest.h>

#include <kinesync/common/anim/ops_additive.h>
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/ops_lookat.h>
#include <kinesync/common/anim/ops_sample.h>
#include "common/src/anim/ops_simd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {
void expect_same_values(const Pose& full, const Pose& values, const char* what) {
    for (size_t i = 0; i < size_t(full.size()); ++i) {
        EXPECT_LT(length(full.pos[i] - values.pos[i]), 2e-6f * (1.0f + length(full.pos[i]))) << what << " joint " << i;
        EXPECT_LT(quat_length(quat_abs(quat_mul_inv(full.rot[i], values.rot[i])) - quat{}), 2e-6f) << what << " joint " << i;
        EXPECT_LT(length(full.scl[i] - values.scl[i]), 2e-6f * length(full.scl[i])) << what << " joint " << i;
    }
}
}  // namespace

TEST(ValuesPaths, EveryOpsValuesOnlyPathMatchesItsValues) {
    const SimdLevel saved = simd_level();
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::SSE2, SimdLevel::AVX2, SimdLevel::NEON}) {
    set_simd_level(level);  // the SIMD kernels' values paths too, where the CPU has them
    Rng rng(31);
    for (int trial = 0; trial < 30; ++trial) {
        const int n = 24;
        const Pose base = random_pose(n, rng), add = random_pose(n, rng), other = random_pose(n, rng);
        const float alpha = rng.uniform(-0.3f, 1.3f);
        Pose full = base, values = base;
        op_additive(full, add, alpha, 0.7f);
        op_additive_values(values, add, alpha);
        expect_same_values(full, values, "additive");
        full = base, values = base;
        op_additive_local(full, add, alpha, 0.7f);
        op_additive_local_values(values, add, alpha);
        expect_same_values(full, values, "additive_local");

        Pose offset(n);
        op_inertialize_transition(offset, base, other);
        const float bt = rng.uniform(0.0f, 0.4f);
        op_inertialize(full, offset, other, bt, 0.3f);
        op_inertialize_values(values, offset, other, bt, 0.3f);
        expect_same_values(full, values, "inertialize");

        PoseOffset po;
        po.resize(size_t(n));
        op_offset_capture(po, base, other);
        op_offset_apply(full, po, other);
        op_offset_apply_values(values, po, other);
        expect_same_values(full, values, "offset_apply");

        op_extrapolate_decayed(full, base, bt, 0.15f);
        op_extrapolate_decayed_values(values, base, bt, 0.15f);
        expect_same_values(full, values, "extrapolate_decayed");

        std::vector<quat> d1(static_cast<size_t>(n)), d2(static_cast<size_t>(n));
        Pose s1(n), s2(n);
        for (int step = 1; step <= 3; ++step) {
            op_dead_blending(full, s1, d1, base, other, 0.15f, 0.07f * float(step), 0.3f);
            op_dead_blending_values(values, s2, d2, base, other, 0.15f, 0.07f * float(step), 0.3f);
            expect_same_values(full, values, "dead_blending");
        }

        Skeleton sk = random_skeleton(n, rng);
        Pose global(n);
        op_fk_static(global, base, sk.parents);
        const vec3 target = rng.vec(-3, 3);
        full = base, values = base;
        op_lookat(full, global, 5, target, vec3{}, vec3{0, 0, 1}, 0.6f);
        op_lookat_values(values, global, 5, target, vec3{0, 0, 1}, 0.6f);
        expect_same_values(full, values, "lookat");
    }
    }
    set_simd_level(saved);
}
