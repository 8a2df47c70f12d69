#pragma once
// Built-in procedural motion: a 21-joint humanoid (metres, Y up, facing +Z, left = +X) and a few
// loopable clips made from smooth periodic functions, so the server and the demo run with no
// motion files at all. Deterministic: the same call gives bit-identical clips.
//
// Each clip spans a whole number of gait cycles, so every joint's pose relative to the character
// root is exactly periodic (last frame == first frame); the hips travel (walk, run, turn) with a
// constant velocity in the character's own frame, i.e. they loop in "accumulate" root mode.

#include <stdexcept>
#include <string>
#include <vector>

#include <kinesync/common/anim/clip.h>

namespace ks {

Skeleton builtin_skeleton();
// Names of the built-in clips: "idle", "walk", "run", "turn".
const std::vector<std::string>& builtin_clip_names();
// One clip by name, sampled at `hz`; throws std::invalid_argument for an unknown name.
Clip builtin_clip(const std::string& name, float hz = 60.0f);
std::vector<Clip> builtin_clips(float hz = 60.0f);

}  // namespace ks
