#pragma once
// Two-way blends with velocities, and the smoothstep cross-fade weight.

#include <algorithm>
#include <kinesync/common/span.h>

#include <kinesync/common/anim/pose.h>

namespace ks {

inline float smoothstep(float x) { return x * x * (3.0f - 2.0f * x); }
inline float smoothstep_dx(float x) { return 6.0f * x * (1.0f - x); }
// Cross-fade weight after blend_time of blend_duration, and its rate (per second).
inline float smoothstep_blend_alpha(float blend_time, float blend_duration, float eps = 1e-8f) {
    return smoothstep(clampf(blend_time / std::max(blend_duration, eps), 0.0f, 1.0f));
}
inline float smoothstep_blend_alpha_vel(float blend_time, float blend_duration, float eps = 1e-8f) {
    const float d = std::max(blend_duration, eps);
    const float x = blend_time / d;
    return x <= 0.0f || x >= 1.0f ? 0.0f : smoothstep_dx(x) / d;
}

// out = lerp/slerp_shortest/eerp(lhs, rhs, alpha), where alpha changes at alpha_vel per second.
// Positions and scales get the exact lerp of velocities plus alpha_vel * difference; rotations
// get the exact derivative of the slerp (see quat_slerp_path_kinematic), not the published
// weighted sum, which is 2-6 % off for large differences.
void op_blend(Pose& out, const Pose& lhs, const Pose& rhs, float alpha, float alpha_vel);
inline void op_blend_static(Pose& out, const Pose& lhs, const Pose& rhs, float alpha) {
    op_blend(out, lhs, rhs, alpha, 0.0f);
}
// Values only (lerp / slerp_shortest / eerp), velocities untouched: the cost baseline.
void op_blend_values(Pose& out, const Pose& lhs, const Pose& rhs, float alpha);
// As op_blend, but rotations use quat_slerp_via with one remembered path per joint (`dirs`,
// caller-owned, reset to identity when the blend starts), so no joint switches sides mid-blend.
void op_blend_via(Pose& out, const Pose& lhs, const Pose& rhs, Span<quat> dirs, float alpha, float alpha_vel);
// The same values, velocities not computed (dirs updated as op_blend_via does).
void op_blend_via_values(Pose& out, const Pose& lhs, const Pose& rhs, Span<quat> dirs, float alpha);

}  // namespace ks
