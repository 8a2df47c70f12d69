#pragma once
// Sampling a clip at a continuous time, with velocities, and playback-rate scaling.
// Times are double: a float clock 30 s into a clip resolves only ~2 microseconds, which is
// already a 1e-3 relative error in a velocity finite-differenced over a quarter millisecond.

#include <kinesync/common/anim/clip.h>
#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/sample_cache.h>

namespace ks {

enum class Wrap {
    Clamp,  // time is clamped to [0, duration]; velocities are zero outside it
    Loop,   // the clip is a loop whose last frame equals its first: period = duration()
};

// Linear interpolation between the two frames around `time`: slerp for rotations, eerp for
// scales. Velocities are the exact derivatives (constant within a frame interval).
void op_sample_linear(Pose& out, const Clip& clip, double time, Wrap wrap = Wrap::Clamp);
// The same from the clip's SampleCache, with velocities and values only (velocities untouched).
void op_sample_linear(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap = Wrap::Clamp);
void op_sample_linear_values(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap = Wrap::Clamp);

// Cubic Hermite interpolation through four frames with Catmull-Rom tangents (one-sided at clamped
// ends). Rotations are interpolated in the rotation-vector space of the segment's first frame, and
// the end tangent is mapped through the inverse left Jacobian, so position, rotation and scale
// velocities are all continuous across frame boundaries.
void op_sample_cubic(Pose& out, const Clip& clip, double time, Wrap wrap = Wrap::Clamp);
// The same values, velocities not computed (left untouched): the cost baseline.
void op_sample_cubic_values(Pose& out, const Clip& clip, double time, Wrap wrap = Wrap::Clamp);
// The same two from the clip's SampleCache (build_sample_cache, once per clip): several times
// faster, equal to the plain ones within float rounding (ops_sample tests state the bound).
void op_sample_cubic(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap = Wrap::Clamp);
void op_sample_cubic_values(Pose& out, const Clip& clip, const SampleCache& cache, double time, Wrap wrap = Wrap::Clamp);

// Playing a pose sampled at time speed * t: every velocity scales by speed.
void op_timescale(Pose& pose, float speed);

}  // namespace ks
