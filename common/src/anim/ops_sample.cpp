#include <kinesync/common/anim/ops_sample.h>

#include "common/src/anim/op_checks.h"

#include "common/src/anim/ops_simd.h"

#include <algorithm>
#include <cmath>

namespace ks {

namespace {

// Where `time` falls: segment [k0, k1] at fraction x, the neighbours used for tangents, and
// whether time is inside the clip (velocities are zero when clamped outside it).
struct Segment {
    int km1, k0, k1, k2;   // frames k0-1, k0, k0+1, k0+2 after wrapping/clamping
    float den0, den1;      // tangent spans at k0 and k1, in frames
    float x;
    bool moving;
};

Segment locate(const Clip& clip, double time, Wrap wrap) {
    const int n = clip.frames;
    Segment s{};
    const double ft = time / double(clip.frame_dt);
    if (wrap == Wrap::Loop && n >= 3) {
        const int period = n - 1;  // last frame == first frame
        double f = std::fmod(ft, double(period));
        if (f < 0.0) f += double(period);
        int k = int(std::floor(f));
        if (k >= period) k = period - 1;
        s.x = float(f - double(k));
        auto w = [period](int i) { return ((i % period) + period) % period; };
        s.km1 = w(k - 1);
        s.k0 = w(k);
        s.k1 = w(k + 1);
        s.k2 = w(k + 2);
        s.den0 = s.den1 = 2.0f;
        s.moving = true;
        return s;
    }
    s.moving = ft >= 0.0 && ft <= double(n - 1);
    const double f = std::clamp(ft, 0.0, double(n - 1));
    int k = int(std::floor(f));
    if (k > n - 2) k = n - 2;
    s.x = float(f - double(k));
    auto c = [n](int i) { return i < 0 ? 0 : (i > n - 1 ? n - 1 : i); };
    s.km1 = c(k - 1);
    s.k0 = k;
    s.k1 = c(k + 1);
    s.k2 = c(k + 2);
    s.den0 = float(s.k1 - s.km1);
    s.den1 = float(s.k2 - s.k0);
    return s;
}

// The cubic Hermite basis at x in [0, 1], values and d/dx, for p0, m0, p1, m1 (tangents in "per
// frame" units). d/dx of p0's weight is -d01: derivatives use (p1 - p0) d01, which does not
// cancel large positions against each other (and so rounds alike with and without FMA).
struct HermiteBasis {
    float h00, h10, h01, h11, d10, d01, d11;
};
HermiteBasis hermite_basis(float x) {
    const float x2 = x * x, x3 = x2 * x;
    return {2 * x3 - 3 * x2 + 1, x3 - 2 * x2 + x, -2 * x3 + 3 * x2, x3 - x2,
            3 * x2 - 4 * x + 1,  -6 * x2 + 6 * x,    3 * x2 - 2 * x};
}

bool is_unit(vec3 s) { return s.x == 1.0f && s.y == 1.0f && s.z == 1.0f; }

void hold_frame(Pose& out, const Clip& clip, int f) {
    for (int j = 0; j < clip.joints(); ++j) {
        out.pos[size_t(j)] = clip.pos(f, j);
        out.rot[size_t(j)] = clip.rot(f, j);
        out.scl[size_t(j)] = clip.scl(f, j);
        out.vel[size_t(j)] = out.ang[size_t(j)] = out.svl[size_t(j)] = vec3{};
    }
}

}  // namespace

void op_sample_linear(Pose& out, const Clip& clip, double time, Wrap wrap) {
    detail::check_clip(__func__, clip, out, time, wrap);
    if (clip.frames < 2) return hold_frame(out, clip, 0);
    const Segment s = locate(clip, time, wrap);
    const float inv_dt = s.moving ? 1.0f / clip.frame_dt : 0.0f;
    for (int j = 0; j < clip.joints(); ++j) {
        const size_t o = size_t(j);
        const vec3 p0 = clip.pos(s.k0, j), p1 = clip.pos(s.k1, j);
        out.pos[o] = lerp(p0, p1, s.x);
        out.vel[o] = (p1 - p0) * inv_dt;
        const quat r0 = clip.rot(s.k0, j);
        const vec3 u = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(clip.rot(s.k1, j), r0)));
        out.rot[o] = quat_mul(quat_from_scaled_angle_axis(u * s.x), r0);
        out.ang[o] = u * inv_dt;  // exact: J_l(x u) u == u
        const vec3 l0 = log(clip.scl(s.k0, j)), l1 = log(clip.scl(s.k1, j));
        out.scl[o] = exp(lerp(l0, l1, s.x));
        out.svl[o] = (l1 - l0) * inv_dt;
    }
}

