// The NEON (4-wide) instantiation of the animation kernels, on AArch64, where NEON is always present.
#include "common/src/anim/ops_simd.h"

#if defined(__aarch64__) || defined(_M_ARM64)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_neon() {
    using simd::F4;
    static const SimdOps ops{4,
                             {&simd_kernels::sample_cubic_block<F4, false>, &simd_kernels::sample_cubic_block<F4, true>},
                             {&simd_kernels::blend_block<F4, false>, &simd_kernels::blend_block<F4, true>},
                             {&simd_kernels::extrapolate_block<F4, false>, &simd_kernels::extrapolate_block<F4, true>}};
    return &ops;
}
}  // namespace ks
#else
namespace ks {
const SimdOps* simd_ops_neon() { return nullptr; }
}  // namespace ks
#endif
