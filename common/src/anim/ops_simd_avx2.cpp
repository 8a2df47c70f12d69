// The AVX2 (8-wide) instantiation of the animation kernels; this file alone is compiled with
// -mavx2 (CMakeLists.txt), and only called when the CPU has AVX2.
#include "common/src/anim/ops_simd.h"

#if defined(__AVX2__)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_avx2() { return simd_kernels::kernel_table<simd::F8>(); }
}  // namespace ks
#else
namespace ks {
const SimdOps* simd_ops_avx2() { return nullptr; }
}  // namespace ks
#endif
