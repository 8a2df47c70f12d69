// The SIMD paths of the hot ops (common/src/anim/ops_simd.h) at every level this CPU has: each level
// against the scalar reference within stated bounds, and each level's velocities against a central
// finite difference of its own output (the same 1e-3 tolerances as every op's FD test).
#include <gtest/gtest.h>

#include <cstring>

#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_hermite.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/ops_sample.h>
#include "common/src/anim/ops_simd.h"
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {

struct LevelGuard {
    SimdLevel saved = simd_level();
    ~LevelGuard() { set_simd_level(saved); }
};

std::vector<SimdLevel> simd_levels() {
    LevelGuard g;
    std::vector<SimdLevel> out;
    for (SimdLevel l : {SimdLevel::SSE2, SimdLevel::AVX2, SimdLevel::NEON}) {
        set_simd_level(l);
        if (simd_level() == l) out.push_back(l);
    }
    return out;
}

struct Worst {
    double pos = 0, rot = 0, lin_vel = 0, ang = 0, scl = 0;
    void add(const Pose& ref, const Pose& got, bool velocities) {
        for (size_t o = 0; o < size_t(ref.size()); ++o) {
            pos = std::max(pos, double(length(ref.pos[o] - got.pos[o]) / (1.0f + length(ref.pos[o]))));
            rot = std::max(rot, double(quat_length(quat_abs(quat_mul_inv(ref.rot[o], got.rot[o])) - quat{})));
            scl = std::max(scl, double(length(ref.scl[o] - got.scl[o]) / length(ref.scl[o])));
            if (!velocities) continue;
            lin_vel = std::max(lin_vel, double(length(ref.vel[o] - got.vel[o]) / (1.0f + length(ref.vel[o]))));
            lin_vel = std::max(lin_vel, double(length(ref.svl[o] - got.svl[o]) / (1.0f + length(ref.svl[o]))));
            ang = std::max(ang, double(length(ref.ang[o] - got.ang[o]) / (1.0f + length(ref.ang[o]))));
        }
    }
    // Float rounding of the polynomial math (<= 3e-7 per call, common/src/simd/math.h) through a few
    // dozen operations.
    void expect_within(const std::string& what, double ang_bound = 4e-5) const {
        EXPECT_LT(pos, 2e-6) << what;
        EXPECT_LT(rot, 4e-6) << what;
        EXPECT_LT(scl, 4e-6) << what;
        EXPECT_LT(lin_vel, 4e-6) << what;
        EXPECT_LT(ang, ang_bound) << what;
        record_figure("simd vs scalar rot " + what, rot);
        record_figure("simd vs scalar ang " + what, ang);
    }
};

void compare_sampling(const Clip& clip, const std::string& label) {
    const SampleCache cache = build_sample_cache(clip);
    for (SimdLevel level : simd_levels()) {
        LevelGuard g;
        Worst w, wv;
        Rng rng(9);
        Pose ref(clip.joints()), got(clip.joints());
        for (int i = 0; i < 200; ++i) {
            const double t = double(rng.uniform(-0.1f, 1.1f)) * double(clip.duration());
            const Wrap wrap = i % 2 ? Wrap::Loop : Wrap::Clamp;
            set_simd_level(SimdLevel::Scalar);
            op_sample_cubic(ref, clip, cache, t, wrap);
            set_simd_level(level);
            op_sample_cubic(got, clip, cache, t, wrap);
            w.add(ref, got, true);
            op_sample_cubic_values(got, clip, cache, t, wrap);
            wv.add(ref, got, false);
        }
        w.expect_within(std::string(simd_level_name(level)) + " sample_cubic " + label);
        wv.expect_within(std::string(simd_level_name(level)) + " sample_cubic_values " + label);
        const float h = clip.frame_dt / 32.0f;
        for (int i = 0; i < 10; ++i) {
            const double t0 = (double(2 + i * (clip.frames - 5) / 10) + 0.4) * double(clip.frame_dt);  // mid-interval
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " sample_cubic_cached " + label,
                                       [&](float t, Pose& out) { op_sample_cubic(out, clip, cache, t0 + t); }, clip.joints(), h);
        }
    }
}

}  // namespace

