#pragma once
// What cubic sampling would otherwise recompute at every call, computed once per clip.
//
// Per segment (frame f to f + 1) and joint: the shortest rotation vector u = log(r[f+1] r[f]^-1)
// (the costly part of sampling: an atan2 and a square root each, three of them per joint per
// sample) and the coefficient c(u) of the inverse left Jacobian J_l(u)^-1 = I - [u]x/2 + c [u]x^2
// (a sine and a cosine). Per frame and joint, the log of the scale, kept only for joints whose scale
// is not 1 on every frame. The cached sampler gives the same values and velocities as the plain
// one to within float rounding (tested), in a fraction of the time.
//
// Memory: 16 bytes per joint per frame for rotations, plus 12 per joint per frame for joints with
// scales (sample_cache_bytes). A 31-joint, 343-frame clip: 170 kB.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <kinesync/common/anim/clip.h>

namespace ks {

struct SampleCache {
    int frames = 0, joints = 0;
    // (frames - 1) segments x joints: u.x, u.y, u.z, c(u); then one more row for Wrap::Loop's
    // closing segment, frame frames - 2 to frame 0 (equal to the last segment when the clip's last
    // frame equals its first, as a loop's does).
    std::vector<float> seg;
    std::vector<uint8_t> scaled;  // per joint: 1 when some frame's scale differs from 1
    std::vector<vec3> log_scl;    // frames x joints, only when some joint is scaled (else empty)
    const float* segment(int s, int j) const { return seg.data() + (size_t(s) * size_t(joints) + size_t(j)) * 4; }
};

// Builds the cache of a clip whose data is final (any later change to it needs a new cache).
SampleCache build_sample_cache(const Clip& clip);
size_t sample_cache_bytes(const SampleCache& cache);

}  // namespace ks
