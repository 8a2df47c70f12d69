#pragma once
// Root motion: a ground-level "character root" kform derived from the hips, and accumulation
// of that motion in the world. Y is up.
//
// Extraction projects the hips onto the ground (y = 0) and keeps only their heading (yaw of the
// hips' forward axis), with velocities. Accumulation keeps a static anchor so that
// world root = anchor * clip root: the world root then moves with the clip root's velocities
// exactly, and the anchor is recomputed (root_motion_anchor) whenever the clip root jumps (a
// loop wraps, a new clip starts), so the world root continues from where it was.

#include <kinesync/common/anim/pose.h>

namespace ks {

// hips_global: the hips' global kform (with velocities); fwd_local: the hips' forward axis in
// their own frame (e.g. +Z for CMU skeletons).
kform root_motion_extract(const kform& hips_global, vec3 fwd_local = {0, 0, 1});

// Re-expresses joint 0 of `local` (the hips, parent -1) relative to `root`: div(root, hips).
void op_root_motion_remove(Pose& local, const kform& root);

// The static anchor (zero velocities) for which kform_mul(anchor, clip_root) == world_root in
// position and rotation.
kform root_motion_anchor(const kform& world_root, const kform& clip_root);
inline kform root_motion_apply(const kform& anchor, const kform& clip_root) { return kform_mul(anchor, clip_root); }

}  // namespace ks
