#pragma once
// The AArch64 vector type of common/src/simd/vec.h: F4 over NEON (Advanced SIMD, mandatory on
// AArch64), with vec_sse.h's interface and results: compares give all-ones/all-zeros lane masks,
// min/max are (a < b ? a : b) / (a > b ? a : b) as _mm_min_ps / _mm_max_ps (not vminq_f32, which
// propagates NaN), to_int rounds to nearest even (vcvtnq_s32_f32, as _mm_cvtps_epi32 does in the
// default rounding mode), any/all look at the lanes' sign bits (as _mm_movemask_ps). Include vec.h,
// not this header.

#include <arm_neon.h>
#include <cstdint>

namespace ks::simd {

struct F4 {
    static constexpr int N = 4;
    using I = int32x4_t;
    float32x4_t v;
    F4() = default;
    F4(float32x4_t x) : v(x) {}
    F4(float x) : v(vdupq_n_f32(x)) {}
    static F4 load(const float* p) { return vld1q_f32(p); }
    void store(float* p) const { vst1q_f32(p, v); }

    static uint32x4_t u(float32x4_t a) { return vreinterpretq_u32_f32(a); }
    static float32x4_t f(uint32x4_t a) { return vreinterpretq_f32_u32(a); }

    friend F4 operator+(F4 a, F4 b) { return vaddq_f32(a.v, b.v); }
    friend F4 operator-(F4 a, F4 b) { return vsubq_f32(a.v, b.v); }
    friend F4 operator*(F4 a, F4 b) { return vmulq_f32(a.v, b.v); }
    friend F4 operator/(F4 a, F4 b) { return vdivq_f32(a.v, b.v); }
    friend F4 operator-(F4 a) { return vnegq_f32(a.v); }  // flips the sign bit, as xor with -0
    friend F4 operator<(F4 a, F4 b) { return f(vcltq_f32(a.v, b.v)); }
    friend F4 operator>(F4 a, F4 b) { return f(vcgtq_f32(a.v, b.v)); }
    friend F4 operator!=(F4 a, F4 b) { return f(vmvnq_u32(vceqq_f32(a.v, b.v))); }  // unordered: true
    friend F4 operator&(F4 a, F4 b) { return f(vandq_u32(u(a.v), u(b.v))); }
    friend F4 operator|(F4 a, F4 b) { return f(vorrq_u32(u(a.v), u(b.v))); }
    friend F4 operator^(F4 a, F4 b) { return f(veorq_u32(u(a.v), u(b.v))); }
    friend F4 andnot(F4 mask, F4 a) { return f(vbicq_u32(u(a.v), u(mask.v))); }  // ~mask & a
    friend F4 select(F4 mask, F4 a, F4 b) { return vbslq_f32(u(mask.v), a.v, b.v); }
    friend F4 sqrt(F4 a) { return vsqrtq_f32(a.v); }
    friend F4 min(F4 a, F4 b) { return vbslq_f32(vcltq_f32(a.v, b.v), a.v, b.v); }
    friend F4 max(F4 a, F4 b) { return vbslq_f32(vcgtq_f32(a.v, b.v), a.v, b.v); }
    friend F4 abs(F4 a) { return vabsq_f32(a.v); }
    friend bool any(F4 mask) { return vmaxvq_u32(vshrq_n_u32(u(mask.v), 31)) != 0; }
    friend bool all(F4 mask) { return vminvq_u32(vshrq_n_u32(u(mask.v), 31)) != 0; }
    // Round to nearest integer (ties to even), ldexp by an int32 vector, exponent split.
    friend I to_int(F4 a) { return vcvtnq_s32_f32(a.v); }
    static F4 to_float(I i) { return vcvtq_f32_s32(i); }
    static F4 pow2i(I n) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23)); }
    friend I bits(F4 a) { return vreinterpretq_s32_f32(a.v); }
    static F4 from_bits(I i) { return vreinterpretq_f32_s32(i); }
    static I int_and(I a, int m) { return vandq_s32(a, vdupq_n_s32(m)); }
    static I int_or(I a, int m) { return vorrq_s32(a, vdupq_n_s32(m)); }
    // Logical shift right (as _mm_srli_epi32): a variable shift left by -s of the unsigned lanes.
    static I int_shr(I a, int s) { return vreinterpretq_s32_u32(vshlq_u32(vreinterpretq_u32_s32(a), vdupq_n_s32(-s))); }
    static I int_sub(I a, int m) { return vsubq_s32(a, vdupq_n_s32(m)); }
    static F4 int_eq(I a, int m) { return f(vceqq_s32(a, vdupq_n_s32(m))); }
};

}  // namespace ks::simd