namespace {

template <bool kVelocities>
void sample_cubic(Pose& out, const Clip& clip, double time, Wrap wrap) {
    detail::check_clip(__func__, clip, out, time, wrap);
    if (clip.frames < 2) return hold_frame(out, clip, 0);
    const Segment s = locate(clip, time, wrap);
    [[maybe_unused]] const auto [h00, h10, h01, h11, d10, d01, d11] = hermite_basis(s.x);
    [[maybe_unused]] const float inv_dt = s.moving ? 1.0f / clip.frame_dt : 0.0f;
    for (int j = 0; j < clip.joints(); ++j) {
        const size_t o = size_t(j);
        // Positions: Catmull-Rom tangents, per frame.
        const vec3 pm = clip.pos(s.km1, j), p0 = clip.pos(s.k0, j), p1 = clip.pos(s.k1, j), p2 = clip.pos(s.k2, j);
        const vec3 m0 = (p1 - pm) / s.den0, m1 = (p2 - p0) / s.den1;
        out.pos[o] = h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1;
        if constexpr (kVelocities) out.vel[o] = ((p1 - p0) * d01 + d10 * m0 + d11 * m1) * inv_dt;

        // Rotations: keyframe angular velocities (per frame) from neighbouring rotation vectors.
        const quat rm = clip.rot(s.km1, j), r0 = clip.rot(s.k0, j), r1 = clip.rot(s.k1, j), r2 = clip.rot(s.k2, j);
        const vec3 u_m0 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(r0, rm)));
        const vec3 u_01 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(r1, r0)));
        const vec3 u_12 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(r2, r1)));
        const vec3 w0 = (u_m0 + u_01) / s.den0, w1 = (u_01 + u_12) / s.den1;
        // Segment curve phi(x) in r0's rotation-vector space: phi(0)=0, phi(1)=u_01,
        // phi'(0)=w0 (J_l(0)=I), phi'(1)=J_l(u_01)^-1 w1 so the angular velocity at x=1 is w1.
        const vec3 t1 = so3_left_jacobian_inv_mul(u_01, w1);
        const vec3 phi = h10 * w0 + h01 * u_01 + h11 * t1;
        out.rot[o] = quat_mul(quat_from_scaled_angle_axis(phi), r0);
        if constexpr (kVelocities) {
            const vec3 dphi = d10 * w0 + d01 * u_01 + d11 * t1;
            out.ang[o] = so3_left_jacobian_mul(phi, dphi) * inv_dt;
        }

        // Scales: the same cubic on log scale (skipped for the common all-unit-scale case).
        const vec3 sm = clip.scl(s.km1, j), s0 = clip.scl(s.k0, j), s1 = clip.scl(s.k1, j), s2 = clip.scl(s.k2, j);
        if (is_unit(sm) && is_unit(s0) && is_unit(s1) && is_unit(s2)) {
            out.scl[o] = vec3{1, 1, 1};
            if constexpr (kVelocities) out.svl[o] = vec3{};
            continue;
        }
        const vec3 lm = log(sm), l0 = log(s0), l1 = log(s1), l2 = log(s2);
        const vec3 n0 = (l1 - lm) / s.den0, n1 = (l2 - l0) / s.den1;
        out.scl[o] = exp(h00 * l0 + h10 * n0 + h01 * l1 + h11 * n1);
        if constexpr (kVelocities) out.svl[o] = ((l1 - l0) * d01 + d10 * n0 + d11 * n1) * inv_dt;
    }
}

}  // namespace

