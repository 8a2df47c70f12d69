#include <kinesync/common/anim/ops_additive.h>

#include "common/src/anim/op_checks.h"

namespace ks {

namespace {
// The weighted offset rotation and its angular velocity (parent frame of the offset).
quat weighted_offset(quat add_rot, vec3 add_ang, float alpha, float alpha_vel, vec3& w_out) {
    const vec3 a = quat_to_scaled_angle_axis(quat_abs(add_rot));
    const vec3 da = so3_left_jacobian_inv_mul(a, add_ang);
    const vec3 phi = a * alpha;
    w_out = so3_left_jacobian_mul(phi, a * alpha_vel + da * alpha);
    return quat_from_scaled_angle_axis(phi);
}

void add_linear_parts(Pose& out, const Pose& add, size_t i, float alpha, float alpha_vel) {
    out.pos[i] = out.pos[i] + add.pos[i] * alpha;
    out.vel[i] = out.vel[i] + add.vel[i] * alpha + add.pos[i] * alpha_vel;
    const vec3 ls = log(add.scl[i]);
    out.scl[i] = out.scl[i] * exp(ls * alpha);
    out.svl[i] = out.svl[i] + add.svl[i] * alpha + ls * alpha_vel;
}
}  // namespace

void op_additive(Pose& out, const Pose& add, float alpha, float alpha_vel) {
    detail::check_poses("op_additive", {{"out", &out}, {"add", &add}});
    detail::check_finite("op_additive", "alpha", alpha);
    detail::check_finite("op_additive", "alpha_vel", alpha_vel);
    for (size_t i = 0; i < size_t(out.size()); ++i) {
        add_linear_parts(out, add, i, alpha, alpha_vel);
        vec3 w_off;
        const quat off = weighted_offset(add.rot[i], add.ang[i], alpha, alpha_vel, w_off);
        out.ang[i] = w_off + quat_mul_vec3(off, out.ang[i]);
        out.rot[i] = quat_mul(off, out.rot[i]);
    }
}

namespace {
void add_linear_values(Pose& out, const Pose& add, size_t i, float alpha) {
    out.pos[i] = out.pos[i] + add.pos[i] * alpha;
    const vec3 s = add.scl[i];
    if (s.x != 1.0f || s.y != 1.0f || s.z != 1.0f) out.scl[i] = out.scl[i] * exp(log(s) * alpha);
}
}  // namespace

void op_additive_values(Pose& out, const Pose& add, float alpha) {
    detail::check_poses("op_additive_values", {{"out", &out}, {"add", &add}});
    detail::check_finite("op_additive_values", "alpha", alpha);
    for (size_t i = 0; i < size_t(out.size()); ++i) {
        add_linear_values(out, add, i, alpha);
        out.rot[i] = quat_mul(quat_scale_path(quat_abs(add.rot[i]), alpha), out.rot[i]);
    }
}

void op_additive_local_values(Pose& out, const Pose& add, float alpha) {
    detail::check_poses("op_additive_local_values", {{"out", &out}, {"add", &add}});
    detail::check_finite("op_additive_local_values", "alpha", alpha);
    for (size_t i = 0; i < size_t(out.size()); ++i) {
        add_linear_values(out, add, i, alpha);
        out.rot[i] = quat_mul(out.rot[i], quat_scale_path(quat_abs(add.rot[i]), alpha));
    }
}

void op_additive_local(Pose& out, const Pose& add, float alpha, float alpha_vel) {
    detail::check_poses("op_additive_local", {{"out", &out}, {"add", &add}});
    detail::check_finite("op_additive_local", "alpha", alpha);
    detail::check_finite("op_additive_local", "alpha_vel", alpha_vel);
    for (size_t i = 0; i < size_t(out.size()); ++i) {
        add_linear_parts(out, add, i, alpha, alpha_vel);
        vec3 w_off;
        const quat off = weighted_offset(add.rot[i], add.ang[i], alpha, alpha_vel, w_off);
        out.ang[i] = out.ang[i] + quat_mul_vec3(out.rot[i], w_off);
        out.rot[i] = quat_mul(out.rot[i], off);
    }
}

}  // namespace ks