TEST(OpsSimd, SamplingAtEveryLevelMatchesScalarAndFiniteDifference) {
    ASSERT_FALSE(simd_levels().empty()) << "an x86-64 build has at least SSE2, an AArch64 one NEON";
#if defined(__aarch64__)
    EXPECT_EQ(simd_levels(), std::vector<SimdLevel>{SimdLevel::NEON});
#endif
    compare_sampling(synthetic_clip(66, 120, 60.0f, 2), "synthetic 66 (scales)");
    compare_sampling(synthetic_clip(13, 60, 30.0f, 4), "synthetic 13 (a partial block)");
}

TEST(OpsSimd, SamplingSharedClipsAtEveryLevel) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : shared_clip_infos()) compare_sampling(shared_clip(info.file), info.file);
}

TEST(OpsSimd, BlendAtEveryLevelMatchesScalarAndFiniteDifference) {
    for (SimdLevel level : simd_levels()) {
        LevelGuard g;
        Rng rng(41);
        Worst w, wv;
        for (int trial = 0; trial < 40; ++trial) {
            const int n = 20 + trial % 5;  // whole blocks and a tail
            const Pose lhs = random_pose(n, rng), rhs = random_pose(n, rng);
            Pose ref(n), got(n);
            const float a0 = rng.uniform(-0.2f, 1.2f), da = rng.uniform(-3, 3);
            set_simd_level(SimdLevel::Scalar);
            op_blend(ref, lhs, rhs, a0, da);
            set_simd_level(level);
            op_blend(got, lhs, rhs, a0, da);
            w.add(ref, got, true);
            op_blend_values(got, lhs, rhs, a0);
            wv.add(ref, got, false);
            if (trial % 4) continue;
            Pose l(n), r(n);
            const Pose near = random_pose(n, rng);
            Pose rhs_near(n);
            op_blend(rhs_near, lhs, near, 0.3f, 0.0f);  // within reach of lhs: no 180-degree flip under the FD
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " blend", [&](float t, Pose& out) {
                op_integrate(l, lhs, t);
                op_integrate(r, rhs_near, t);
                op_blend(out, l, r, a0 + da * t, da);
            }, n);
        }
        w.expect_within(std::string(simd_level_name(level)) + " blend");
        wv.expect_within(std::string(simd_level_name(level)) + " blend_values");
    }
}

TEST(OpsSimd, TheLevelCanBeChosenAndReported) {
    LevelGuard g;
    set_simd_level(SimdLevel::Scalar);
    EXPECT_EQ(simd_level(), SimdLevel::Scalar);
    EXPECT_EQ(simd_ops(), nullptr);
#if defined(__aarch64__)
    set_simd_level(SimdLevel::NEON);  // always present on AArch64
    EXPECT_EQ(simd_level(), SimdLevel::NEON);
    set_simd_level(SimdLevel::AVX2);  // another architecture's level: scalar
    EXPECT_EQ(simd_level(), SimdLevel::Scalar);
    set_simd_level(SimdLevel::NEON);
#else
    set_simd_level(SimdLevel::NEON);  // another architecture's level: scalar
    EXPECT_EQ(simd_level(), SimdLevel::Scalar);
    set_simd_level(SimdLevel::AVX2);  // the best this CPU has, at most AVX2
#endif
    EXPECT_NE(simd_level(), SimdLevel::Scalar);
    ASSERT_NE(simd_ops(), nullptr);
    EXPECT_EQ(simd_ops()->width, simd_level() == SimdLevel::AVX2 ? 8 : 4);
    EXPECT_STREQ(simd_level_name(SimdLevel::SSE2), "sse2");
    EXPECT_STREQ(simd_level_name(SimdLevel::NEON), "neon");
}

