// The AVX2 (8-wide) instantiation of the animation kernels; this file alone is compiled with
// -mavx2 (CMakeLists.txt), and only called when the CPU has AVX2.
#include "common/src/anim/ops_simd.h"

#if defined(__AVX2__)
#include "common/src/anim/simd_kernels.h"

namespace ks {
const SimdOps* simd_ops_avx2() {
    using simd::F8;
    static const SimdOps ops{8,
                             {&simd_kernels::sample_cubic_block<F8, false>, &simd_kernels::sample_cubic_block<F8, true>},
                             {&simd_kernels::blend_block<F8, false>, &simd_kernels::blend_block<F8, true>},
                             {&simd_kernels::extrapolate_block<F8, false>, &simd_kernels::extrapolate_block<F8, true>}};
    return &ops;
}
}  // namespace ks
#else
namespace ks {
const SimdOps* simd_ops_avx2() { return nullptr; }
}  // namespace ks
#endif
