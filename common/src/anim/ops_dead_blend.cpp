#include <kinesync/common/anim/ops_dead_blend.h>

#include "common/src/anim/op_checks.h"

#include <kinesync/common/anim/ops_blend.h>
#include "common/src/anim/ops_simd.h"

namespace ks {

void op_extrapolate_decayed(Pose& out, const Pose& in, float time, float halflife) {
    detail::check_poses(__func__, {{"out", &out}, {"in", &in}});
    detail::check_finite(__func__, "time", time);
    detail::check_positive(__func__, "halflife", halflife);
    const float y = kLn2 / std::max(halflife, 1e-8f);
    const float decay = std::exp(-y * time);
    const float alpha = -std::expm1(-y * time) / y;  // integral of the decay, accurate for small y t
    if (const SimdOps* simd = simd_ops()) {
        const ExtrapolateBlockArgs a{in.pos.data(), in.vel.data(), in.ang.data(), in.scl.data(), in.svl.data(), in.rot.data(),
                                     alpha, decay, out.pos.data(), out.vel.data(), out.rot.data(), out.ang.data(),
                                     out.scl.data(), out.svl.data()};
        simd_extrapolate(*simd, a, size_t(in.size()), true);
        return;
    }
    for (size_t i = 0; i < size_t(in.size()); ++i) {
        out.pos[i] = in.pos[i] + in.vel[i] * alpha;
        out.rot[i] = quat_mul(quat_from_scaled_angle_axis(in.ang[i] * alpha), in.rot[i]);
        out.scl[i] = in.scl[i] * exp(in.svl[i] * alpha);
        // Along a fixed axis J_l is the identity, so these are the exact rates.
        out.vel[i] = in.vel[i] * decay;
        out.ang[i] = in.ang[i] * decay;
        out.svl[i] = in.svl[i] * decay;
    }
}

void op_extrapolate_decayed_values(Pose& out, const Pose& in, float time, float halflife) {
    detail::check_poses(__func__, {{"out", &out}, {"in", &in}});
    detail::check_finite(__func__, "time", time);
    detail::check_positive(__func__, "halflife", halflife);
    const float y = kLn2 / std::max(halflife, 1e-8f);
    const float alpha = -std::expm1(-y * time) / y;
    if (const SimdOps* simd = simd_ops()) {
        const ExtrapolateBlockArgs a{in.pos.data(), in.vel.data(), in.ang.data(), in.scl.data(), in.svl.data(), in.rot.data(),
                                     alpha, 0.0f, out.pos.data(), out.vel.data(), out.rot.data(), out.ang.data(),
                                     out.scl.data(), out.svl.data()};
        simd_extrapolate(*simd, a, size_t(in.size()), false);
        return;
    }
    for (size_t i = 0; i < size_t(in.size()); ++i) {
        out.pos[i] = in.pos[i] + in.vel[i] * alpha;
        out.rot[i] = quat_mul(quat_from_scaled_angle_axis(in.ang[i] * alpha), in.rot[i]);
        const vec3 sv = in.svl[i];
        out.scl[i] = sv.x == 0.0f && sv.y == 0.0f && sv.z == 0.0f ? in.scl[i] : in.scl[i] * exp(sv * alpha);
    }
}

void op_dead_blending_transition(Pose& transition, Span<quat> dirs, const Pose& current) {
    detail::check_count(__func__, "dirs", dirs.size(), detail::check_poses(__func__, {{"current", &current}, {"transition", &transition}}));
    transition.pos = current.pos, transition.rot = current.rot, transition.scl = current.scl;  // same sizes: no allocation
    transition.vel = current.vel, transition.ang = current.ang, transition.svl = current.svl;
    for (quat& d : dirs) d = quat{};
}

void op_dead_blending(Pose& out, Pose& extrapolated, Span<quat> dirs, const Pose& transition,
                      const Pose& input, float extrapolation_halflife, float blend_time, float blend_duration) {
    op_extrapolate_decayed(extrapolated, transition, blend_time, extrapolation_halflife);
    op_blend_via(out, extrapolated, input, dirs, smoothstep_blend_alpha(blend_time, blend_duration),
                 smoothstep_blend_alpha_vel(blend_time, blend_duration));
}

void op_dead_blending_values(Pose& out, Pose& extrapolated, Span<quat> dirs, const Pose& transition, const Pose& input,
                             float extrapolation_halflife, float blend_time, float blend_duration) {
    op_extrapolate_decayed_values(extrapolated, transition, blend_time, extrapolation_halflife);
    op_blend_via_values(out, extrapolated, input, dirs, smoothstep_blend_alpha(blend_time, blend_duration));
}

}  // namespace ks
