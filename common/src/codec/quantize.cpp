#include "common/src/codec/quantize.h"

#include <algorithm>
#include <cmath>

#include "common/src/codec/det_math.h"

namespace ks {

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752f;

float comp(quat q, int i) { return i == 0 ? q.w : i == 1 ? q.x : i == 2 ? q.y : q.z; }

int32_t quantize_scalar(float v, float step, float limit) {
    if (v == 0.0f) return 0;  // at rest, unscaled: most of a rig's channels
    return round_half_away(std::clamp(v, -limit, limit) / step);
}

// log of a scale component; exactly 0 for the unit scale almost every joint has, without the call.
float log_scale(float s) { return s == 1.0f ? 0.0f : std::log(s); }
}  // namespace

int32_t round_half_away(float c) {
    if (std::isnan(c)) return 0;  // what std::lround's result became on x86-64 and AArch64 alike
    c = c > -2.0e9f ? (c < 2.0e9f ? c : 2.0e9f) : -2.0e9f;
    const int32_t i = int32_t(c);  // toward zero
    const float frac = c - float(i);  // exact: c and i differ by less than 1 and share a sign
    return i + int32_t(frac >= 0.5f) - int32_t(frac <= -0.5f);
}

int largest_component(quat q) {
    int best = 0;
    for (int i = 1; i < 4; ++i)
        if (std::fabs(comp(q, i)) > std::fabs(comp(q, best))) best = i;
    return best;
}

void rotation_indices(quat q, int largest, const JointPrecision& p, int32_t out[3]) {
    const float sign = comp(q, largest) < 0.0f ? -1.0f : 1.0f;
    const int32_t max_index = int32_t((1u << p.rot_bits) - 1u);
    for (int i = 0, k = 0; i < 4; ++i) {
        if (i == largest) continue;
        const float c = sign * comp(q, i);
        out[k++] = std::clamp(round_half_away((c + kInvSqrt2) / p.rot_step), 0, max_index);
    }
}

quat dequantize_rotation(const QJoint& j, const JointPrecision& p) {
    float c[3];
    for (int k = 0; k < 3; ++k) c[k] = float(j.rot[k]) * p.rot_step - kInvSqrt2;
    const float sum = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    // The largest component completes a unit quaternion; only indices off the unit sphere (three
    // components summing past 1, which no quantized rotation has) need normalising. Each component
    // is chosen, not stored at an index: a quaternion read back from such stores stalls.
    const float big = std::sqrt(std::max(0.0f, 1.0f - sum));
    const int l = j.largest;
    const quat q{l == 0 ? big : c[0], l == 1 ? big : l < 1 ? c[0] : c[1], l == 2 ? big : l < 2 ? c[1] : c[2], l == 3 ? big : c[2]};
    return sum > 1.0f ? det::normalize(q) : q;
}

vec3 dequantize_angular(const QJoint& j, const JointPrecision& p) {
    return vec3{float(j.ang[0]), float(j.ang[1]), float(j.ang[2])} * p.ang_step;
}

QCharacter quantize_character(const Pose& local, const Skeleton& skeleton, const SkeletonPrecision& prec, uint16_t epoch) {
    QCharacter out;
    quantize_character_into(out, local, skeleton, prec, epoch);
    return out;
}

void quantize_character_into(QCharacter& out, const Pose& local, const Skeleton& skeleton, const SkeletonPrecision& prec,
                             uint16_t epoch) {
    out.epoch = epoch;
    out.ahead = false;
    out.ahead_ticks = out.plan = 0;
    out.joints.resize(size_t(skeleton.size()));  // every field of every joint is written below
    for (int j = 0; j < skeleton.size(); ++j) {
        const JointPrecision& p = prec.joints[size_t(j)];
        QJoint& qj = out.joints[size_t(j)];
        const quat r = quat_normalize(local.rot[size_t(j)]);
        qj.largest = uint8_t(largest_component(r));
        rotation_indices(r, qj.largest, p, qj.rot);
        const vec3 w = local.ang[size_t(j)];
        const float wl[3] = {w.x, w.y, w.z};
        for (int k = 0; k < 3; ++k) qj.ang[k] = quantize_scalar(wl[k], p.ang_step, prec.max_ang);
        const vec3 d = j == 0 ? local.pos[0] : local.pos[size_t(j)] - skeleton.offsets[size_t(j)];
        const vec3 v = local.vel[size_t(j)];
        const float dl[3] = {d.x, d.y, d.z}, vl[3] = {v.x, v.y, v.z};
        for (int k = 0; k < 3; ++k) {
            qj.pos[k] = quantize_scalar(dl[k], p.pos_step, 1e9f * p.pos_step);
            qj.vel[k] = quantize_scalar(vl[k], p.vel_step, 1e9f * p.vel_step);
        }
        qj.moved = j == 0 || qj.pos[0] || qj.pos[1] || qj.pos[2] || qj.vel[0] || qj.vel[1] || qj.vel[2];
        if (!qj.moved) std::fill(std::begin(qj.pos), std::end(qj.pos), 0), std::fill(std::begin(qj.vel), std::end(qj.vel), 0);
        const vec3 s = local.scl[size_t(j)], sv = local.svl[size_t(j)];
        const float lsl[3] = {log_scale(s.x), log_scale(s.y), log_scale(s.z)}, svl[3] = {sv.x, sv.y, sv.z};
        for (int k = 0; k < 3; ++k) {
            qj.lscl[k] = quantize_scalar(lsl[k], prec.log_scale_step, 20.0f);
            qj.svl[k] = quantize_scalar(svl[k], prec.svl_step, 100.0f);
        }
        qj.scaled = qj.lscl[0] || qj.lscl[1] || qj.lscl[2] || qj.svl[0] || qj.svl[1] || qj.svl[2];
    }
}

void dequantize_character(Pose& out, const QCharacter& q, const Skeleton& skeleton, const SkeletonPrecision& prec) {
    dequantize_joints(out, q, skeleton, prec, 0, size_t(skeleton.size()));
}

void dequantize_joints(Pose& out, const QCharacter& q, const Skeleton& skeleton, const SkeletonPrecision& prec, size_t first,
                       size_t count) {
    for (int j = int(first); j < int(first + count); ++j) {
        const JointPrecision& p = prec.joints[size_t(j)];
        const QJoint& qj = q.joints[size_t(j)];
        const size_t o = size_t(j);
        out.rot[o] = dequantize_rotation(qj, p);
        out.ang[o] = dequantize_angular(qj, p);
        const vec3 d = vec3{float(qj.pos[0]), float(qj.pos[1]), float(qj.pos[2])} * p.pos_step;
        out.pos[o] = j == 0 ? d : skeleton.offsets[o] + d;
        out.vel[o] = vec3{float(qj.vel[0]), float(qj.vel[1]), float(qj.vel[2])} * p.vel_step;
        out.scl[o] = qj.scaled ? exp(vec3{float(qj.lscl[0]), float(qj.lscl[1]), float(qj.lscl[2])} * prec.log_scale_step) : vec3{1, 1, 1};
        out.svl[o] = vec3{float(qj.svl[0]), float(qj.svl[1]), float(qj.svl[2])} * prec.svl_step;
    }
}

}  // namespace ks
