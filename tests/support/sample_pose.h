#pragma once
// A clip's pose at time t (cubic sampling with velocities), for tests that need one pose at a time.

#include <kinesync/common/anim/ops_sample.h>

namespace ks::test {

inline Pose sample_pose(const Clip& c, double t, Wrap wrap = Wrap::Clamp) {
    Pose p(c.joints());
    op_sample_cubic(p, c, t, wrap);
    return p;
}

}  // namespace ks::test
