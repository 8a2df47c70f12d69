#pragma once
// A uniformly sampled clip: frames x joints of local position, rotation and scale, frame-major.

#include <string>
#include <vector>

#include <kinesync/common/anim/skeleton.h>
#include <kinesync/common/math/quat.h>

namespace ks {

struct Clip {
    std::string name;              // where it came from (file path or built-in name)
    Skeleton skeleton;
    int frames = 0;
    float frame_dt = 1.0f / 30.0f;  // seconds between frames
    float metres_per_unit = 1.0f;   // file units -> metres (positions stay in file units)
    std::vector<vec3> pos_;         // frames * joints
    std::vector<quat> rot_;
    std::vector<vec3> scl_;

    int joints() const { return skeleton.size(); }
    float duration() const { return frames > 1 ? float(frames - 1) * frame_dt : 0.0f; }
    void resize(int nframes) {
        frames = nframes;
        const size_t n = size_t(nframes) * size_t(joints());
        pos_.assign(n, vec3{});
        rot_.assign(n, quat{});
        scl_.assign(n, vec3{1, 1, 1});
    }
    vec3& pos(int f, int j) { return pos_[size_t(f) * size_t(joints()) + size_t(j)]; }
    quat& rot(int f, int j) { return rot_[size_t(f) * size_t(joints()) + size_t(j)]; }
    vec3& scl(int f, int j) { return scl_[size_t(f) * size_t(joints()) + size_t(j)]; }
    const vec3& pos(int f, int j) const { return pos_[size_t(f) * size_t(joints()) + size_t(j)]; }
    const quat& rot(int f, int j) const { return rot_[size_t(f) * size_t(joints()) + size_t(j)]; }
    const vec3& scl(int f, int j) const { return scl_[size_t(f) * size_t(joints()) + size_t(j)]; }
};

}  // namespace ks
