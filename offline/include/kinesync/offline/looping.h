#pragma once
// Making a clip loop (after D. Holden, "Creating Looping Animations from Motion Capture").
//
// The difference between the last and first frame (positions, and rotations as a scaled angle
// axis) and between their velocities is added back as an offset that decays over time, so the
// first and last frames become equal and the velocity matches across the seam. Methods:
//   Spring   - critically damped spring per side (half-life); never exactly zero, so a tiny
//              residual stays at the seam (reported, as the article warns);
//   Cubic    - cubic that ends exactly at its blend time (the default: exact ends);
//   Linear   - the position difference spread linearly over the whole clip, plus cubic velocity
//              inertializers at both ends (can drift / slide feet on long clips);
//   Softfade - the difference faded out near each end (duration, hardness) plus cubic velocity
//              inertializers. The softfade is normalised to reach exactly 0 at its duration, and
//              its own slope at the ends is included in the velocity difference (derived here;
//              the article's code adds the start side's slope, times dt, to the end velocity).
// `ratio` is the share of the correction applied at the start (1: start only, 0: end only).
//
// The root (joint 0, the hips) is split into a ground-level character root (position on the
// floor, heading) and the hips relative to it. The relative part loops like any joint; the
// character root follows RootMode:
//   Accumulate - the character keeps travelling: only its velocity (linear and turning, in
//                character space) is made continuous across the seam, so a loop played with
//                accumulated root motion has no hitch;
//   Loop       - the character root loops in world space too (it returns to where it started);
//   Fix        - root travel and heading removed: the motion plays in place.
// A looped clip's last frame equals its first (up to the root's accumulated travel and heading
// in Accumulate mode), which is what Wrap::Loop sampling expects.

#include <string>

#include <kinesync/common/anim/clip.h>

namespace ks {

enum class LoopMethod { Spring, Cubic, Linear, Softfade };
enum class RootMode { Accumulate, Loop, Fix };

struct LoopOptions {
    LoopMethod method = LoopMethod::Cubic;
    float ratio = 0.5f;
    float halflife_start = 0.1f, halflife_end = 0.1f;                  // Spring (seconds)
    float blendtime_start = 0.3f, blendtime_end = 0.3f;                // Cubic, and velocity fix of Linear / Softfade
    float softfade_duration_start = 0.5f, softfade_duration_end = 0.5f;  // Softfade (seconds)
    float softfade_hardness_start = 8.0f, softfade_hardness_end = 8.0f;
    RootMode root = RootMode::Accumulate;
};

const char* loop_method_name(LoopMethod m);
bool loop_method_from_name(const std::string& name, LoopMethod& out);
const char* root_mode_name(RootMode m);
bool root_mode_from_name(const std::string& name, RootMode& out);

// The hips' local axis that best represents the facing direction (the most horizontal of X and Z
// over the clip), used to extract the character root's heading.
vec3 detect_hips_forward(const Clip& clip);

// Returns the looped clip (same frames, rate and skeleton). Needs at least 3 frames.
Clip make_loop(const Clip& in, const LoopOptions& opts);

// Seam discontinuity of a clip treated as a loop: joint positions in character space (relative to
// the ground root, in metres), last frame vs first, and the one-sided velocities at the end vs the
// start; plus the character root's velocity jump in character space.
struct SeamReport {
    float pos_m = 0;          // worst |p_last - p_first|, joints other than the root
    std::string pos_joint;
    float vel_mps = 0;        // worst |v_end - v_start| (one-sided differences: includes acceleration * dt)
    std::string vel_joint;
    float vel_excess_mps = 0; // worst amount by which that jump exceeds twice the jumps of the 2 frames on
                              // each side of the seam: ~0 for a smooth loop, large for a discontinuity
    float root_vel_mps = 0;   // |v_end - v_start| of the ground root, in its own heading frame
    float root_turn_rads = 0; // |yaw rate end - start|
                              // (root figures use second-order one-sided velocity estimates)
    float typical_vel_step_mps = 0;  // 99th percentile of frame-to-frame velocity change inside the clip
};
SeamReport measure_seam(const Clip& clip);

}  // namespace ks
