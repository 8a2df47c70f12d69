#include "programs/server/sim/clip_library.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include <kinesync/common/anim/root_motion.h>
#include <kinesync/offline/bvh.h>
#include "common/src/net/protocol.h"

namespace ks {

std::vector<int> ClipLibrary::clips_of(int skeleton) const {
    std::vector<int> out;
    for (int i = 0; i < int(clips.size()); ++i)
        if (clips[size_t(i)].skeleton == skeleton) out.push_back(i);
    return out;
}

namespace {

bool same_skeleton(const Skeleton& a, const Skeleton& b) {
    if (a.size() != b.size() || a.names != b.names || a.parents != b.parents) return false;
    for (size_t j = 0; j < a.offsets.size(); ++j)
        if (length(a.offsets[j] - b.offsets[j]) > 1e-3f * (1.0f + length(a.offsets[j]))) return false;
    return true;
}

// A leading T-pose or rest frame is judged on the capture itself, before a rig is made of it (a
// rig's added joints would outvote the captured ones): one rule whatever the rig.
bool drop_reference_frame(Clip& clip, const ClipLoadOptions& opts) {
    if (opts.keep_first_frame || clip.frames <= 3 || !leading_frame_is_reference(clip)) return false;
    clip = drop_first_frame(clip);
    return true;
}

void add_clip(ClipLibrary& lib, Clip clip, const ClipLoadOptions& opts, bool dropped_first_frame) {
    LoadedClip lc;
    lc.dropped_first_frame = dropped_first_frame;
    if (clip.frames < 3) throw std::runtime_error(clip.name + ": fewer than 3 frames, cannot loop");
    lc.hips_forward = detect_hips_forward(clip);
    lc.clip = make_loop(clip, opts.loop);
    // Split into the looping relative pose and the travelling ground root.
    lc.rel = lc.clip;
    lc.ground.name = lc.clip.name + " (ground root)";
    lc.ground.skeleton.names = {"root"};
    lc.ground.skeleton.parents = {-1};
    lc.ground.skeleton.offsets = {vec3{}};
    lc.ground.frame_dt = lc.clip.frame_dt;
    lc.ground.metres_per_unit = lc.clip.metres_per_unit;
    lc.ground.resize(lc.clip.frames);
    float prev_yaw = 0.0f;
    for (int f = 0; f < lc.clip.frames; ++f) {
        kform hips;
        hips.pos = lc.clip.pos(f, 0);
        hips.rot = lc.clip.rot(f, 0);
        kform g = root_motion_extract(hips, lc.hips_forward);
        // Unwrap the heading so the ground rotation track never takes a 2 pi shortcut.
        float yaw = 2.0f * std::atan2(g.rot.y, g.rot.w);
        if (f > 0) yaw = prev_yaw + std::remainder(yaw - prev_yaw, 2.0f * kPi);
        prev_yaw = yaw;
        g.rot = quat_from_angle_axis(yaw, {0, 1, 0});
        lc.ground.pos(f, 0) = g.pos;
        lc.ground.rot(f, 0) = g.rot;
        const kform rel = kform_div(g, hips);
        lc.rel.pos(f, 0) = rel.pos;
        lc.rel.rot(f, 0) = rel.rot;
    }
    int skel = -1;
    for (int s = 0; s < int(lib.skeletons.size()); ++s)
        if (same_skeleton(lib.skeletons[size_t(s)], lc.clip.skeleton)) skel = s;
    if (skel < 0) {
        skel = int(lib.skeletons.size());
        lib.skeletons.push_back(lc.clip.skeleton);
        lib.metres_per_unit.push_back(lc.clip.metres_per_unit);
        lib.skeleton_names.push_back(std::filesystem::path(lc.clip.name).stem().string());
    }
    lc.skeleton = skel;
    lc.rel_cache = build_sample_cache(lc.rel);
    lc.ground_cache = build_sample_cache(lc.ground);
    lib.clips.push_back(std::move(lc));
}

}  // namespace


ClipLibrary load_clip_library(const std::vector<std::string>& paths, const ClipLoadOptions& opts) {
    std::vector<std::string> files;  // BVH files, or builtin:NAME
    for (const std::string& p : paths) {
        std::error_code ec;
        if (p == "builtin") {
            for (const char* name : {"idle", "walk", "run", "turn"}) files.push_back(std::string("builtin:") + name);
        } else if (p.rfind("builtin:", 0) == 0) {
            files.push_back(p);
        } else if (std::filesystem::is_directory(p, ec)) {
            std::vector<std::string> found;
            for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
                std::string ext = e.path().extension().string();
                std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
                if (e.is_regular_file() && ext == ".bvh") found.push_back(e.path().string());
            }
            std::sort(found.begin(), found.end());
            if (found.empty()) throw std::runtime_error(p + ": no .bvh files in this folder");
            files.insert(files.end(), found.begin(), found.end());
        } else if (std::filesystem::exists(p, ec)) {
            files.push_back(p);
        } else {
            throw std::runtime_error(p + ": no such file or folder");
        }
    }
    ClipLibrary lib;
    for (const std::string& f : files) {
        if (f.rfind("builtin:", 0) == 0) {
            ClipLoadOptions bo = opts;
            bo.keep_first_frame = true;  // procedural: no reference frame
            Clip clip = builtin_clip(f.substr(8), 60.0f);  // throws naming an unknown motion
            add_clip(lib, opts.rig.empty() ? std::move(clip) : make_rig(opts.rig, clip), bo, false);
            continue;
        }
        BvhOptions bo;
        bo.metres_per_unit = opts.metres_per_unit;
        Clip clip = load_bvh(f, bo).clip;  // BvhError names the file and line
        // The wire carries at most kMaxJoints per skeleton: refuse here, with the file's name,
        // rather than fail at the first client's handshake.
        if (clip.joints() > net::kMaxJoints)
            throw std::runtime_error(f + ": " + std::to_string(clip.joints()) + " joints, more than the " +
                                     std::to_string(net::kMaxJoints) + " a skeleton may have on the wire");
        const bool dropped = drop_reference_frame(clip, opts);
        if (!opts.rig.empty()) {
            try {
                clip = make_rig(opts.rig, clip);
            } catch (const std::invalid_argument& e) {
                throw std::runtime_error(f + ": " + e.what());
            }
        }
        add_clip(lib, std::move(clip), opts, dropped);
    }
    return lib;
}

ClipLibrary builtin_clip_library(const std::string& rig) {
    ClipLibrary lib;
    ClipLoadOptions opts;
    opts.keep_first_frame = true;
    for (Clip& c : builtin_clips(60.0f)) add_clip(lib, rig.empty() ? std::move(c) : make_rig(rig, c), opts, false);
    lib.skeleton_names[0] = "builtin";
    return lib;
}

}  // namespace ks
