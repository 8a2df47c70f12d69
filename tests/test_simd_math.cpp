// The polynomial SIMD functions (common/src/simd/math.h) against double precision, over the ranges
// the header states; the errors found are recorded as figures.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#if defined(__SSE2__)
#include "common/src/simd/math.h"
#include "tests/support/fd.h"

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

#endif  // __SSE2__
