#include "common/src/codec/precision.h"

#include <algorithm>
#include <cmath>

#include <kinesync/common/math/quat.h>

namespace ks {

SkeletonPrecision plan_precision(const Skeleton& s, float metres_per_unit, const CodecSettings& cs) {
    const int n = s.size();
    // Rest positions (identity rotations): bone lengths are what matter for reach.
    std::vector<vec3> g(static_cast<size_t>(n));
    std::vector<bool> has_child(size_t(n), false);
    for (int j = 0; j < n; ++j) {
        const int p = s.parents[size_t(j)];
        g[size_t(j)] = p < 0 ? vec3{} : g[size_t(p)] + s.offsets[size_t(j)];
        if (p >= 0) has_child[size_t(p)] = true;
    }
    std::vector<float> reach(size_t(n), 0.0f);
    for (int k = 0; k < n; ++k)
        for (int a = s.parents[size_t(k)]; a >= 0; a = s.parents[size_t(a)])
            reach[size_t(a)] = std::max(reach[size_t(a)], length(g[size_t(k)] - g[size_t(a)]) * metres_per_unit);

    SkeletonPrecision out;
    out.log_scale_step = cs.log_scale_step;
    out.svl_step = cs.svl_step;
    out.max_ang = cs.max_ang;
    const float unit = metres_per_unit > 0 ? metres_per_unit : 1.0f;
    out.metres_per_unit = unit;
    for (int j = 0; j < n; ++j) {
        JointPrecision jp{};
        jp.leaf = !has_child[size_t(j)];
        jp.depth = s.parents[size_t(j)] < 0 ? 0 : out.joints[size_t(s.parents[size_t(j)])].depth + 1;
        jp.reach_m = reach[size_t(j)];
        const float r = std::max(reach[size_t(j)], cs.min_reach_m);
        const float eps = jp.leaf ? cs.leaf_rot_error_rad : std::min(cs.rot_error_m / r, cs.leaf_rot_error_rad);
        // A component step c moves the rotation by at most 2 sqrt(3) c radians: sqrt(3) c / 2 from the
        // three rounded components, up to 3 c / 2 from the recomputed largest one (>= 1/2), and the
        // angle is twice the quaternion distance. (Typical errors are a fraction of that.)
        const float comp_step = eps / (2.0f * std::sqrt(3.0f));
        // The step itself, and the fewest bits with 2^bits - 1 >= sqrt(2) / step to hold every
        // index of the [-1/sqrt 2, 1/sqrt 2] range (counted, not log2: no libm).
        jp.rot_step = std::max(comp_step, std::sqrt(2.0f) / float((1u << 23) - 1u));
        const double levels = double(std::sqrt(2.0f) / jp.rot_step);
        int bits = 4;
        while (bits < 24 && double((1u << bits) - 1u) < levels) ++bits;
        jp.rot_bits = bits;
        jp.ang_step = jp.leaf ? cs.leaf_ang_step : cs.ang_error_mps / r;
        jp.pos_step = (j == 0 ? cs.root_pos_step_m : cs.pos_step_m) / unit;
        jp.vel_step = (j == 0 ? cs.root_vel_step_mps : cs.vel_step_mps) / unit;
        out.joints.push_back(jp);
    }
    return out;
}

}  // namespace ks