TEST(OpsSimd, ExtrapolationAndBlendViaAtEveryLevelMatchScalarAndFiniteDifference) {
    // The client's dead blending: op_extrapolate_decayed and op_blend_via (paths kept on their
    // side, stored back in dirs), through op_dead_blending.
    for (SimdLevel level : simd_levels()) {
        LevelGuard g;
        Rng rng(43);
        Worst we, wb;
        for (int trial = 0; trial < 40; ++trial) {
            const int n = 19 + trial % 6;
            const Pose in = random_pose(n, rng), input = random_pose(n, rng);
            // Odd trials: a frame's worth of time, every joint turning under half a radian (the
            // kernels' series); even ones: up to half a second (their closed forms).
            const float time = rng.uniform(0.0f, trial % 2 ? 0.04f : 0.5f), halflife = rng.uniform(0.05f, 0.3f);
            Pose ref(n), got(n);
            set_simd_level(SimdLevel::Scalar);
            op_extrapolate_decayed(ref, in, time, halflife);
            set_simd_level(level);
            op_extrapolate_decayed(got, in, time, halflife);
            we.add(ref, got, true);
            std::vector<quat> d_ref(static_cast<size_t>(n)), d_got(static_cast<size_t>(n));
            Pose scratch(n);
            for (int step = 0; step < 3; ++step) {  // dirs carried from step to step
                const float bt = 0.05f * float(step + 1);
                set_simd_level(SimdLevel::Scalar);
                op_dead_blending(ref, scratch, d_ref, in, input, halflife, bt, 0.3f);
                set_simd_level(level);
                op_dead_blending(got, scratch, d_got, in, input, halflife, bt, 0.3f);
                wb.add(ref, got, true);
                for (size_t k = 0; k < size_t(n); ++k) ASSERT_GT(quat_dot(d_ref[k], d_got[k]), 0.999f) << "same side";
            }
            if (trial % 5) continue;
            std::vector<quat> dirs(static_cast<size_t>(n));
            for (size_t k = 0; k < size_t(n); ++k) dirs[k] = quat_abs(quat_mul_inv(input.rot[k], in.rot[k]));
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " extrapolate_decayed",
                                       [&](float t, Pose& out) { op_extrapolate_decayed(out, in, 0.1f + t, halflife); }, n);
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " dead_blending", [&](float t, Pose& out) {
                std::vector<quat> d = dirs;
                Pose sc(n), moving(n);
                op_integrate(moving, input, t);  // the new input moves at its own velocities
                op_dead_blending(out, sc, d, in, moving, halflife, 0.12f + t, 0.3f);
            }, n);
        }
        we.expect_within(std::string(simd_level_name(level)) + " extrapolate_decayed");
        wb.expect_within(std::string(simd_level_name(level)) + " dead_blending");
    }
}

