#pragma once
// Thin SIMD float vectors for the animation kernels, one header per instruction set with the same
// interface, so a kernel is written once as a template over the vector type:
//   x86-64   F4 (SSE2, the baseline; vec_sse.h) and, in translation units compiled with -mavx2, F8 (AVX2)
//   AArch64  F4 (NEON, always present; vec_neon.h)
// Each F4 rounds, compares and selects as the others do (to_int rounds to nearest even, min/max
// return the second operand when either is NaN), so the kernels give the same values on both. No
// FMA is used in F4 (results do not depend on it). KS_SIMD_HAS_F4 is defined when an F4 exists.

#include <cstdint>

#if defined(__SSE2__)
#include "common/src/simd/vec_sse.h"
#define KS_SIMD_HAS_F4 1
#elif defined(__aarch64__) || defined(_M_ARM64)
#include "common/src/simd/vec_neon.h"
#define KS_SIMD_HAS_F4 1
#endif
