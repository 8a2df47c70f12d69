#pragma once
// Forward and backward kinematics with velocities, and finite differences of poses.

#include <kinesync/common/span.h>

#include <kinesync/common/anim/pose.h>

namespace ks {

// global = parent global * local, per joint, with the velocities of that product (kform_mul).
// parents[i] < i; -1 marks a root, whose global kform is its local one.
void op_fk(Pose& global, const Pose& local, Span<const int> parents);
// Positions, rotations and scales only (velocities untouched).
void op_fk_static(Pose& global, const Pose& local, Span<const int> parents);
// Inverse of op_fk: local = parent global \ global (kform_div), velocities included.
void op_bk(Pose& local, const Pose& global, Span<const int> parents);

// Values of `curr`, velocities from the backward difference (curr - prev) / dt
// (rotations the short way, scales in log space).
void op_finite_diff(Pose& out, const Pose& curr, const Pose& prev, float dt);
// Velocities only (values untouched): central difference (plus - minus) / (2 h).
void op_finite_diff_central(Pose& out, const Pose& plus, const Pose& minus, float h);
// Moves every joint along its own velocities for dt (velocities copied): kform_integrate.
void op_integrate(Pose& out, const Pose& in, float dt);

}  // namespace ks
