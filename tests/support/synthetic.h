#pragma once
// Synthetic skeletons, poses and clips for tests: random hierarchies with non-unit,
// non-uniform and animated scale, and random (but bounded) velocities.

#include <cmath>
#include <random>

#include <kinesync/common/anim/clip.h>
#include <kinesync/common/anim/pose.h>

namespace ks::test {

struct Rng {
    std::mt19937 gen;
    explicit Rng(unsigned seed) : gen(seed) {}
    float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen); }
    vec3 vec(float lo, float hi) { return {uniform(lo, hi), uniform(lo, hi), uniform(lo, hi)}; }
    quat rotation() {  // uniform-ish random rotation
        return quat_normalize(quat{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)});
    }
};

inline Skeleton random_skeleton(int n, Rng& rng) {
    Skeleton s;
    for (int i = 0; i < n; ++i) {
        std::string name = "j";  // appended: GCC 12 at -O3 warns falsely (-Wrestrict) on "j" + string
        name += std::to_string(i);
        s.names.push_back(name);
        s.parents.push_back(i == 0 ? -1 : int(rng.gen() % unsigned(i)));
        s.offsets.push_back(rng.vec(-1, 1));
    }
    return s;
}

// A random local pose with non-uniform scales in [0.5, 2] and moderate velocities.
inline Pose random_pose(int n, Rng& rng, bool animated_scale = true) {
    Pose p(n);
    for (size_t i = 0; i < size_t(n); ++i) {
        p.pos[i] = rng.vec(-1, 1);
        p.rot[i] = rng.rotation();
        p.scl[i] = {rng.uniform(0.5f, 2), rng.uniform(0.5f, 2), rng.uniform(0.5f, 2)};
        p.vel[i] = rng.vec(-2, 2);
        p.ang[i] = rng.vec(-3, 3);
        p.svl[i] = animated_scale ? rng.vec(-0.5f, 0.5f) : vec3{};
    }
    return p;
}

// A smooth synthetic clip (sums of sinusoids), scales animated, at `hz`.
inline Clip synthetic_clip(int joints, int frames, float hz, unsigned seed) {
    Rng rng(seed);
    Clip c;
    c.name = "synthetic";
    c.skeleton = random_skeleton(joints, rng);
    c.frame_dt = 1.0f / hz;
    c.resize(frames);
    for (int j = 0; j < joints; ++j) {
        const vec3 p0 = rng.vec(-1, 1), pa = rng.vec(-0.5f, 0.5f), ra = rng.vec(-1.2f, 1.2f), sa = rng.vec(-0.3f, 0.3f);
        const quat r0 = rng.rotation();
        const float fp = rng.uniform(0.3f, 1.5f), fr = rng.uniform(0.3f, 1.5f), fs = rng.uniform(0.2f, 1.0f);
        for (int f = 0; f < frames; ++f) {
            const float t = float(f) * c.frame_dt;
            c.pos(f, j) = p0 + pa * std::sin(2 * kPi * fp * t);
            c.rot(f, j) = quat_mul(quat_from_scaled_angle_axis(ra * std::sin(2 * kPi * fr * t + 0.3f)), r0);
            c.scl(f, j) = exp(sa * std::sin(2 * kPi * fs * t) + vec3{0.1f, -0.2f, 0.05f});
        }
    }
    return c;
}

}  // namespace ks::test
