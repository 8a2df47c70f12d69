#include <kinesync/common/anim/ops_inertialize.h>

#include "common/src/anim/op_checks.h"
#include "common/src/anim/ops_simd.h"

#include <kinesync/common/dynamics/springs.h>

#include <algorithm>

namespace ks {

namespace {
bool is_zero(vec3 v) { return v.x == 0.0f && v.y == 0.0f && v.z == 0.0f; }
PoseIn pose_in(const Pose& p) { return {p.pos.data(), p.vel.data(), p.rot.data(), p.ang.data(), p.scl.data(), p.svl.data()}; }
PoseOut pose_out(Pose& p) { return {p.pos.data(), p.vel.data(), p.rot.data(), p.ang.data(), p.scl.data(), p.svl.data()}; }
OffsetIO offset_io(const PoseOffset& o) {  // the kernels that only read it take it as const
    auto* m = const_cast<PoseOffset*>(&o);
    return {m->pos.data(), m->vel.data(), m->rot.data(), m->ang.data(), m->scl.data(), m->svl.data()};
}
bool same(vec3 a, vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
bool same(quat a, quat b) { return a.w == b.w && a.x == b.x && a.y == b.y && a.z == b.z; }
}  // namespace

namespace {

// The rotation offset abs(src * dst^-1) (short way), its rotation vector x, and the rate of x that
// makes the output's angular velocity J_l(x) x' + R(off) w_dst equal w_src.
struct RotationOffset {
    quat off;
    vec3 x, rate;
};
RotationOffset rotation_offset(quat src, vec3 src_ang, quat dst, vec3 dst_ang) {
    RotationOffset r;
    r.off = quat_abs(quat_mul_inv(src, dst));
    r.x = quat_to_scaled_angle_axis(r.off);
    r.rate = so3_left_jacobian_inv_mul(r.x, src_ang - quat_mul_vec3(r.off, dst_ang));
    return r;
}

}  // namespace

void op_inertialize_transition(Pose& offset, const Pose& src, const Pose& dst) {
    detail::check_poses(__func__, {{"src", &src}, {"dst", &dst}, {"offset", &offset}});
    for (size_t i = 0; i < size_t(src.size()); ++i) {
        offset.pos[i] = src.pos[i] - dst.pos[i];
        offset.vel[i] = src.vel[i] - dst.vel[i];
        const RotationOffset r = rotation_offset(src.rot[i], src.ang[i], dst.rot[i], dst.ang[i]);
        offset.rot[i] = r.off;
        offset.ang[i] = r.rate;
        offset.scl[i] = src.scl[i] / dst.scl[i];
        offset.svl[i] = src.svl[i] - dst.svl[i];
    }
}

namespace {
void check_inertialize(const char* op, const Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration) {
    detail::check_poses(op, {{"input", &input}, {"offset", &offset}, {"out", &out}});
    detail::check_finite(op, "blend_time", blend_time);
    detail::check_non_negative(op, "blend_duration", blend_duration);  // 0: the offset is gone at once
}
}  // namespace

void op_inertialize(Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration) {
    check_inertialize(__func__, out, offset, input, blend_time, blend_duration);
    const float d = std::max(blend_duration, 1e-8f);
    const float t = clampf(blend_time / d, 0.0f, 1.0f);
    // Cubic with value x, slope v at t=0 and value and slope 0 at t=1, in seconds:
    // off(s) = w0 x + w1 v, d off/ds = w2 x + w3 v.
    const float w0 = 2 * t * t * t - 3 * t * t + 1;
    const float w1 = (t * t * t - 2 * t * t + t) * d;
    const float w2 = (6 * t * t - 6 * t) / d;
    const float w3 = 3 * t * t - 4 * t + 1;
    for (size_t i = 0; i < size_t(input.size()); ++i) {
        out.pos[i] = input.pos[i] + w0 * offset.pos[i] + w1 * offset.vel[i];
        out.vel[i] = input.vel[i] + w2 * offset.pos[i] + w3 * offset.vel[i];

        const vec3 x = quat_to_scaled_angle_axis(quat_abs(offset.rot[i]));
        const vec3 phi = w0 * x + w1 * offset.ang[i];
        const vec3 dphi = w2 * x + w3 * offset.ang[i];
        const quat off = quat_from_scaled_angle_axis(phi);
        out.ang[i] = so3_left_jacobian_mul(phi, dphi) + quat_mul_vec3(off, input.ang[i]);
        out.rot[i] = quat_mul(off, input.rot[i]);

        const vec3 ls = log(offset.scl[i]);
        out.scl[i] = input.scl[i] * exp(w0 * ls + w1 * offset.svl[i]);
        out.svl[i] = input.svl[i] + w2 * ls + w3 * offset.svl[i];
    }
}

void op_inertialize_values(Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration) {
    check_inertialize(__func__, out, offset, input, blend_time, blend_duration);
    const float d = std::max(blend_duration, 1e-8f);
    const float t = clampf(blend_time / d, 0.0f, 1.0f);
    const float w0 = 2 * t * t * t - 3 * t * t + 1;
    const float w1 = (t * t * t - 2 * t * t + t) * d;
    for (size_t i = 0; i < size_t(input.size()); ++i) {
        out.pos[i] = input.pos[i] + w0 * offset.pos[i] + w1 * offset.vel[i];
        const vec3 x = quat_to_scaled_angle_axis(quat_abs(offset.rot[i]));
        out.rot[i] = quat_mul(quat_from_scaled_angle_axis(w0 * x + w1 * offset.ang[i]), input.rot[i]);
        out.scl[i] = input.scl[i] * exp(w0 * log(offset.scl[i]) + w1 * offset.svl[i]);
    }
}

void PoseOffset::resize(size_t n) {
    for (auto* v : {&pos, &vel, &rot, &ang, &scl, &svl}) v->resize(n);
}

void PoseOffset::clear() {
    for (auto* v : {&pos, &vel, &rot, &ang, &scl, &svl}) std::fill(v->begin(), v->end(), vec3{});
}

void op_offset_capture(PoseOffset& offset, const Pose& src, const Pose& dst) {
    detail::check_offset(__func__, offset, detail::check_poses(__func__, {{"src", &src}, {"dst", &dst}}));
    if (const SimdOps* simd = simd_ops()) {
        simd_offset_capture(*simd, OffsetCaptureBlockArgs{pose_in(src), pose_in(dst), offset_io(offset)}, size_t(src.size()));
        return;
    }
    for (size_t i = 0; i < size_t(src.size()); ++i) {
        offset.pos[i] = src.pos[i] - dst.pos[i];
        offset.vel[i] = src.vel[i] - dst.vel[i];
        if (same(src.rot[i], dst.rot[i]) && same(src.ang[i], dst.ang[i])) {
            offset.rot[i] = offset.ang[i] = vec3{};  // the same rotation: no offset, at no cost
        } else {
            const RotationOffset r = rotation_offset(src.rot[i], src.ang[i], dst.rot[i], dst.ang[i]);
            offset.rot[i] = r.x;  // kept as a rotation vector from here on
            offset.ang[i] = r.rate;
        }
        offset.scl[i] = same(src.scl[i], dst.scl[i]) ? vec3{} : log(src.scl[i] / dst.scl[i]);
        offset.svl[i] = src.svl[i] - dst.svl[i];
    }
}

void op_offset_decay(PoseOffset& offset, Span<const float> omega, float zeta, float dt,
                     Span<const float> omega_pos) {
    const int n = detail::check_offset(__func__, offset, int(offset.pos.size()));
    detail::check_count(__func__, "omega", omega.size(), n);
    if (!omega_pos.empty()) detail::check_count(__func__, "omega_pos", omega_pos.size(), n);
    detail::check_finite(__func__, "zeta", zeta);
    detail::check_finite(__func__, "dt", dt);
    auto step = [](const DampedStep& s, vec3& x, vec3& v) {
        const vec3 x0 = x, v0 = v;
        x = s.xx * x0 + s.xv * v0;
        v = s.vx * x0 + s.vv * v0;
    };
    // Most joints share a frequency (the correction's, unclamped): each step is computed once.
    float last_omega = 0.0f;
    DampedStep s{};
    bool have = false;
    auto step_of = [&](size_t i) {
        if (!have || omega[i] != last_omega) s = damped_decay_step(last_omega = omega[i], zeta, dt), have = true;
        return s;
    };
    if (const SimdOps* simd = simd_ops()) {
        // Runs of joints with the same steps, each channel's floats in a row.
        auto floats = [](std::vector<vec3>& ch, size_t i) { return &ch[i].x; };
        for (size_t i = 0; i < size_t(n);) {
            const bool own_pos = !omega_pos.empty() && omega_pos[i] != omega[i];
            const DampedStep r = step_of(i), p = own_pos ? damped_decay_step(omega_pos[i], zeta, dt) : r;
            size_t end = i + 1;  // a joint with a position frequency of its own is a run of one
            while (!own_pos && end < size_t(n) && omega[end] == omega[i] && (omega_pos.empty() || omega_pos[end] == omega[end])) ++end;
            const float ps[4] = {p.xx, p.xv, p.vx, p.vv}, rs[4] = {r.xx, r.xv, r.vx, r.vv};
            const size_t m = 3 * (end - i);
            simd_decay_flat(*simd, floats(offset.pos, i), floats(offset.vel, i), m, ps);
            simd_decay_flat(*simd, floats(offset.rot, i), floats(offset.ang, i), m, rs);
            simd_decay_flat(*simd, floats(offset.scl, i), floats(offset.svl, i), m, rs);
            i = end;
        }
        return;
    }
    for (size_t i = 0; i < offset.pos.size(); ++i) {
        step_of(i);
        step(omega_pos.empty() || omega_pos[i] == omega[i] ? s : damped_decay_step(omega_pos[i], zeta, dt), offset.pos[i],
             offset.vel[i]);
        step(s, offset.rot[i], offset.ang[i]);
        step(s, offset.scl[i], offset.svl[i]);
    }
}

void op_offset_apply(Pose& out, const PoseOffset& offset, const Pose& input) {
    detail::check_offset(__func__, offset, detail::check_poses(__func__, {{"input", &input}, {"out", &out}}));
    if (const SimdOps* simd = simd_ops()) {
        simd_offset_apply(*simd, OffsetApplyBlockArgs{offset_io(offset), pose_in(input), pose_out(out)}, size_t(input.size()), true);
        return;
    }
    for (size_t i = 0; i < size_t(input.size()); ++i) {
        out.pos[i] = input.pos[i] + offset.pos[i];
        out.vel[i] = input.vel[i] + offset.vel[i];
        // A joint without a rotation or scale offset (one at rest, or settled) is its input: the
        // same values the formulas give for zero, without their cost.
        if (is_zero(offset.rot[i]) && is_zero(offset.ang[i])) {
            out.rot[i] = input.rot[i];
            out.ang[i] = input.ang[i];
        } else {
            const quat off = quat_from_scaled_angle_axis(offset.rot[i]);
            out.rot[i] = quat_mul(off, input.rot[i]);
            out.ang[i] = so3_left_jacobian_mul(offset.rot[i], offset.ang[i]) + quat_mul_vec3(off, input.ang[i]);
        }
        out.scl[i] = is_zero(offset.scl[i]) ? input.scl[i] : input.scl[i] * exp(offset.scl[i]);
        out.svl[i] = input.svl[i] + offset.svl[i];
    }
}

void op_offset_apply_values(Pose& out, const PoseOffset& offset, const Pose& input) {
    detail::check_offset(__func__, offset, detail::check_poses(__func__, {{"input", &input}, {"out", &out}}));
    if (const SimdOps* simd = simd_ops()) {
        simd_offset_apply(*simd, OffsetApplyBlockArgs{offset_io(offset), pose_in(input), pose_out(out)}, size_t(input.size()), false);
        return;
    }
    for (size_t i = 0; i < size_t(input.size()); ++i) {
        out.pos[i] = input.pos[i] + offset.pos[i];
        out.rot[i] = quat_mul(quat_from_scaled_angle_axis(offset.rot[i]), input.rot[i]);
        out.scl[i] = input.scl[i] * exp(offset.scl[i]);
    }
}

}  // namespace ks
