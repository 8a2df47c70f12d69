#pragma once
// The clip argument every kinesync-tool command takes: a BVH file, or builtin:NAME for the
// built-in procedural motion (idle, walk, run, turn).
#include <string>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/bvh.h>

namespace ks::tool {

inline BvhFile load_clip_arg(const std::string& arg, const BvhOptions& opts) {
    if (arg.rfind("builtin:", 0) != 0) return load_bvh(arg, opts);
    BvhFile file;
    file.clip = builtin_clip(arg.substr(8));
    file.detected_metres_per_unit = 1.0f;
    file.frames_in_file = file.clip.frames;
    if (opts.metres_per_unit > 0.0f) file.clip.metres_per_unit = opts.metres_per_unit;
    return file;
}

}  // namespace ks::tool
