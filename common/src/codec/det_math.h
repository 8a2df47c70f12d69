#pragma once
// Arithmetic the snapshot codec's predictions use on both ends, so a decoder's result is a
// function of the bytes alone: only +, -, *, / and sqrt (exactly rounded by IEEE 754), evaluated
// in a fixed order (the project builds with -ffp-contract=off, so no compiler fuses a*b+c into an
// FMA that rounds once instead of twice), and no libm (whose sin/cos differ between libraries).
// Internal to common/codec.

#include <cmath>

#include <kinesync/common/math/quat.h>

namespace ks::det {

// sin and cos of x (|x| < 1e6) to about 1e-15 relative in double: x reduced by multiples of pi/2
// (rint is exact; a two-part pi/2 keeps the reduction exact for |k| < 2^20), then Taylor series to
// the 15th/14th power on [-pi/4, pi/4] (truncation below 3e-15).
inline void sin_cos(double x, double& s, double& c) {
    constexpr double kTwoOverPi = 0.63661977236758134308;
    constexpr double kPiOver2Hi = 1.5707963267341256141;   // pi/2 in its first 33 bits
    constexpr double kPiOver2Lo = 6.0771005065061922e-11;  // pi/2 - kPiOver2Hi
    const double k = std::rint(x * kTwoOverPi);
    const double r = (x - k * kPiOver2Hi) - k * kPiOver2Lo;
    const double r2 = r * r;
    const double sr = r * (1.0 - r2 / 6.0 * (1.0 - r2 / 20.0 * (1.0 - r2 / 42.0 * (1.0 - r2 / 72.0 * (1.0 - r2 / 110.0 * (1.0 - r2 / 156.0 * (1.0 - r2 / 210.0)))))));
    const double cr = 1.0 - r2 / 2.0 * (1.0 - r2 / 12.0 * (1.0 - r2 / 30.0 * (1.0 - r2 / 56.0 * (1.0 - r2 / 90.0 * (1.0 - r2 / 132.0 * (1.0 - r2 / 182.0))))));
    switch (int(k - 4.0 * std::floor(k / 4.0))) {  // k mod 4, exact for |k| < 2^52
        case 0: s = sr, c = cr; break;
        case 1: s = cr, c = -sr; break;
        case 2: s = -sr, c = -cr; break;
        default: s = -cr, c = sr; break;
    }
}

// exp of the pure quaternion (0, v/2): the rotation by the scaled angle-axis v.
inline quat from_scaled_angle_axis(vec3 v) {
    const double x = 0.5 * double(v.x), y = 0.5 * double(v.y), z = 0.5 * double(v.z);
    const double h = std::sqrt(x * x + y * y + z * z);
    double s = 0, c = 1;
    sin_cos(h, s, c);
    const double sinc = h < 1e-8 ? 1.0 : s / h;
    return quat{float(c), float(x * sinc), float(y * sinc), float(z * sinc)};
}

inline quat mul(quat a, quat b) {
    return quat{a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

inline quat normalize(quat q) {
    const float n = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z) + 1e-8f;
    return quat{q.w / n, q.x / n, q.y / n, q.z / n};
}

inline float length(vec3 v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

// The rotation a joint reaches from `base` turning at the mean of w0 and w1 for dt (trapezoid).
inline quat integrate(quat base, vec3 w0, vec3 w1, float dt) {
    const float half = 0.5f * dt;
    return normalize(mul(from_scaled_angle_axis(vec3{(w0.x + w1.x) * half, (w0.y + w1.y) * half, (w0.z + w1.z) * half}), base));
}

}  // namespace ks::det
