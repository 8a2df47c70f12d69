#include "common/src/platform/cpu_features.h"

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#include <intrin.h>
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif

namespace ks {

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))

bool cpu_has_avx2_fma() {
    int r[4];
    __cpuid(r, 0);
    if (r[0] < 7) return false;
    __cpuid(r, 1);
    const bool fma = (r[2] >> 12) & 1, osxsave = (r[2] >> 27) & 1, avx = (r[2] >> 28) & 1;
    if (!fma || !osxsave || !avx) return false;
    if ((_xgetbv(0) & 0x6) != 0x6) return false;  // XMM and YMM state enabled by the OS
    __cpuidex(r, 7, 0);
    return (r[1] >> 5) & 1;  // EBX bit 5: AVX2
}

#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))

namespace {
// XCR0 read with xgetbv (only valid once CPUID says OSXSAVE); bytes, so no -mxsave is needed.
unsigned long long xcr0() {
    unsigned lo, hi;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}
}  // namespace

bool cpu_has_avx2_fma() {
    // __builtin_cpu_supports checks the CPUID bits (and, in recent GCC and clang, the OS state);
    // the OSXSAVE and XCR0 check below makes it so whatever the compiler's version.
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!((c >> 27) & 1)) return false;  // OSXSAVE
    return (xcr0() & 0x6) == 0x6;        // XMM and YMM state enabled by the OS
}

#else

bool cpu_has_avx2_fma() { return false; }

#endif

}  // namespace ks
