// The SSE2 (4-wide) instantiation of the animation kernels.
#include "common/src/anim/ops_simd.h"

#if defined(__SSE2__)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_sse2() { return simd_kernels::kernel_table<simd::F4>(); }
}  // namespace ks
#else
namespace ks {
const SimdOps* simd_ops_sse2() { return nullptr; }
}  // namespace ks
#endif
