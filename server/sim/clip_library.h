#pragma once
// The clips a server plays: loaded from BVH files or folders (units detected per file), with a
// leading T-pose / rest frame dropped, made loopable, grouped by skeleton; or the built-in motion.
//
// Leading-frame rule: frame 0 is dropped when its largest joint-rotation change to frame 1 exceeds
// both 0.5 rad and 5 x the clip's typical largest frame-to-frame change (the 99th percentile over
// the rest of the clip). The CMU cgspeed files' T-pose frames jump by 1-3 rad; real motion moves a
// few hundredths of a radian per frame at 120 Hz. `keep_first_frame` overrides.

#include <string>
#include <vector>

#include "common/anim/clip.h"
#include "common/anim/looping.h"

namespace ks {

struct LoadedClip {
    Clip clip;          // loopable (root accumulate), joint 0 = hips in clip space
    // The same clip split for playback: `rel` has the hips relative to the ground-level character
    // root and loops exactly (sample it with Wrap::Loop); `ground` (one joint) is that root's
    // trajectory (floor position, heading), which travels and is sampled with Wrap::Clamp within
    // one period while the player re-anchors it at every wrap.
    Clip rel;
    Clip ground;
    int skeleton = 0;   // index into ClipLibrary::skeletons
    bool dropped_first_frame = false;
    vec3 hips_forward{0, 0, 1};  // the hips' facing axis (detect_hips_forward)
};

struct ClipLibrary {
    std::vector<Skeleton> skeletons;
    std::vector<float> metres_per_unit;  // per skeleton
    std::vector<std::string> skeleton_names;
    std::vector<LoadedClip> clips;
    // Clips that share a skeleton (transitions only happen within one).
    std::vector<int> clips_of(int skeleton) const;
};

struct ClipLoadOptions {
    bool keep_first_frame = false;
    float metres_per_unit = 0.0f;  // 0: detect per file
    LoopOptions loop;              // default: cubic, root accumulate
};

// Decides whether frame 0 is a T-pose / rest frame to drop (the rule above).
bool leading_frame_is_reference(const Clip& clip);

// Paths may be files or folders (every *.bvh inside, sorted). Throws std::runtime_error naming
// the file (and line) for unreadable or malformed clips, or when nothing was found.
ClipLibrary load_clip_library(const std::vector<std::string>& paths, const ClipLoadOptions& opts = {});
// The built-in procedural clips on the built-in skeleton.
ClipLibrary builtin_clip_library();

}  // namespace ks
