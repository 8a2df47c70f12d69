#include <kinesync/common/anim/ops_blend.h>

#include "common/src/anim/op_checks.h"

#include "common/src/anim/ops_simd.h"
#include "common/src/math/derivatives.h"

namespace ks {

namespace {
void blend_linear_parts(Pose& out, const Pose& lhs, const Pose& rhs, size_t i, float alpha, float alpha_vel) {
    out.pos[i] = lerp(lhs.pos[i], rhs.pos[i], alpha);
    out.vel[i] = lerp(lhs.vel[i], rhs.vel[i], alpha) + (rhs.pos[i] - lhs.pos[i]) * alpha_vel;
    out.svl[i] = lerp(lhs.svl[i], rhs.svl[i], alpha);
    const vec3 sl = lhs.scl[i], sr = rhs.scl[i];
    if (sl.x == sr.x && sl.y == sr.y && sl.z == sr.z) {  // equal scales (typically both 1): nothing to blend
        out.scl[i] = sl;
        return;
    }
    const vec3 ll = log(sl), lr = log(sr);
    out.scl[i] = exp(lerp(ll, lr, alpha));
    out.svl[i] += (lr - ll) * alpha_vel;
}
}  // namespace

namespace {
// Every joint through the SIMD kernels (ops_simd.h) when there are any; returns the first joint left.
size_t blend_simd(Pose& out, const Pose& lhs, const Pose& rhs, float alpha, float alpha_vel, bool velocities,
                  quat* dirs = nullptr) {
    const SimdOps* simd = simd_ops();
    const size_t n = size_t(lhs.size());
    if (!simd) return 0;
    const BlendBlockArgs a{lhs.pos.data(), rhs.pos.data(), lhs.vel.data(), rhs.vel.data(), lhs.ang.data(), rhs.ang.data(),
                           lhs.scl.data(), rhs.scl.data(), lhs.svl.data(), rhs.svl.data(), lhs.rot.data(), rhs.rot.data(),
                           alpha, alpha_vel, out.pos.data(), out.vel.data(), out.rot.data(), out.ang.data(), out.scl.data(),
                           out.svl.data(), dirs};
    simd_blend(*simd, a, n, velocities);
    return n;
}
}  // namespace

void op_blend(Pose& out, const Pose& lhs, const Pose& rhs, float alpha, float alpha_vel) {
    detail::check_poses(__func__, {{"out", &out}, {"lhs", &lhs}, {"rhs", &rhs}});
    detail::check_finite(__func__, "alpha", alpha);
    detail::check_finite(__func__, "alpha_vel", alpha_vel);
    for (size_t i = blend_simd(out, lhs, rhs, alpha, alpha_vel, true); i < size_t(lhs.size()); ++i) {
        blend_linear_parts(out, lhs, rhs, i, alpha, alpha_vel);
        const quat path = quat_abs(quat_mul_inv(rhs.rot[i], lhs.rot[i]));
        out.rot[i] = quat_slerp_path_kinematic(lhs.rot[i], lhs.ang[i], rhs.ang[i], path, alpha, alpha_vel, out.ang[i]);
    }
}

void op_blend_values(Pose& out, const Pose& lhs, const Pose& rhs, float alpha) {
    detail::check_poses(__func__, {{"out", &out}, {"lhs", &lhs}, {"rhs", &rhs}});
    detail::check_finite(__func__, "alpha", alpha);
    for (size_t i = blend_simd(out, lhs, rhs, alpha, 0.0f, false); i < size_t(lhs.size()); ++i) {
        out.pos[i] = lerp(lhs.pos[i], rhs.pos[i], alpha);
        out.rot[i] = quat_slerp_shortest(lhs.rot[i], rhs.rot[i], alpha);
        const vec3 sl = lhs.scl[i], sr = rhs.scl[i];
        out.scl[i] = (sl.x == sr.x && sl.y == sr.y && sl.z == sr.z) ? sl : eerp(sl, sr, alpha);
    }
}

void op_blend_via_values(Pose& out, const Pose& lhs, const Pose& rhs, Span<quat> dirs, float alpha) {
    detail::check_count(__func__, "dirs", dirs.size(), detail::check_poses(__func__, {{"out", &out}, {"lhs", &lhs}, {"rhs", &rhs}}));
    detail::check_finite(__func__, "alpha", alpha);
    for (size_t i = blend_simd(out, lhs, rhs, alpha, 0.0f, false, dirs.data()); i < size_t(lhs.size()); ++i) {
        out.pos[i] = lerp(lhs.pos[i], rhs.pos[i], alpha);
        dirs[i] = quat_via_path(lhs.rot[i], rhs.rot[i], dirs[i]);
        out.rot[i] = quat_mul(quat_scale_path(dirs[i], alpha), lhs.rot[i]);
        const vec3 sl = lhs.scl[i], sr = rhs.scl[i];
        out.scl[i] = (sl.x == sr.x && sl.y == sr.y && sl.z == sr.z) ? sl : eerp(sl, sr, alpha);
    }
}

void op_blend_via(Pose& out, const Pose& lhs, const Pose& rhs, Span<quat> dirs, float alpha, float alpha_vel) {
    detail::check_count(__func__, "dirs", dirs.size(), detail::check_poses(__func__, {{"out", &out}, {"lhs", &lhs}, {"rhs", &rhs}}));
    detail::check_finite(__func__, "alpha", alpha);
    detail::check_finite(__func__, "alpha_vel", alpha_vel);
    for (size_t i = blend_simd(out, lhs, rhs, alpha, alpha_vel, true, dirs.data()); i < size_t(lhs.size()); ++i) {
        blend_linear_parts(out, lhs, rhs, i, alpha, alpha_vel);
        dirs[i] = quat_via_path(lhs.rot[i], rhs.rot[i], dirs[i]);
        out.rot[i] = quat_slerp_path_kinematic(lhs.rot[i], lhs.ang[i], rhs.ang[i], dirs[i], alpha, alpha_vel, out.ang[i]);
    }
}

}  // namespace ks
