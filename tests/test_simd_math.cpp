// The polynomial SIMD functions (common/src/simd/math.h) against double precision, over the ranges
// the header states, on this build's F4 (SSE2 on x86-64, NEON on AArch64); the errors found are
// recorded as figures. F4's lane operations are also checked against scalar C++ (the rounding,
// NaN and sign conventions every F4 shares).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "common/src/simd/math.h"

#if defined(KS_SIMD_HAS_F4)
#include "common/src/anim/simd_kernels.h"
#include "tests/support/fd.h"

#include <limits>

using namespace ks::simd;

namespace {
// Worst error of f over `count` points spread over [lo, hi] (plus the ends), 4 at a time.
double worst(double lo, double hi, int count, const std::function<F4(F4)>& f, const std::function<double(double)>& ref, bool relative) {
    double w = 0;
    for (int i = 0; i <= count; i += 4) {
        float in[4], out[4];
        for (int k = 0; k < 4; ++k) in[k] = float(lo + (hi - lo) * double(std::min(i + k, count)) / double(count));
        f(F4::load(in)).store(out);
        for (int k = 0; k < 4; ++k) {
            const double want = ref(double(in[k]));
            const double err = std::fabs(double(out[k]) - want) / (relative ? std::fabs(want) : 1.0);
            w = std::max(w, err);
        }
    }
    return w;
}
}  // namespace

TEST(SimdMath, SinCosWithinTheirBound) {
    const auto s = [](F4 x) { F4 a, b; sincos(x, a, b); return a; };
    const auto c = [](F4 x) { F4 a, b; sincos(x, a, b); return b; };
    const double es = worst(-64, 64, 400000, s, [](double x) { return std::sin(x); }, false);
    const double ec = worst(-64, 64, 400000, c, [](double x) { return std::cos(x); }, false);
    EXPECT_LE(es, 2.4e-7);
    EXPECT_LE(ec, 2.4e-7);
    ks::test::record_figure("simd sin abs error |x| <= 64", es);
    ks::test::record_figure("simd cos abs error |x| <= 64", ec);
}

TEST(SimdMath, Atan2WithinItsBoundInEveryQuadrant) {
    double w = 0;
    for (int i = 0; i < 100000; i += 4) {
        float ys[4], xs[4], out[4];
        for (int k = 0; k < 4; ++k) {
            const double a = -3.14159 + 6.28318 * double(i + k) / 100000.0, r = 0.001 + double((i + k) % 97) * 3.0;
            ys[k] = float(r * std::sin(a));
            xs[k] = float(r * std::cos(a));
        }
        atan2(F4::load(ys), F4::load(xs)).store(out);
        for (int k = 0; k < 4; ++k) w = std::max(w, std::fabs(double(out[k]) - std::atan2(double(ys[k]), double(xs[k]))));
    }
    float zy[4] = {0, 0, 1, -1}, zx[4] = {0, 1, 0, 0}, o[4];
    atan2(F4::load(zy), F4::load(zx)).store(o);
    EXPECT_EQ(o[0], 0.0f);
    EXPECT_EQ(o[1], 0.0f);
    EXPECT_NEAR(o[2], 1.5707963267948966, 2e-7);
    EXPECT_NEAR(o[3], -1.5707963267948966, 2e-7);
    EXPECT_LE(w, 3e-7);  // about one float ulp at pi
    ks::test::record_figure("simd atan2 abs error", w);
}

TEST(SimdMath, ExpAndLogWithinTheirBounds) {
    const double ee = worst(-40, 40, 400000, [](F4 x) { return exp(x); }, [](double x) { return std::exp(x); }, true);
    EXPECT_LE(ee, 2.4e-7);
    // Absolute below |log x| = 1, relative above (float's own spacing grows with the value).
    double el = 0;
    for (int d = -30; d < 30; ++d)
        el = std::max(el, worst(std::pow(10.0, d), std::pow(10.0, d + 1), 20000, [](F4 x) { return log(x); },
                                [](double x) { const double l = std::log(x); return l; }, std::abs(d) > 0));
    EXPECT_LE(el, 2.4e-7);
    ks::test::record_figure("simd exp rel error |x| <= 40", ee);
    ks::test::record_figure("simd log error (abs within 0.1..10, else rel) 1e-30..1e30", el);
}

