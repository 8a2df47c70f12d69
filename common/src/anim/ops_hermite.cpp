#include <kinesync/common/anim/ops_hermite.h>

#include <string>

#include "common/src/anim/op_checks.h"
#include "common/src/anim/ops_simd.h"

namespace ks {

namespace {
bool all(vec3 v, float c) { return v.x == c && v.y == c && v.z == c; }

// The basis at x: h00 h10 h01 h11, and its derivative in x.
struct Basis {
    float h[4], d[4];
    explicit Basis(float x) {
        const float x2 = x * x, x3 = x2 * x;
        h[0] = 2 * x3 - 3 * x2 + 1, h[1] = x3 - 2 * x2 + x, h[2] = -2 * x3 + 3 * x2, h[3] = x3 - x2;
        d[0] = 6 * x2 - 6 * x, d[1] = 3 * x2 - 4 * x + 1, d[2] = -6 * x2 + 6 * x, d[3] = 3 * x2 - 2 * x;
    }
    template <class T>
    T value(T p0, T m0, T p1, T m1) const { return h[0] * p0 + h[1] * m0 + h[2] * p1 + h[3] * m1; }
    template <class T>
    T rate(T p0, T m0, T p1, T m1) const { return d[0] * p0 + d[1] * m0 + d[2] * p1 + d[3] * m1; }
};
}  // namespace

void op_hermite_prepare(HermiteSegment& seg, const Pose& a, const Pose& b, float dt) {
    const int joints = detail::check_poses(__func__, {{"a", &a}, {"b", &b}});
    detail::check_positive(__func__, "dt", dt);
    const size_t n = size_t(joints);
    seg.dt = dt;
    seg.u.resize(n), seg.w1.resize(n), seg.ls_a.resize(n), seg.ls_b.resize(n), seg.scaled.resize(n);
    if (const SimdOps* simd = simd_ops()) {
        simd_hermite_prepare(*simd,
                             HermitePrepareBlockArgs{a.rot.data(), b.rot.data(), b.ang.data(), a.scl.data(), b.scl.data(), a.svl.data(),
                                                     b.svl.data(), dt, seg.u.data(), seg.w1.data(), seg.ls_a.data(), seg.ls_b.data(),
                                                     seg.scaled.data()},
                             n);
        return;
    }
    for (size_t j = 0; j < n; ++j) {
        seg.scaled[j] = !(all(a.scl[j], 1) && all(b.scl[j], 1) && all(a.svl[j], 0) && all(b.svl[j], 0));
        seg.ls_a[j] = seg.scaled[j] ? log(a.scl[j]) : vec3{};
        seg.ls_b[j] = seg.scaled[j] ? log(b.scl[j]) : vec3{};
        seg.u[j] = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(b.rot[j], a.rot[j])));
        seg.w1[j] = so3_left_jacobian_inv_mul(seg.u[j], b.ang[j] * dt);
    }
}

void op_hermite(Pose& out, const HermiteSegment& seg, const Pose& a, const Pose& b, float x) {
    const int joints = detail::check_poses(__func__, {{"out", &out}, {"a", &a}, {"b", &b}});
    detail::check_count(__func__, "seg.u", seg.u.size(), joints);
    detail::check_count(__func__, "seg.w1", seg.w1.size(), joints);
    detail::check_count(__func__, "seg.ls_a", seg.ls_a.size(), joints);
    detail::check_count(__func__, "seg.ls_b", seg.ls_b.size(), joints);
    detail::check_count(__func__, "seg.scaled", seg.scaled.size(), joints);
    detail::check_finite(__func__, "x", x);
    detail::check_positive(__func__, "seg.dt", seg.dt);
    const Basis basis(x);
    const float dt = seg.dt, inv = 1.0f / dt;
    const size_t n = size_t(joints);
    if (const SimdOps* simd = simd_ops()) {
        HermiteBlockArgs args{PoseIn{a.pos.data(), a.vel.data(), a.rot.data(), a.ang.data(), a.scl.data(), a.svl.data()},
                              PoseIn{b.pos.data(), b.vel.data(), b.rot.data(), b.ang.data(), b.scl.data(), b.svl.data()},
                              seg.u.data(), seg.w1.data(), seg.ls_a.data(), seg.ls_b.data(), seg.scaled.data(),
                              {}, {}, dt, inv,
                              PoseOut{out.pos.data(), out.vel.data(), out.rot.data(), out.ang.data(), out.scl.data(), out.svl.data()}};
        std::copy(basis.h, basis.h + 4, args.h);
        std::copy(basis.d, basis.d + 4, args.d);
        simd_hermite(*simd, args, n);
        return;
    }
    for (size_t j = 0; j < n; ++j) {  // every input read before any output is written (out may be a or b)
        const vec3 p0 = a.pos[j], m0 = a.vel[j] * dt, p1 = b.pos[j], m1 = b.vel[j] * dt, w0 = a.ang[j] * dt;
        const vec3 n0 = a.svl[j] * dt, n1 = b.svl[j] * dt;
        const quat r0 = a.rot[j];
        out.pos[j] = basis.value(p0, m0, p1, m1);
        out.vel[j] = basis.rate(p0, m0, p1, m1) * inv;
        const vec3 phi = basis.value(vec3{}, w0, seg.u[j], seg.w1[j]), dphi = basis.rate(vec3{}, w0, seg.u[j], seg.w1[j]);
        out.rot[j] = quat_mul(quat_from_scaled_angle_axis(phi), r0);
        out.ang[j] = so3_left_jacobian_mul(phi, dphi) * inv;
        if (!seg.scaled[j]) {  // log 1 = 0 and no scale velocity: exp 0 = 1, nothing to compute
            out.scl[j] = vec3{1, 1, 1};
            out.svl[j] = vec3{};
            continue;
        }
        out.scl[j] = exp(basis.value(seg.ls_a[j], n0, seg.ls_b[j], n1));
        out.svl[j] = basis.rate(seg.ls_a[j], n0, seg.ls_b[j], n1) * inv;
    }
}

}  // namespace ks
