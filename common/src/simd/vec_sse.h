#pragma once
// The x86 vector types of common/src/simd/vec.h: F4 (SSE2, the x86-64 baseline) and, in
// translation units compiled with -mavx2, F8 (AVX2). Include vec.h, not this header.

#include <cstdint>
#include <immintrin.h>

namespace ks::simd {

struct F4 {
    static constexpr int N = 4;
    using I = __m128i;
    __m128 v;
    F4() = default;
    F4(__m128 x) : v(x) {}
    F4(float x) : v(_mm_set1_ps(x)) {}
    static F4 load(const float* p) { return _mm_loadu_ps(p); }
    void store(float* p) const { _mm_storeu_ps(p, v); }
    friend F4 operator+(F4 a, F4 b) { return _mm_add_ps(a.v, b.v); }
    friend F4 operator-(F4 a, F4 b) { return _mm_sub_ps(a.v, b.v); }
    friend F4 operator*(F4 a, F4 b) { return _mm_mul_ps(a.v, b.v); }
    friend F4 operator/(F4 a, F4 b) { return _mm_div_ps(a.v, b.v); }
    friend F4 operator-(F4 a) { return _mm_xor_ps(a.v, _mm_set1_ps(-0.0f)); }
    friend F4 operator<(F4 a, F4 b) { return _mm_cmplt_ps(a.v, b.v); }
    friend F4 operator>(F4 a, F4 b) { return _mm_cmpgt_ps(a.v, b.v); }
    friend F4 operator!=(F4 a, F4 b) { return _mm_cmpneq_ps(a.v, b.v); }
    friend F4 operator&(F4 a, F4 b) { return _mm_and_ps(a.v, b.v); }
    friend F4 operator|(F4 a, F4 b) { return _mm_or_ps(a.v, b.v); }
    friend F4 operator^(F4 a, F4 b) { return _mm_xor_ps(a.v, b.v); }
    friend F4 andnot(F4 mask, F4 a) { return _mm_andnot_ps(mask.v, a.v); }
    friend F4 select(F4 mask, F4 a, F4 b) { return _mm_or_ps(_mm_and_ps(mask.v, a.v), _mm_andnot_ps(mask.v, b.v)); }
    friend F4 sqrt(F4 a) { return _mm_sqrt_ps(a.v); }
    friend F4 min(F4 a, F4 b) { return _mm_min_ps(a.v, b.v); }
    friend F4 max(F4 a, F4 b) { return _mm_max_ps(a.v, b.v); }
    friend F4 abs(F4 a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a.v); }
    friend bool any(F4 mask) { return _mm_movemask_ps(mask.v) != 0; }
    friend bool all(F4 mask) { return _mm_movemask_ps(mask.v) == 0xF; }
    // Round to nearest integer (as float and as int32), ldexp by an int32 vector, exponent split.
    friend I to_int(F4 a) { return _mm_cvtps_epi32(a.v); }
    static F4 to_float(I i) { return _mm_cvtepi32_ps(i); }
    static F4 pow2i(I n) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23)); }
    friend I bits(F4 a) { return _mm_castps_si128(a.v); }
    static F4 from_bits(I i) { return _mm_castsi128_ps(i); }
    static I int_and(I a, int m) { return _mm_and_si128(a, _mm_set1_epi32(m)); }
    static I int_or(I a, int m) { return _mm_or_si128(a, _mm_set1_epi32(m)); }
    static I int_shr(I a, int s) { return _mm_srli_epi32(a, s); }
    static I int_sub(I a, int m) { return _mm_sub_epi32(a, _mm_set1_epi32(m)); }
    static F4 int_eq(I a, int m) { return _mm_castsi128_ps(_mm_cmpeq_epi32(a, _mm_set1_epi32(m))); }
};

#ifdef __AVX2__
struct F8 {
    static constexpr int N = 8;
    using I = __m256i;
    __m256 v;
    F8() = default;
    F8(__m256 x) : v(x) {}
    F8(float x) : v(_mm256_set1_ps(x)) {}
    static F8 load(const float* p) { return _mm256_loadu_ps(p); }
    void store(float* p) const { _mm256_storeu_ps(p, v); }
    friend F8 operator+(F8 a, F8 b) { return _mm256_add_ps(a.v, b.v); }
    friend F8 operator-(F8 a, F8 b) { return _mm256_sub_ps(a.v, b.v); }
    friend F8 operator*(F8 a, F8 b) { return _mm256_mul_ps(a.v, b.v); }
    friend F8 operator/(F8 a, F8 b) { return _mm256_div_ps(a.v, b.v); }
    friend F8 operator-(F8 a) { return _mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f)); }
    friend F8 operator<(F8 a, F8 b) { return _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ); }
    friend F8 operator>(F8 a, F8 b) { return _mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ); }
    friend F8 operator!=(F8 a, F8 b) { return _mm256_cmp_ps(a.v, b.v, _CMP_NEQ_UQ); }
    friend F8 operator&(F8 a, F8 b) { return _mm256_and_ps(a.v, b.v); }
    friend F8 operator|(F8 a, F8 b) { return _mm256_or_ps(a.v, b.v); }
    friend F8 operator^(F8 a, F8 b) { return _mm256_xor_ps(a.v, b.v); }
    friend F8 andnot(F8 mask, F8 a) { return _mm256_andnot_ps(mask.v, a.v); }
    friend F8 select(F8 mask, F8 a, F8 b) { return _mm256_blendv_ps(b.v, a.v, mask.v); }
    friend F8 sqrt(F8 a) { return _mm256_sqrt_ps(a.v); }
    friend F8 min(F8 a, F8 b) { return _mm256_min_ps(a.v, b.v); }
    friend F8 max(F8 a, F8 b) { return _mm256_max_ps(a.v, b.v); }
    friend F8 abs(F8 a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v); }
    friend bool any(F8 mask) { return _mm256_movemask_ps(mask.v) != 0; }
    friend bool all(F8 mask) { return _mm256_movemask_ps(mask.v) == 0xFF; }
    friend I to_int(F8 a) { return _mm256_cvtps_epi32(a.v); }
    static F8 to_float(I i) { return _mm256_cvtepi32_ps(i); }
    static F8 pow2i(I n) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23)); }
    friend I bits(F8 a) { return _mm256_castps_si256(a.v); }
    static F8 from_bits(I i) { return _mm256_castsi256_ps(i); }
    static I int_and(I a, int m) { return _mm256_and_si256(a, _mm256_set1_epi32(m)); }
    static I int_or(I a, int m) { return _mm256_or_si256(a, _mm256_set1_epi32(m)); }
    static I int_shr(I a, int s) { return _mm256_srli_epi32(a, s); }
    static I int_sub(I a, int m) { return _mm256_sub_epi32(a, _mm256_set1_epi32(m)); }
    static F8 int_eq(I a, int m) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, _mm256_set1_epi32(m))); }
};
#endif

}  // namespace ks::simd
