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

#include "common/anim/pose.h"

namespace ks {

void op_inertialize_transition(Pose& offset, const Pose& src, const Pose& dst);

// blend_time: seconds since the transition; velocities are exact d/dt with blend_time advancing
// with time and `input` moving along its own velocities.
void op_inertialize(Pose& out, const Pose& offset, const Pose& input, float blend_time, float blend_duration);

}  // namespace ks
