#pragma once
// The cubic Hermite segment between two kforms: pose `a` at time 0 and pose `b` at time dt, each
// with its velocities (a client's interpolation between two snapshots). Positions and log scales
// are cubics of their values and rates; a rotation is the cubic in a's rotation-vector space whose
// end tangent goes through the inverse left Jacobian (as op_sample_cubic's), so the segment meets
// both ends with both ends' angular velocities. What does not depend on where in the segment one
// samples is prepared once per pair (HermiteSegment) and reused while the pair stands.

#include <cstdint>
#include <vector>

#include <kinesync/common/anim/pose.h>

namespace ks {

struct HermiteSegment {
    float dt = 0.0f;
    std::vector<vec3> u;       // per joint: log(abs(b.rot a.rot^-1)) as a rotation vector
    std::vector<vec3> w1;      // the end tangent in a's rotation-vector space: J_l(u)^-1 (b.ang dt)
    std::vector<vec3> ls_a, ls_b;  // log scales (0 where unscaled)
    std::vector<uint8_t> scaled;   // 0 where both ends have scale 1 and no scale velocity
};

// Throws ks::Error unless a and b hold the same joint count and dt is finite and > 0.
void op_hermite_prepare(HermiteSegment& seg, const Pose& a, const Pose& b, float dt);
// The segment at x in [0, 1] (time x dt), with exact velocities. seg must be prepared from these
// a, b (its sizes are checked, not its contents); x must be finite (outside [0, 1] it extrapolates
// the cubic). out may be a or b.
void op_hermite(Pose& out, const HermiteSegment& seg, const Pose& a, const Pose& b, float x);

}  // namespace ks
