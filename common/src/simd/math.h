#pragma once
// Polynomial sincos, atan2, exp and log over SIMD vectors (common/src/simd/vec.h), for the animation
// kernels. Cephes-style range reduction and minimax polynomials (single precision). Measured
// errors against double precision (test SimdMath.*), over the ranges the kernels use:
//   sincos  |x| <= 64        absolute error <= 2.4e-7
//   atan2   any finite y, x  absolute error <= 3e-7 rad (about one float ulp at pi)
//   exp     |x| <= 40        relative error <= 2.4e-7 (x clamped to [-87, 88])
//   log     1e-30 .. 1e30    error <= 2.4e-7, absolute for x in 0.1 .. 10, relative elsewhere
//                            (x > 0, normal numbers only)

#include "common/src/simd/vec.h"

namespace ks::simd {

template <class V>
inline V poly(V x, float c0, float c1) { return V(c0) * x + V(c1); }

template <class V>
inline void sincos(V x, V& s, V& c) {
    const V n = V::to_float(to_int(x * V(0.63661977236758134f)));  // round(x / (pi / 2))
    const typename V::I q = to_int(n);
    // x - n pi / 2 in three parts (Cody-Waite), exact enough for |n| < 2^12.
    const V r = ((x - n * V(1.5703125f)) - n * V(4.837512969970703125e-4f)) - n * V(7.54978995489188216e-8f);
    const V z = r * r;
    const V sr = r + r * z * ((V(-1.9515295891e-4f) * z + V(8.3321608736e-3f)) * z + V(-1.6666654611e-1f));
    const V cr = V(1.0f) - V(0.5f) * z + z * z * ((V(2.443315711809948e-5f) * z + V(-1.388731625493765e-3f)) * z + V(4.166664568298827e-2f));
    const V swap = V::int_eq(V::int_and(q, 1), 1);
    const V ss = select(swap, cr, sr), cc = select(swap, sr, cr);
    // sin negated for quadrants 2, 3; cos for quadrants 1, 2.
    const V sign_s = V::int_eq(V::int_and(q, 2), 2) & V(-0.0f);
    const V sign_c = V::int_eq(V::int_and(V::int_sub(q, -1), 2), 2) & V(-0.0f);
    s = ss ^ sign_s;
    c = cc ^ sign_c;
}

template <class V>
inline V atan2(V y, V x) {
    const V ax = abs(x), ay = abs(y);
    const V swap = ay > ax;
    const V num = min(ax, ay), den = max(ax, ay);
    const V zero = den != V(0.0f);
    V z = (num / select(zero, den, V(1.0f))) & zero;  // in [0, 1]
    const V big = z > V(0.41421356237309503f);       // tan(pi / 8)
    z = select(big, (z - V(1.0f)) / (z + V(1.0f)), z);
    const V w = z * z;
    V a = ((((V(8.05374449538e-2f) * w - V(1.38776856032e-1f)) * w + V(1.99777106478e-1f)) * w - V(3.33329491539e-1f)) * w) * z + z;
    a = a + (big & V(0.78539816339744831f));
    a = select(swap, V(1.5707963267948966f) - a, a);
    a = select(x < V(0.0f), V(3.1415926535897932f) - a, a);
    return a ^ (y & V(-0.0f));
}

template <class V>
inline V exp(V x) {
    x = min(max(x, V(-87.0f)), V(88.0f));
    const V n = V::to_float(to_int(x * V(1.44269504088896341f)));
    const V r = (x - n * V(0.693359375f)) - n * V(-2.12194440e-4f);
    V p = V(1.9875691500e-4f);
    p = p * r + V(1.3981999507e-3f);
    p = p * r + V(8.3334519073e-3f);
    p = p * r + V(4.1665795894e-2f);
    p = p * r + V(1.6666665459e-1f);
    p = p * r + V(5.0000001201e-1f);
    const V e = p * r * r + r + V(1.0f);
    return e * V::pow2i(to_int(n));
}

template <class V>
inline V log(V x) {
    const typename V::I b = bits(x);
    V e = V::to_float(V::int_sub(V::int_shr(b, 23), 126));
    V m = V::from_bits(V::int_or(V::int_and(b, int(0x807fffff)), 0x3f000000));  // mantissa in [0.5, 1)
    const V small = m < V(0.707106781186547524f);
    e = e - (small & V(1.0f));
    m = select(small, m + m - V(1.0f), m - V(1.0f));
    const V z = m * m;
    V p = V(7.0376836292e-2f);
    p = p * m + V(-1.1514610310e-1f);
    p = p * m + V(1.1676998740e-1f);
    p = p * m + V(-1.2420140846e-1f);
    p = p * m + V(1.4249322787e-1f);
    p = p * m + V(-1.6668057665e-1f);
    p = p * m + V(2.0000714765e-1f);
    p = p * m + V(-2.4999993993e-1f);
    p = p * m + V(3.3333331174e-1f);
    V y = p * m * z;
    y = y + e * V(-2.12194440e-4f);
    y = y - V(0.5f) * z;
    return (m + y) + e * V(0.693359375f);
}

}  // namespace ks::simd
