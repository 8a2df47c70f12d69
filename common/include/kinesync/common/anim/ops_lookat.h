#pragma once
// Procedural look-at written on kforms, so its angular velocity comes out exactly.

#include <kinesync/common/anim/pose.h>

namespace ks {

// Rotates `joint` (in its own frame) so its local axis `fwd` points at a target moving at
// target_vel. `global` must be the FK of `local` (with velocities). weight in [0, 1] applies a
// fraction of the rotation in rotation-vector space (exact velocity via the left Jacobian).
// Writes local.rot/ang of `joint`; recompute FK for it and its descendants afterwards.
void op_lookat(Pose& local, const Pose& global, int joint, vec3 target_pos, vec3 target_vel, vec3 fwd,
               float weight = 1.0f);
// The same rotation, no angular velocity (the cost baseline). The values-only two-bone IK is
// op_two_bone_ik_static (ops_ik.h).
void op_lookat_values(Pose& local, const Pose& global, int joint, vec3 target_pos, vec3 fwd, float weight = 1.0f);

}  // namespace ks
