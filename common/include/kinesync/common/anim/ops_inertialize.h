#pragma once
// Offset-based inertialization with a cubic decay that ends exactly at the blend duration.
//
// At the transition, op_inertialize_transition records the offset between the source pose (what
// was shown) and the destination (the new animation at that instant). Each frame after,
// op_inertialize adds the decayed offset to the destination and the output keeps the source's
// value and velocity at blend_time = 0, and becomes exactly the destination at the end.
//
// The offset pose stores: pos/vel the position offset and its rate; rot the rotation offset
// abs(src * dst^-1) (quat_abs, so the offset never spins the long way) and, in ang, the rate of
// its rotation vector (chosen so the output's angular velocity equals the source's at the
// transition); scl/svl the scale ratio and the rate of its log.

#include <kinesync/common/span.h>
#include <vector>

#include <kinesync/common/anim/pose.h>

namespace ks {

void op_inertialize_transition(Pose& offset, const Pose& src, const Pose& dst);

// blend_time: seconds since the transition; velocities are exact d/dt with blend_time advancing
// with time and `input` moving along its own velocities.
void op_inertialize(Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration);
// The same values; output velocities not computed (the offset's rates still shape the curve).
void op_inertialize_values(Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration);

// Spring inertialization: an offset between what was shown and a new input that decays as a
// damped oscillator (x'' + 2 zeta w x' + w^2 x = 0 on each channel), exactly over any dt, with w
// per joint. Unlike op_inertialize it has no end: a new offset may be captured at any time from
// what is shown, so corrections chain and the output stays C1.
//
// Rotations are kept as rotation vectors, never re-wrapped: a decaying offset whose angle passes
// pi (a large, fast correction) stays one continuous path instead of jumping to the other side.
struct PoseOffset {
    std::vector<vec3> pos, vel;  // position offset and its rate
    std::vector<vec3> rot, ang;  // rotation vector of out * in^-1 and its rate
    std::vector<vec3> scl, svl;  // log scale ratio and its rate
    void resize(size_t n);
    void clear();  // all zero
};
// The offset that makes op_offset_apply(out, offset, dst) == src, velocities included.
void op_offset_capture(PoseOffset& offset, const Pose& src, const Pose& dst);
// omega: per joint, for rotations and scales, and for positions unless omega_pos is given (then
// per joint too: e.g. a root translation corrected at a pace of its own).
void op_offset_decay(PoseOffset& offset, Span<const float> omega, float zeta, float dt,
                     Span<const float> omega_pos = {});
// out = the offset applied to input: pos + x, exp(x) * rot, scl * exp(x), with exact velocities.
void op_offset_apply(Pose& out, const PoseOffset& offset, const Pose& input);
// The same values, velocities not computed.
void op_offset_apply_values(Pose& out, const PoseOffset& offset, const Pose& input);

}  // namespace ks
