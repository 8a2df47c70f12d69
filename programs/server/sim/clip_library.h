#pragma once
// The clips a server plays: loaded from BVH files or folders (units detected per file), with a
// leading T-pose / rest frame dropped, made loopable, grouped by skeleton; or the built-in motion.
//
// Leading-frame rule: a joint "moves" when it departs from its frame-1 rotation by more than
// 0.05 rad somewhere in the clip, and "jumps" when its rotation change from frame 0 to frame 1
// exceeds both 4 x its own median frame-to-frame change (over frames 1..) and 1 degree. Frame 0 is
// dropped when at least half the moving joints jump (see clip_library.cpp for why a per-joint vote
// and not the largest change). `keep_first_frame` overrides.

#include <string>
#include <vector>

#include <kinesync/common/anim/clip.h>
#include <kinesync/common/anim/sample_cache.h>
#include <kinesync/offline/looping.h>
#include <kinesync/offline/reference_frame.h>

namespace ks {

struct LoadedClip {
    Clip clip;          // loopable (root accumulate), joint 0 = hips in clip space
    // The same clip split for playback: `rel` has the hips relative to the ground-level character
    // root and loops exactly (sample it with Wrap::Loop); `ground` (one joint) is that root's
    // trajectory (floor position, heading), which travels and is sampled with Wrap::Clamp within
    // one period while the player re-anchors it at every wrap.
    Clip rel;
    Clip ground;
    SampleCache rel_cache, ground_cache;  // built once at load: sampling reads them (ops_sample.h)
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
    std::string rig;               // "game" or "stress": every clip's body grown into that test rig
                                   // (kinesync/offline/game_rig.h); "": as loaded
};


// Paths may be files, folders (every *.bvh inside, sorted), builtin:NAME (idle, walk, run, turn:
// the procedural motion, as kinesync-tool takes it) or builtin (all four). Throws
// std::runtime_error naming the file (and line) for unreadable or malformed clips, an unknown
// built-in motion, or when nothing was found.
ClipLibrary load_clip_library(const std::vector<std::string>& paths, const ClipLoadOptions& opts = {});
// The built-in procedural clips on the built-in skeleton (grown into a test rig if `rig` is set).
ClipLibrary builtin_clip_library(const std::string& rig = "");

}  // namespace ks
