#include "server/src/net/held_prediction.h"

#include <algorithm>
#include <cmath>

#include <kinesync/common/math/quat.h>

namespace ks {

namespace {

vec3 grid(const int32_t v[3], float step) { return vec3{float(v[0]) * step, float(v[1]) * step, float(v[2]) * step}; }

// The angle between two rotations, radians (accurate for small angles, where acos is not).
float angle_between(quat a, quat b) {
    const quat d = quat_mul_inv(a, b);
    return 2.0f * std::atan2(std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z), std::fabs(d.w));
}

}  // namespace

float held_prediction_error_m(const QCharacter& held, const QCharacter& now, float dt_s, const SkeletonPrecision& prec,
                              JointRange joints) {
    float worst = 0.0f;
    for (uint32_t j = joints.first; j < joints.end(); ++j) {
        const QJoint& h = held.joints[j];
        const QJoint& n = now.joints[j];
        const JointPrecision& p = prec.joints[j];
        const vec3 predicted = grid(h.pos, p.pos_step) + grid(h.vel, p.vel_step) * dt_s;
        const float pos_m = length(grid(n.pos, p.pos_step) - predicted) * prec.metres_per_unit;
        float rot_m = 0.0f;
        if (p.reach_m > 0.0f) {
            const quat turned = quat_mul(quat_from_scaled_angle_axis(dequantize_angular(h, p) * dt_s), dequantize_rotation(h, p));
            rot_m = angle_between(dequantize_rotation(n, p), turned) * p.reach_m;
        }
        worst = std::max(worst, pos_m + rot_m);
    }
    return worst;
}

float interpolation_error_m(const QCharacter& from, const QCharacter& to, float span_s, const QCharacter& mid, float at_s,
                            const SkeletonPrecision& prec, JointRange joints) {
    const float x = at_s / span_s, x2 = x * x, x3 = x2 * x;
    const float h00 = 2 * x3 - 3 * x2 + 1, h10 = x3 - 2 * x2 + x, h01 = -2 * x3 + 3 * x2, h11 = x3 - x2;
    float sum = 0.0f;
    for (uint32_t j = joints.first; j < joints.end(); ++j) {
        const QJoint &a = from.joints[j], &b = to.joints[j], &m = mid.joints[j];
        const JointPrecision& p = prec.joints[j];
        const vec3 pos = h00 * grid(a.pos, p.pos_step) + h10 * span_s * grid(a.vel, p.vel_step) + h01 * grid(b.pos, p.pos_step) +
                         h11 * span_s * grid(b.vel, p.vel_step);
        const float pos_m = length(grid(m.pos, p.pos_step) - pos) * prec.metres_per_unit;
        float rot_m = 0.0f;
        if (p.reach_m > 0.0f) {
            const quat r0 = dequantize_rotation(a, p);
            const vec3 u = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(dequantize_rotation(b, p), r0)));
            const vec3 w0 = dequantize_angular(a, p) * span_s, w1 = so3_left_jacobian_inv_mul(u, dequantize_angular(b, p) * span_s);
            const quat r = quat_mul(quat_from_scaled_angle_axis(h10 * w0 + h01 * u + h11 * w1), r0);
            rot_m = angle_between(dequantize_rotation(m, p), r) * p.reach_m;
        }
        sum += pos_m + rot_m;
    }
    return joints.count ? sum / float(joints.count) : 0.0f;
}

}  // namespace ks