namespace {

// The same curves from a SampleCache: the segments' rotation vectors and inverse-Jacobian
// coefficients are read, not recomputed, and the exponential and the left Jacobian share one
// sincos of the half angle.
template <bool kVelocities>
void sample_cubic_cached(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    detail::check_clip(__func__, clip, out, time, wrap, &cache);
    if (clip.frames < 2) return hold_frame(out, clip, 0);
    const Segment s = locate(clip, time, wrap);
    [[maybe_unused]] const auto [h00, h10, h01, h11, d10, d01, d11] = hermite_basis(s.x);
    [[maybe_unused]] const float inv_dt = s.moving ? 1.0f / clip.frame_dt : 0.0f;
    // The cache row of the segment from frame a to the next one (a loop's last closes on frame 0);
    // -1 when the neighbour is the frame itself (a clamped end): a zero rotation vector.
    const int period = clip.frames - 1;
    auto row = [&](int a, int b) { return a == b ? -1 : (wrap == Wrap::Loop && a == period - 1 ? period : a); };
    const int r_m0 = row(s.km1, s.k0), r_01 = row(s.k0, s.k1), r_12 = row(s.k1, s.k2);
    const float inv_den0 = 1.0f / s.den0, inv_den1 = 1.0f / s.den1;
    const float* u_rows[3] = {nullptr, nullptr, nullptr};
    const size_t nj = size_t(clip.joints());
    const float zero[4] = {0, 0, 0, 0};
    const quat* rot0 = &clip.rot(s.k0, 0);
    const vec3 *pos_m = &clip.pos(s.km1, 0), *pos_0 = &clip.pos(s.k0, 0), *pos_1 = &clip.pos(s.k1, 0), *pos_2 = &clip.pos(s.k2, 0);
    if (const SimdOps* simd = simd_ops()) {
        // Every joint in SIMD blocks (the last one padded).
        const bool logs = !cache.log_scl.empty();
        CubicBlockArgs a{pos_m, pos_0, pos_1, pos_2, rot0,
                         r_m0 < 0 ? nullptr : cache.segment(r_m0, 0), r_01 < 0 ? nullptr : cache.segment(r_01, 0),
                         r_12 < 0 ? nullptr : cache.segment(r_12, 0),
                         logs ? &cache.log_scl[size_t(s.km1) * nj] : nullptr, logs ? &cache.log_scl[size_t(s.k0) * nj] : nullptr,
                         logs ? &cache.log_scl[size_t(s.k1) * nj] : nullptr, logs ? &cache.log_scl[size_t(s.k2) * nj] : nullptr,
                         cache.scaled.data(), {h00, h10, h01, h11}, {0, 0, 0}, inv_den0, inv_den1,
                         out.pos.data(), out.vel.data(), out.rot.data(), out.ang.data(), out.scl.data(), out.svl.data()};
        if constexpr (kVelocities) {
            a.d[0] = d10 * inv_dt, a.d[1] = d01 * inv_dt, a.d[2] = d11 * inv_dt;  // J_l is linear: scaled once here
        }
        simd_sample_cubic(*simd, a, nj, kVelocities);
        return;
    }
    for (size_t o = 0; o < nj; ++o) {
        const vec3 pm = pos_m[o], p0 = pos_0[o], p1 = pos_1[o], p2 = pos_2[o];
        const vec3 m0 = (p1 - pm) * inv_den0, m1 = (p2 - p0) * inv_den1;
        out.pos[o] = h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1;
        if constexpr (kVelocities) out.vel[o] = ((p1 - p0) * d01 + d10 * m0 + d11 * m1) * inv_dt;

        u_rows[0] = r_m0 < 0 ? zero : cache.segment(r_m0, int(o));
        u_rows[1] = r_01 < 0 ? zero : cache.segment(r_01, int(o));
        u_rows[2] = r_12 < 0 ? zero : cache.segment(r_12, int(o));
        const vec3 u_m0{u_rows[0][0], u_rows[0][1], u_rows[0][2]}, u_01{u_rows[1][0], u_rows[1][1], u_rows[1][2]},
            u_12{u_rows[2][0], u_rows[2][1], u_rows[2][2]};
        const vec3 w0 = (u_m0 + u_01) * inv_den0, w1 = (u_01 + u_12) * inv_den1;
        const vec3 pv = cross(u_01, w1);
        const vec3 t1 = w1 - 0.5f * pv + (r_01 < 0 ? 1.0f / 12.0f : u_rows[1][3]) * cross(u_01, pv);
        const vec3 phi = h10 * w0 + h01 * u_01 + h11 * t1;
        // exp(phi / 2) and J_l(phi) from one sincos of the half angle.
        const float t2 = dot(phi, phi);
        const float theta = std::sqrt(t2), half = 0.5f * theta;
        float sh, ch;
        sincosf(half, &sh, &ch);
        const float k = half < 1e-4f ? 0.5f * (1.0f - half * half / 6.0f) : sh / theta;
        out.rot[o] = quat_mul(quat{ch, phi.x * k, phi.y * k, phi.z * k}, rot0[o]);
        if constexpr (kVelocities) {
            const vec3 dphi = d10 * w0 + d01 * u_01 + d11 * t1;
            float a, b;
            so3_left_jacobian_coeffs(t2, theta, sh, 2.0f * sh * ch, a, b);
            const vec3 qv = cross(phi, dphi);
            out.ang[o] = (dphi + a * qv + b * cross(phi, qv)) * inv_dt;
        }

        if (!cache.scaled[o]) {
            out.scl[o] = vec3{1, 1, 1};
            if constexpr (kVelocities) out.svl[o] = vec3{};
            continue;
        }
        const vec3 lm = cache.log_scl[size_t(s.km1) * nj + o], l0 = cache.log_scl[size_t(s.k0) * nj + o],
                   l1 = cache.log_scl[size_t(s.k1) * nj + o], l2 = cache.log_scl[size_t(s.k2) * nj + o];
        const vec3 n0 = (l1 - lm) * inv_den0, n1 = (l2 - l0) * inv_den1;
        out.scl[o] = exp(h00 * l0 + h10 * n0 + h01 * l1 + h11 * n1);
        if constexpr (kVelocities) out.svl[o] = ((l1 - l0) * d01 + d10 * n0 + d11 * n1) * inv_dt;
    }
}

template <bool kVelocities>
void sample_linear_cached(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    detail::check_clip(__func__, clip, out, time, wrap, &cache);
    if (clip.frames < 2) return hold_frame(out, clip, 0);
    const Segment s = locate(clip, time, wrap);
    [[maybe_unused]] const float inv_dt = s.moving ? 1.0f / clip.frame_dt : 0.0f;
    const int period = clip.frames - 1;
    const int r = s.k0 == s.k1 ? -1 : (wrap == Wrap::Loop && s.k0 == period - 1 ? period : s.k0);
    const size_t nj = size_t(clip.joints());
    const quat* rot0 = &clip.rot(s.k0, 0);
    const vec3 *pos_0 = &clip.pos(s.k0, 0), *pos_1 = &clip.pos(s.k1, 0);
    for (size_t o = 0; o < nj; ++o) {
        const vec3 p0 = pos_0[o], p1 = pos_1[o];
        out.pos[o] = lerp(p0, p1, s.x);
        if constexpr (kVelocities) out.vel[o] = (p1 - p0) * inv_dt;
        const float* row = r < 0 ? nullptr : cache.segment(r, int(o));
        const vec3 u = row ? vec3{row[0], row[1], row[2]} : vec3{};
        const vec3 phi = u * s.x;
        const float half = 0.5f * length(phi);
        float sh, ch;
        sincosf(half, &sh, &ch);
        const float k = half < 1e-4f ? 0.5f * (1.0f - half * half / 6.0f) : 0.5f * sh / half;
        out.rot[o] = quat_mul(quat{ch, phi.x * k, phi.y * k, phi.z * k}, rot0[o]);
        if constexpr (kVelocities) out.ang[o] = u * inv_dt;  // exact: J_l(x u) u == u
        if (!cache.scaled[o]) {
            out.scl[o] = vec3{1, 1, 1};
            if constexpr (kVelocities) out.svl[o] = vec3{};
            continue;
        }
        const vec3 l0 = cache.log_scl[size_t(s.k0) * nj + o], l1 = cache.log_scl[size_t(s.k1) * nj + o];
        out.scl[o] = exp(lerp(l0, l1, s.x));
        if constexpr (kVelocities) out.svl[o] = (l1 - l0) * inv_dt;
    }
}

}  // namespace

void op_sample_linear(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    sample_linear_cached<true>(out, clip, cache, time, wrap);
}
void op_sample_linear_values(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    sample_linear_cached<false>(out, clip, cache, time, wrap);
}

void op_sample_cubic(Pose& out, const Clip& clip, double time, Wrap wrap) { sample_cubic<true>(out, clip, time, wrap); }
void op_sample_cubic(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    sample_cubic_cached<true>(out, clip, cache, time, wrap);
}
void op_sample_cubic_values(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap) {
    sample_cubic_cached<false>(out, clip, cache, time, wrap);
}
void op_sample_cubic_values(Pose& out, const Clip& clip, double time, Wrap wrap) {
    sample_cubic<false>(out, clip, time, wrap);
}

void op_timescale(Pose& pose, float speed) {
    detail::check_poses(__func__, {{"pose", &pose}});
    detail::check_finite(__func__, "speed", speed);
    for (int j = 0; j < pose.size(); ++j) {
        pose.vel[size_t(j)] *= speed;
        pose.ang[size_t(j)] *= speed;
        pose.svl[size_t(j)] *= speed;
    }
}

}  // namespace ks
