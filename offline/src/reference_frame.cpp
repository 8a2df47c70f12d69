#include <kinesync/offline/reference_frame.h>

#include <algorithm>
#include <vector>

namespace ks {

namespace {

float rotation_change(const Clip& c, int f0, int f1, int j) {
    return length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(c.rot(f1, j), c.rot(f0, j)))));
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

Clip drop_first_frame(const Clip& clip) {
    Clip out = clip;
    if (clip.frames < 2) return out;
    out.resize(clip.frames - 1);
    for (int f = 1; f < clip.frames; ++f)
        for (int j = 0; j < clip.joints(); ++j) {
            out.pos(f - 1, j) = clip.pos(f, j);
            out.rot(f - 1, j) = clip.rot(f, j);
            out.scl(f - 1, j) = clip.scl(f, j);
        }
    return out;
}

}  // namespace ks
