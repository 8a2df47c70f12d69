// The SSE2 (4-wide) instantiation of the animation kernels.
#include "common/src/anim/ops_simd.h"

#if defined(__SSE2__)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_sse2() {
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
const SimdOps* simd_ops_sse2() { return nullptr; }
}  // namespace ks
#endif
