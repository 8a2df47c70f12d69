#pragma once
// What the CPU (and the operating system) lets this process use, for the run-time choice of
// SIMD kernels (common/src/anim/ops_simd.cpp). One place for the compiler- and
// architecture-specific queries.

namespace ks {

// AVX2 and FMA usable: the CPU has both and the OS saves the YMM registers (OSXSAVE set and XCR0
// enabling the SSE and AVX state, bits 1 and 2). Always false off x86.
bool cpu_has_avx2_fma();

}  // namespace ks