namespace {
struct Lanes {
    float f[4];
};
Lanes lanes(F4 v) {
    Lanes l;
    v.store(l.f);
    return l;
}
F4 make(float a, float b, float c, float d) {
    const float in[4] = {a, b, c, d};
    return F4::load(in);
}
}  // namespace

// The conventions every F4 (SSE2, NEON) shares, lane by lane against scalar C++.
TEST(SimdMath, F4LanesFollowTheSharedConventions) {
    // to_int rounds to nearest, ties to even (_mm_cvtps_epi32, vcvtnq_s32_f32).
    const float ties[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f, -3.51f};
    const int32_t want[8] = {0, 2, 2, 0, -2, -2, 3, -4};
    for (int h = 0; h < 2; ++h) {
        alignas(16) int32_t got[4];
        const F4::I i = to_int(F4::load(ties + 4 * h));
        std::memcpy(got, &i, sizeof got);
        for (int k = 0; k < 4; ++k) EXPECT_EQ(got[k], want[4 * h + k]) << ties[4 * h + k];
        const Lanes back = lanes(F4::to_float(i));
        for (int k = 0; k < 4; ++k) EXPECT_EQ(back.f[k], float(want[4 * h + k]));
    }
    // min/max: a < b ? a : b and a > b ? a : b, so the second operand when either is NaN.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const F4 a = make(1.0f, nan, 3.0f, -0.0f), b = make(2.0f, 5.0f, nan, 0.0f);
    const Lanes mn = lanes(min(a, b)), mx = lanes(max(a, b));
    EXPECT_EQ(mn.f[0], 1.0f);
    EXPECT_EQ(mn.f[1], 5.0f);
    EXPECT_TRUE(std::isnan(mn.f[2]));
    EXPECT_FALSE(std::signbit(mn.f[3]));  // -0 < +0 is false: the second, +0
    EXPECT_EQ(mx.f[0], 2.0f);
    EXPECT_EQ(mx.f[1], 5.0f);
    EXPECT_TRUE(std::isnan(mx.f[2]));
    // Compares give lane masks; != is true for NaN; any/all; select and andnot bitwise.
    const F4 lt = a < b, ne = a != b;
    EXPECT_TRUE(any(lt));
    EXPECT_FALSE(all(lt));
    EXPECT_TRUE(all(F4(-0.0f)));  // any/all read the lanes' sign bits (as _mm_movemask_ps)
    EXPECT_FALSE(any(F4(0.0f)));
    EXPECT_FALSE(any(F4(1.0f) < F4(0.0f)));
    EXPECT_TRUE(all(F4(0.0f) < F4(1.0f)));
    const Lanes nel = lanes(ne & F4(1.0f));
    EXPECT_EQ(nel.f[0], 1.0f);
    EXPECT_EQ(nel.f[1], 1.0f);
    EXPECT_EQ(nel.f[2], 1.0f);
    EXPECT_EQ(nel.f[3], 0.0f);  // -0 == +0
    const Lanes sel = lanes(select(lt, F4(10.0f), F4(20.0f))), an = lanes(andnot(lt, F4(7.0f)));
    EXPECT_EQ(sel.f[0], 10.0f);
    EXPECT_EQ(sel.f[1], 20.0f);
    EXPECT_EQ(an.f[0], 0.0f);
    EXPECT_EQ(an.f[1], 7.0f);
    const Lanes neg = lanes(-make(1.0f, -2.0f, 0.0f, -0.0f)), ab = lanes(abs(make(-1.0f, 2.0f, -0.0f, -3.0f)));
    EXPECT_EQ(neg.f[0], -1.0f);
    EXPECT_EQ(neg.f[1], 2.0f);
    EXPECT_TRUE(std::signbit(neg.f[2]));
    EXPECT_FALSE(std::signbit(neg.f[3]));
    EXPECT_EQ(ab.f[0], 1.0f);
    EXPECT_FALSE(std::signbit(ab.f[2]));
    EXPECT_EQ(ab.f[3], 3.0f);
    const Lanes sq = lanes(sqrt(make(4.0f, 2.0f, 0.0f, 1e-30f)));
    EXPECT_EQ(sq.f[0], 2.0f);
    EXPECT_EQ(sq.f[1], std::sqrt(2.0f));
    EXPECT_EQ(sq.f[3], std::sqrt(1e-30f));
    // Integer lanes: logical shift right, and/or/sub/eq, pow2i.
    alignas(16) int32_t iv[4] = {-1, int32_t(0x80000000u), 0x7f800000, 12345};
    F4::I i;
    std::memcpy(&i, iv, sizeof iv);
    alignas(16) int32_t out[4];
    const F4::I sh = F4::int_shr(i, 23);
    std::memcpy(out, &sh, sizeof out);
    EXPECT_EQ(out[0], 0x1ff);
    EXPECT_EQ(out[1], 0x100);
    EXPECT_EQ(out[2], 0xff);
    EXPECT_EQ(out[3], 0);
    const F4::I mixed = F4::int_sub(F4::int_or(F4::int_and(i, 0xff), 0x100), 1);
    std::memcpy(out, &mixed, sizeof out);
    EXPECT_EQ(out[0], 0x1fe);
    EXPECT_EQ(out[3], ((12345 & 0xff) | 0x100) - 1);
    const Lanes eq = lanes(F4::int_eq(F4::int_and(i, 1), 1) & F4(1.0f));
    EXPECT_EQ(eq.f[0], 1.0f);
    EXPECT_EQ(eq.f[1], 0.0f);
    EXPECT_EQ(eq.f[3], 1.0f);
    const Lanes p2 = lanes(F4::pow2i(to_int(make(0.0f, 1.0f, -3.0f, 20.0f))));
    EXPECT_EQ(p2.f[0], 1.0f);
    EXPECT_EQ(p2.f[1], 2.0f);
    EXPECT_EQ(p2.f[2], 0.125f);
    EXPECT_EQ(p2.f[3], 1048576.0f);
}