namespace {
// Worst relative difference of an offset's channels (the rotation as a rotation vector).
double offset_difference(const PoseOffset& ref, const PoseOffset& got) {
    double worst = 0;
    for (auto ch : {&PoseOffset::pos, &PoseOffset::vel, &PoseOffset::rot, &PoseOffset::ang, &PoseOffset::scl, &PoseOffset::svl})
        for (size_t j = 0; j < (ref.*ch).size(); ++j)
            worst = std::max(worst, double(length((ref.*ch)[j] - (got.*ch)[j]) / (1.0f + length((ref.*ch)[j]))));
    return worst;
}
bool same_bits(vec3 a, vec3 b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(quat a, quat b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

TEST(OpsSimd, SpringOffsetAtEveryLevelMatchesScalarAndFiniteDifference) {
    // The client's corrections: op_offset_capture, op_offset_decay (per-joint frequencies, the
    // position's its own) and op_offset_apply / _values. Joints 1 and 2 of each trial are settled
    // (the same rotation, scale and their rates on both sides): their offset is exactly zero and the
    // output exactly its input at every level, as the scalar shortcuts give.
    for (SimdLevel level : simd_levels()) {
        LevelGuard g;
        Rng rng(44);
        Worst wa, wv;
        double capture = 0, decay = 0;
        for (int trial = 0; trial < 40; ++trial) {
            const int n = 19 + trial % 6;
            Pose src = random_pose(n, rng), dst = random_pose(n, rng);
            if (trial % 2) {
                // Small corrections (the kernels' series): src within a fifth of a radian of dst.
                for (size_t j = 0; j < size_t(n); ++j) {
                    src.rot[j] = quat_mul(quat_from_scaled_angle_axis(rng.vec(-0.12f, 0.12f)), dst.rot[j]);
                    src.ang[j] = dst.ang[j] + rng.vec(-0.1f, 0.1f);
                }
            }
            for (size_t j : {1, 2}) src.rot[j] = dst.rot[j], src.ang[j] = dst.ang[j], src.scl[j] = dst.scl[j], src.svl[j] = dst.svl[j];
            src.rot[3] = dst.rot[3];     // joint 3: the same rotation at another rate
            src.scl[4].y = dst.scl[4].y;  // joint 4: one scale component the same
            std::vector<float> omega(size_t(n), 20.0f), omega_pos(size_t(n), 20.0f);
            for (size_t j = 0; j < size_t(n); j += 3) omega[j] = rng.uniform(2.0f, 40.0f), omega_pos[j] = rng.uniform(2.0f, 40.0f);
            for (size_t j = 1; j < size_t(n); j += 5) omega[j] = omega_pos[j] = rng.uniform(2.0f, 40.0f);  // its own, shared
            PoseOffset ref, got;
            ref.resize(size_t(n)), got.resize(size_t(n));
            set_simd_level(SimdLevel::Scalar);
            op_offset_capture(ref, src, dst);
            set_simd_level(level);
            op_offset_capture(got, src, dst);
            capture = std::max(capture, offset_difference(ref, got));
            for (size_t j : {1, 2}) {
                ASSERT_TRUE(same_bits(got.rot[j], vec3{}) && same_bits(got.ang[j], vec3{}) && same_bits(got.scl[j], vec3{}))
                    << simd_level_name(level) << " trial " << trial << " joint " << j;
            }
            got = ref;
            set_simd_level(SimdLevel::Scalar);
            // Even trials without a position frequency of its own (one run per frequency).
            const std::vector<float> no_pos;
            const std::vector<float>& pos_omega = trial % 2 ? omega_pos : no_pos;
            op_offset_decay(ref, omega, 0.8f, 1.0f / 60, pos_omega);
            set_simd_level(level);
            op_offset_decay(got, omega, 0.8f, 1.0f / 60, pos_omega);
            decay = std::max(decay, offset_difference(ref, got));
            got = ref;
            Pose out_ref(n), out_got(n);
            set_simd_level(SimdLevel::Scalar);
            op_offset_apply(out_ref, ref, dst);
            set_simd_level(level);
            op_offset_apply(out_got, got, dst);
            wa.add(out_ref, out_got, true);
            for (size_t j : {1, 2})
                ASSERT_TRUE(same_bits(out_got.rot[j], dst.rot[j]) && same_bits(out_got.ang[j], dst.ang[j]) &&
                            same_bits(out_got.scl[j], dst.scl[j]))
                    << simd_level_name(level) << " trial " << trial << " joint " << j;
            set_simd_level(SimdLevel::Scalar);
            op_offset_apply_values(out_ref, ref, dst);
            set_simd_level(level);
            op_offset_apply_values(out_got, got, dst);
            wv.add(out_ref, out_got, false);
            if (trial % 5) continue;
            PoseOffset captured;
            captured.resize(size_t(n));
            op_offset_capture(captured, src, dst);
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " offset spring", [&](float t, Pose& out) {
                Pose in(n);
                op_integrate(in, dst, 0.05f + t);
                PoseOffset off = captured;
                op_offset_decay(off, omega, 0.8f, 0.05f + t, omega_pos);
                op_offset_apply(out, off, in);
            }, n);
        }
        // The offset's channels within the rounding of the polynomial atan2, exp and log.
        EXPECT_LT(capture, 4e-6) << simd_level_name(level);
        EXPECT_LT(decay, 1e-6) << simd_level_name(level);
        record_figure(std::string("simd vs scalar offset capture ") + simd_level_name(level), capture);
        wa.expect_within(std::string(simd_level_name(level)) + " offset_apply", 4e-6);  // one rotation and rate, not a chain
        wv.expect_within(std::string(simd_level_name(level)) + " offset_apply_values");
    }
}

TEST(OpsSimd, HermiteAtEveryLevelMatchesScalarAndFiniteDifference) {
    // The client's interpolation between two snapshots: op_hermite_prepare then op_hermite at
    // several x. Odd trials: a tick apart (every joint turning under half a radian, the kernels'
    // series); even ones: any two poses up to half a second apart (their closed forms). Joints 1
    // and 2 unscaled at both ends (in a block with scaled ones: exp(0) must give 1 exactly).
    std::vector<SimdLevel> levels = simd_levels();
    levels.insert(levels.begin(), SimdLevel::Scalar);
    for (SimdLevel level : levels) {
        LevelGuard g;
        Rng rng(45);
        Worst w;
        for (int trial = 0; trial < 40; ++trial) {
            const int n = 19 + trial % 6;
            Pose a = random_pose(n, rng), b = random_pose(n, rng);
            const float dt = trial % 2 ? rng.uniform(0.02f, 0.07f) : rng.uniform(0.05f, 0.5f);
            if (trial % 2)
                for (size_t j = 0; j < size_t(n); ++j)
                    b.rot[j] = quat_mul(quat_from_scaled_angle_axis(a.ang[j] * dt + rng.vec(-0.02f, 0.02f)), a.rot[j]);
            for (Pose* p : {&a, &b})
                for (size_t j : {1, 2}) p->scl[j] = vec3{1, 1, 1}, p->svl[j] = vec3{};
            HermiteSegment ref_seg, seg;
            set_simd_level(SimdLevel::Scalar);
            op_hermite_prepare(ref_seg, a, b, dt);
            set_simd_level(level);
            op_hermite_prepare(seg, a, b, dt);
            Pose ref(n), got(n);
            for (float x : {0.0f, 0.3f, 0.75f, 1.0f}) {
                set_simd_level(SimdLevel::Scalar);
                op_hermite(ref, ref_seg, a, b, x);
                set_simd_level(level);
                op_hermite(got, seg, a, b, x);
                w.add(ref, got, true);
                for (size_t j : {1, 2}) EXPECT_TRUE(same_bits(got.scl[j], vec3{1, 1, 1}) && same_bits(got.svl[j], vec3{})) << j;
            }
            // The ends are the snapshots, velocities included.
            op_hermite(got, seg, a, b, 1.0f);
            Worst ends;
            ends.add(b, got, true);
            op_hermite(got, seg, a, b, 0.0f);
            ends.add(a, got, true);
            ends.expect_within(std::string(simd_level_name(level)) + " hermite ends", 4e-6);
            if (trial % 5) continue;
            const float x0 = rng.uniform(0.1f, 0.9f);
            expect_velocities_match_fd(std::string(simd_level_name(level)) + " hermite",
                                       [&](float t, Pose& out) { op_hermite(out, seg, a, b, x0 + t / dt); }, n);
        }
        w.expect_within(std::string(simd_level_name(level)) + " hermite");
    }
}

TEST(OpsSimd, HermiteRefusesWhatItCannotMean) {
    Rng rng(46);
    const Pose a = random_pose(5, rng), b = random_pose(5, rng), c = random_pose(6, rng);
    HermiteSegment seg;
    auto refused = [](auto f, const std::string& field) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what()).find(field) != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(refused([&] { op_hermite_prepare(seg, a, c, 0.1f); }, "b"));
    EXPECT_TRUE(refused([&] { op_hermite_prepare(seg, a, b, 0.0f); }, "dt = 0"));
    EXPECT_TRUE(refused([&] { op_hermite_prepare(seg, a, b, std::nanf("")); }, "dt"));
    Pose out(5);
    EXPECT_TRUE(refused([&] { op_hermite(out, seg, a, b, 0.5f); }, "seg"));  // never prepared
    op_hermite_prepare(seg, a, b, 0.1f);
    EXPECT_TRUE(refused([&] { op_hermite(out, seg, a, b, std::nanf("")); }, "x"));
    EXPECT_TRUE(refused([&] { op_hermite(out, seg, c, c, 0.5f); }, "a has 6"));
    Pose out6(6);
    EXPECT_TRUE(refused([&] { op_hermite(out6, seg, c, c, 0.5f); }, "seg"));  // prepared for 5 joints
    EXPECT_NO_THROW(op_hermite(out, seg, a, b, 0.5f));
}
