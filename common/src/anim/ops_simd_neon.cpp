// The NEON (4-wide) instantiation of the animation kernels, on AArch64, where NEON is always present.
#include "common/src/anim/ops_simd.h"

#if defined(__aarch64__) || defined(_M_ARM64)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_neon() { return simd_kernels::kernel_table<simd::F4>(); }
}  // namespace ks
#else
namespace ks {
const SimdOps* simd_ops_neon() { return nullptr; }
}  // namespace ks
#endif
