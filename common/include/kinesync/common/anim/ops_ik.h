#pragma once
// Two-bone IK (hip a, knee b, heel c) whose velocity comes from evaluating it twice.

#include <kinesync/common/span.h>

#include <kinesync/common/anim/pose.h>

namespace ks {

// Bends the knee so |c - a| reaches the target distance (clamped to the reachable range), then
// swings the hip by the shortest rotation taking c onto the target. Changes local.rot of a and b
// only. `global` must hold FK positions/rotations of `local` (op_fk_static is enough).
// `bend_axis_local` (in b's frame) is the fallback knee axis when the leg is straight.
void op_two_bone_ik_static(Pose& local, const Pose& global, int a, int b, int c, vec3 target,
                           vec3 bend_axis_local = {1, 0, 0});

// Same, with velocities for a and b: evaluated at the current inputs and at the inputs moved
// back by `delta` seconds along their velocities (pose and target), then differenced backward.
// The velocity error is about (delta / 2) |d^2 output / dt^2| (the IK's own curvature along
// those straight input paths) plus float rounding ~1e-7 rad / delta. Scratch poses are
// caller-owned, sized like local.
void op_two_bone_ik(Pose& local, Pose& local_prev, Pose& global, Pose& global_prev, Span<const int> parents,
                    int a, int b, int c, vec3 target_pos, vec3 target_vel, float delta = 1e-3f,
                    vec3 bend_axis_local = {1, 0, 0});

}  // namespace ks
