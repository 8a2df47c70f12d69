#include "server/sim/clip_library.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "common/anim/builtin_motion.h"
#include "common/anim/root_motion.h"
#include "common/io/bvh.h"

namespace ks {

std::vector<int> ClipLibrary::clips_of(int skeleton) const {
    std::vector<int> out;
    for (int i = 0; i < int(clips.size()); ++i)
        if (clips[size_t(i)].skeleton == skeleton) out.push_back(i);
    return out;
}

namespace {

float rotation_change(const Clip& c, int f0, int f1, int j) {
    return length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(c.rot(f1, j), c.rot(f0, j)))));
}

bool same_skeleton(const Skeleton& a, const Skeleton& b) {
    if (a.size() != b.size() || a.names != b.names || a.parents != b.parents) return false;
    for (size_t j = 0; j < a.offsets.size(); ++j)
        if (length(a.offsets[j] - b.offsets[j]) > 1e-3f * (1.0f + length(a.offsets[j]))) return false;
    return true;
}

void add_clip(ClipLibrary& lib, Clip clip, const ClipLoadOptions& opts) {
    LoadedClip lc;
    if (!opts.keep_first_frame && clip.frames > 3 && leading_frame_is_reference(clip)) {
        Clip trimmed = clip;
        trimmed.resize(clip.frames - 1);
        for (int f = 1; f < clip.frames; ++f)
            for (int j = 0; j < clip.joints(); ++j) {
                trimmed.pos(f - 1, j) = clip.pos(f, j);
                trimmed.rot(f - 1, j) = clip.rot(f, j);
                trimmed.scl(f - 1, j) = clip.scl(f, j);
            }
        clip = std::move(trimmed);
        lc.dropped_first_frame = true;
    }
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
    lib.clips.push_back(std::move(lc));
}

}  // namespace

// Why per joint and by vote: a reference frame (a T-pose or an all-zero rest) is a different pose
// for the whole body, so nearly every joint that moves in the clip jumps into frame 1 by many times
// its own usual step; real motion never does that to most joints at once. A rule built on the
// largest change over joints lets one joint decide: fast hands (05_20's leaps) or a wrist/thumb
// whose Euler angles wrap by ~pi (94_01 has such flips) inflate its threshold until a real T-pose
// is kept, and a lone flip between frames 0 and 1 drops a real frame. Here each joint is judged
// against its own median step (deaf to its own flips and bursts) and a majority decides, so no
// single joint sways the verdict. Measured on the shared CMU clips (jumping / moving joints):
// reference frames 0.94-1.00, real first frames 0.00-0.10.
float leading_frame_jump_fraction(const Clip& c) {
    if (c.frames < 4) return 0.0f;
    constexpr float kMovingRange = 0.05f;  // rad: a joint that never leaves its frame-1 pose by ~3 deg casts no vote
    constexpr float kJumpSteps = 4.0f;     // a jump is more than this many of the joint's median steps...
    constexpr float kJumpFloor = 0.0175f;  // ...and more than 1 deg (still joints have median steps ~0)
    int moving = 0, jumping = 0;
    std::vector<float> steps(size_t(c.frames - 2));
    for (int j = 0; j < c.joints(); ++j) {
        float range = 0.0f;
        for (int f = 1; f + 1 < c.frames; ++f) {
            steps[size_t(f - 1)] = rotation_change(c, f, f + 1, j);
            range = std::max(range, rotation_change(c, 1, f + 1, j));
        }
        if (range <= kMovingRange) continue;
        ++moving;
        const auto mid = steps.begin() + std::ptrdiff_t(steps.size() / 2);
        std::nth_element(steps.begin(), mid, steps.end());
        const float first = rotation_change(c, 0, 1, j);
        if (first > kJumpSteps * *mid && first > kJumpFloor) ++jumping;
    }
    return moving > 0 ? float(jumping) / float(moving) : 0.0f;
}

bool leading_frame_is_reference(const Clip& c) { return leading_frame_jump_fraction(c) >= 0.5f; }

ClipLibrary load_clip_library(const std::vector<std::string>& paths, const ClipLoadOptions& opts) {
    std::vector<std::string> files;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
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
        BvhOptions bo;
        bo.metres_per_unit = opts.metres_per_unit;
        add_clip(lib, load_bvh(f, bo).clip, opts);  // BvhError names the file and line
    }
    return lib;
}

ClipLibrary builtin_clip_library() {
    ClipLibrary lib;
    ClipLoadOptions opts;
    opts.keep_first_frame = true;
    for (Clip& c : builtin_clips(60.0f)) add_clip(lib, std::move(c), opts);
    lib.skeleton_names[0] = "builtin";
    return lib;
}

}  // namespace ks
