#pragma once
// How precisely each joint is sent. A joint's rotation error moves every descendant by up to
// (distance to that descendant) x (angle error), so rotation and angular-velocity steps are set
// per joint from its reach, the largest rest distance to any descendant (as ACL does): far-reaching
// joints (hips, spine, shoulders, hips of the legs) get fine steps, hands and feet coarser ones,
// and leaf joints (whose rotation moves no other joint) a fixed coarse step.

#include <vector>

#include <kinesync/common/anim/skeleton.h>

namespace ks {

struct CodecSettings {
    float rot_error_m = 0.004f;       // rotation step: worst-case position error at the joint's reach
                                      // (typical errors are ~1/4 of it; see kinesync-tool codec)
    float ang_error_mps = 0.1f;       // angular-velocity step x reach (m/s at the reach): 0.5 cm after
                                      // 100 ms of extrapolation with the worst rounding
    float leaf_rot_error_rad = 0.04f; // leaf joints (no joint descendants: they move no other joint)
    float leaf_ang_step = 1.0f;       // rad/s
    float min_reach_m = 0.05f;
    float root_pos_step_m = 0.001f;   // root (joint 0) world position: 1 mm
    float root_vel_step_mps = 0.01f;
    float pos_step_m = 0.0002f;       // animated non-root local positions
    float vel_step_mps = 0.005f;
    float log_scale_step = 1e-4f;     // non-unit scales
    float svl_step = 1e-3f;
    float max_ang = 64.0f;            // rad/s clamp for angular velocities
};

struct JointPrecision {
    int rot_bits;       // bits that hold every smallest-three index (full states send them as they are)
    float rot_step;     // component step, from the joint's reach (any value, not a power of two)
    float ang_step;     // rad/s
    float pos_step;     // file units (root: world position; others: local offset from rest)
    float vel_step;     // file units / s
    float reach_m;
    bool leaf;
    int depth = 0;      // 0 for a root, parent's + 1 (the level of detail holds the deeper ones)
};

struct SkeletonPrecision {
    std::vector<JointPrecision> joints;
    float log_scale_step;
    float svl_step;
    float max_ang;
    float metres_per_unit = 1.0f;  // the file's unit (positions' steps are in it)
};

SkeletonPrecision plan_precision(const Skeleton& skeleton, float metres_per_unit, const CodecSettings& settings = {});

}  // namespace ks
