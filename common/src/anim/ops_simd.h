#pragma once
// SIMD dispatch of the hot animation ops. op_sample_cubic / op_sample_cubic_values with a
// SampleCache, op_blend / op_blend_values / op_blend_via, op_extrapolate_decayed (so the
// client's dead blending), op_hermite_prepare / op_hermite (its interpolation) and the spring
// offset's op_offset_capture / op_offset_decay / op_offset_apply (the client's corrections) run blocks of joints through SIMD kernels
// (common/src/anim/simd_kernels.h): on x86-64 SSE2 4-wide (the baseline) or AVX2 8-wide, the best
// the CPU has, chosen at run time; on AArch64 NEON 4-wide (always present); every joint on other
// CPUs takes the scalar path, which stays the reference. KS_SIMD=scalar|sse2|avx2|neon in the
// environment (or set_simd_level) picks a level, e.g. to compare them; a level the CPU lacks falls
// back to the next narrower one of its family (avx2 -> sse2), then to scalar (so sse2 or avx2 on
// AArch64, neon on x86-64, give scalar).

#include <cstddef>
#include <cstdint>

#include <kinesync/common/math/quat.h>

namespace ks {

enum class SimdLevel { Scalar, SSE2, AVX2, NEON };
SimdLevel simd_level();
void set_simd_level(SimdLevel level);  // clamped to what the CPU and the build support
const char* simd_level_name(SimdLevel level);

// One cubic sample's inputs and outputs, joint arrays indexed by joint (see simd_kernels.h).
struct CubicBlockArgs {
    const vec3 *pos_m, *pos_0, *pos_1, *pos_2;
    const quat* rot_0;
    const float *row_m0, *row_01, *row_12;  // SampleCache rows for joint 0 (nullptr: zero rotation vectors)
    const vec3 *ls_m, *ls_0, *ls_1, *ls_2;  // log scales (only read for blocks with a scaled joint)
    const uint8_t* scaled;
    float h[4], d[3], inv_den0, inv_den1;  // d: the basis derivatives over frame_dt (rates per second)
    vec3 *out_pos, *out_vel;
    quat* out_rot;
    vec3 *out_ang, *out_scl, *out_svl;
};

struct BlendBlockArgs {
    const vec3 *l_pos, *r_pos, *l_vel, *r_vel, *l_ang, *r_ang, *l_scl, *r_scl, *l_svl, *r_svl;
    const quat *l_rot, *r_rot;
    float alpha, alpha_vel;
    vec3 *out_pos, *out_vel;
    quat* out_rot;
    vec3 *out_ang, *out_scl, *out_svl;
    quat* dirs = nullptr;  // op_blend_via: the paths' hemispheres (read and updated); nullptr: shortest
};

struct ExtrapolateBlockArgs {
    const vec3 *pos, *vel, *ang, *scl, *svl;
    const quat* rot;
    float alpha, decay;  // displacement factor (1 - e^-yt) / y and velocity factor e^-yt
    vec3 *out_pos, *out_vel;
    quat* out_rot;
    vec3 *out_ang, *out_scl, *out_svl;
};

// A pose's channels, read (PoseIn) or written (PoseOut), and a PoseOffset's (rotation vectors).
struct PoseIn {
    const vec3 *pos, *vel;
    const quat* rot;
    const vec3 *ang, *scl, *svl;
};
struct PoseOut {
    vec3 *pos, *vel;
    quat* rot;
    vec3 *ang, *scl, *svl;
};
struct OffsetIO {
    vec3 *pos, *vel, *rot, *ang, *scl, *svl;
};

struct OffsetCaptureBlockArgs {
    PoseIn src, dst;
    OffsetIO out;
};
struct OffsetApplyBlockArgs {
    OffsetIO offset;  // only read
    PoseIn input;
    PoseOut out;
};

// op_hermite_prepare's rotations (HermiteSegment's u and w1) and op_hermite.
struct HermitePrepareBlockArgs {
    const quat *rot_a, *rot_b;
    const vec3 *ang_b, *scl_a, *scl_b, *svl_a, *svl_b;
    float dt;
    vec3 *u, *w1, *ls_a, *ls_b;
    uint8_t* scaled;
};
struct HermiteBlockArgs {
    PoseIn a, b;  // the segment's ends (of b: pos, vel and svl are read)
    const vec3 *u, *w1, *ls_a, *ls_b;
    const uint8_t* scaled;
    float h[4], d[4], dt, inv;  // the basis at x, its derivative in x, the span and 1 / span
    PoseOut out;
};

struct SimdOps {
    int width;  // joints per block
    void (*cubic[2])(const CubicBlockArgs&, size_t first_joint);  // [0] values only, [1] with velocities
    void (*blend[2])(const BlendBlockArgs&, size_t first_joint);
    void (*extrapolate[2])(const ExtrapolateBlockArgs&, size_t first_joint);
    void (*offset_capture)(const OffsetCaptureBlockArgs&, size_t first_joint);
    void (*decay_flat)(float* x, float* v, size_t n, const float* step);  // n a multiple of width; see simd_decay_flat
    void (*lengths)(const vec3* v, float* out, size_t n);                 // n a multiple of width; see simd_lengths
    void (*offset_apply[2])(const OffsetApplyBlockArgs&, size_t first_joint);
    void (*hermite_prepare)(const HermitePrepareBlockArgs&, size_t first_joint);
    void (*hermite)(const HermiteBlockArgs&, size_t first_joint);
};
// The kernels of the current level (nullptr: scalar).
const SimdOps* simd_ops();

// Joints [0, n) through the kernels: whole blocks in place, the last partial block through a
// padded copy (so no joint falls back to the scalar path).
void simd_sample_cubic(const SimdOps& ops, const CubicBlockArgs& a, size_t n, bool velocities);
void simd_blend(const SimdOps& ops, const BlendBlockArgs& a, size_t n, bool velocities);
void simd_extrapolate(const SimdOps& ops, const ExtrapolateBlockArgs& a, size_t n, bool velocities);
void simd_offset_capture(const SimdOps& ops, const OffsetCaptureBlockArgs& a, size_t n);
// x, v <- the damped step (xx, xv, vx, vv) of n floats each: whole vectors, then the rest one by one.
void simd_decay_flat(const SimdOps& ops, float* x, float* v, size_t n, const float step[4]);
// out[i] = length(v[i]) for i < n, at the current level (whole blocks, then the rest one by one).
void simd_lengths(const vec3* v, float* out, size_t n);
void simd_offset_apply(const SimdOps& ops, const OffsetApplyBlockArgs& a, size_t n, bool velocities);
void simd_hermite_prepare(const SimdOps& ops, const HermitePrepareBlockArgs& a, size_t n);
void simd_hermite(const SimdOps& ops, const HermiteBlockArgs& a, size_t n);

}  // namespace ks