// The F4 gathers and scatters (SSE2 shuffles, NEON structure loads): 4 vec3s and 4 quats to lanes
// and back, exactly.
TEST(SimdMath, F4GathersAndScattersAreExact) {
    using namespace ks;
    vec3 v[4];
    quat q[4];
    for (int k = 0; k < 4; ++k) {
        v[k] = {float(k) + 0.1f, float(k) + 0.2f, float(k) + 0.3f};
        q[k] = {float(k) + 0.5f, float(k) + 0.6f, float(k) + 0.7f, float(k) + 0.8f};
    }
    const simd_kernels::V3<F4> g = simd_kernels::load3<F4>(v);
    const simd_kernels::Q<F4> h = simd_kernels::loadq<F4>(q);
    const Lanes x = lanes(g.x), y = lanes(g.y), z = lanes(g.z), w = lanes(h.w), qx = lanes(h.x), qz = lanes(h.z);
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(x.f[k], v[k].x);
        EXPECT_EQ(y.f[k], v[k].y);
        EXPECT_EQ(z.f[k], v[k].z);
        EXPECT_EQ(w.f[k], q[k].w);
        EXPECT_EQ(qx.f[k], q[k].x);
        EXPECT_EQ(qz.f[k], q[k].z);
    }
    vec3 v2[5];
    quat q2[5];
    v2[4] = {9.0f, 9.0f, 9.0f};
    q2[4] = {9.0f, 9.0f, 9.0f, 9.0f};
    simd_kernels::store3<F4>(v2, g);
    simd_kernels::storeq<F4>(q2, h);
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(v2[k].x, v[k].x);
        EXPECT_EQ(v2[k].y, v[k].y);
        EXPECT_EQ(v2[k].z, v[k].z);
        EXPECT_EQ(q2[k].w, q[k].w);
        EXPECT_EQ(q2[k].x, q[k].x);
        EXPECT_EQ(q2[k].y, q[k].y);
        EXPECT_EQ(q2[k].z, q[k].z);
    }
    EXPECT_EQ(v2[4].x, 9.0f);  // nothing written past the block
    EXPECT_EQ(q2[4].z, 9.0f);
}

#endif  // KS_SIMD_HAS_F4
