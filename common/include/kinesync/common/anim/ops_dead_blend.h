#pragma once
// Dead blending (D. Holden): extrapolate the pose shown at the transition with decaying
// velocities, and cross-fade (smoothstep, slerp_via) from that extrapolation into the new input.

#include <kinesync/common/span.h>

#include <kinesync/common/anim/pose.h>

namespace ks {

// Extrapolates `in` for `time` seconds with velocities decaying by half every `halflife`:
// displacement v (1 - e^{-y t}) / y, velocity v e^{-y t}, y = ln 2 / halflife. Exact derivatives.
// Every joint is extrapolated; a caller that wants the root held copies it back.
void op_extrapolate_decayed(Pose& out, const Pose& in, float time, float halflife);

// At a transition: remember the pose shown (with its velocities) and reset the blend paths.
void op_dead_blending_transition(Pose& transition, Span<quat> dirs, const Pose& current);

// out = blend_via(extrapolate_decayed(transition, blend_time), input, smoothstep(blend_time / duration)).
// `extrapolated` is caller-owned scratch. Velocities are exact, the weight's rate included.
void op_dead_blending(Pose& out, Pose& extrapolated, Span<quat> dirs, const Pose& transition,
                      const Pose& input, float extrapolation_halflife, float blend_time, float blend_duration);

// The same values, output velocities not computed (the cost baselines; the extrapolation still
// reads the transition's velocities, which move it).
void op_extrapolate_decayed_values(Pose& out, const Pose& in, float time, float halflife);
void op_dead_blending_values(Pose& out, Pose& extrapolated, Span<quat> dirs, const Pose& transition, const Pose& input,
                             float extrapolation_halflife, float blend_time, float blend_duration);

}  // namespace ks
