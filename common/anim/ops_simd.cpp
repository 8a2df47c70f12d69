#include "common/anim/ops_simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace ks {

const SimdOps* simd_ops_sse2();
const SimdOps* simd_ops_avx2();

namespace {

bool cpu_has(SimdLevel l) {
    switch (l) {
        case SimdLevel::Scalar: return true;
#if defined(__x86_64__) || defined(__i386__)
        case SimdLevel::SSE2: return simd_ops_sse2() != nullptr;
        case SimdLevel::AVX2: return simd_ops_avx2() != nullptr && __builtin_cpu_supports("avx2");
#else
        default: return false;
#endif
    }
    return false;
}

SimdLevel best() {
    if (const char* e = std::getenv("KS_SIMD")) {
        SimdLevel want = SimdLevel::AVX2;
        if (!std::strcmp(e, "scalar")) want = SimdLevel::Scalar;
        else if (!std::strcmp(e, "sse2")) want = SimdLevel::SSE2;
        while (!cpu_has(want)) want = SimdLevel(int(want) - 1);
        return want;
    }
    for (SimdLevel l : {SimdLevel::AVX2, SimdLevel::SSE2})
        if (cpu_has(l)) return l;
    return SimdLevel::Scalar;
}

std::atomic<int>& level() {
    static std::atomic<int> l{int(best())};
    return l;
}

}  // namespace

SimdLevel simd_level() { return SimdLevel(level().load(std::memory_order_relaxed)); }

void set_simd_level(SimdLevel want) {
    while (!cpu_has(want)) want = SimdLevel(int(want) - 1);
    level().store(int(want));
}

const char* simd_level_name(SimdLevel l) {
    switch (l) {
        case SimdLevel::Scalar: return "scalar";
        case SimdLevel::SSE2: return "sse2";
        case SimdLevel::AVX2: return "avx2";
    }
    return "?";
}

const SimdOps* simd_ops() {
    switch (simd_level()) {
        case SimdLevel::SSE2: return simd_ops_sse2();
        case SimdLevel::AVX2: return simd_ops_avx2();
        default: return nullptr;
    }
}

}  // namespace ks
