#pragma once
// Additive layers with velocities. An additive pose holds offsets: pos is added, rot is a
// rotation applied on the left (parent side) or right (local side), scl multiplies; its
// velocities are the offsets' rates of change. The weight alpha scales the offset in
// rotation-vector / log-scale space and may move at alpha_vel per second.
//
// Rotation velocities are exact for any weight: the weighted offset Exp(alpha a) has angular
// velocity J_l(alpha a) (alpha_vel a + alpha J_l(a)^-1 w_add), which the published
// "alpha * w_add" only matches at alpha = 1. On the right, the whole offset velocity (the
// alpha_vel term included) is rotated by the current rotation.

#include <kinesync/common/anim/pose.h>

namespace ks {

// out.rot = Exp(alpha a) * out.rot (offset in the parent frame).
void op_additive(Pose& out, const Pose& add, float alpha, float alpha_vel);
inline void op_additive_static(Pose& out, const Pose& add, float alpha) { op_additive(out, add, alpha, 0.0f); }
// out.rot = out.rot * Exp(alpha a) (offset in the joint's own frame).
void op_additive_local(Pose& out, const Pose& add, float alpha, float alpha_vel);

// The same values, velocities neither read nor written (the cost baseline).
void op_additive_values(Pose& out, const Pose& add, float alpha);
void op_additive_local_values(Pose& out, const Pose& add, float alpha);
inline void op_additive_local_static(Pose& out, const Pose& add, float alpha) {
    op_additive_local(out, add, alpha, 0.0f);
}

}  // namespace ks
