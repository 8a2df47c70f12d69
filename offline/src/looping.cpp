#include <kinesync/offline/looping.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/root_motion.h>
#include <kinesync/common/dynamics/springs.h>

namespace ks {

const char* loop_method_name(LoopMethod m) {
    switch (m) {
        case LoopMethod::Spring: return "spring";
        case LoopMethod::Cubic: return "cubic";
        case LoopMethod::Linear: return "linear";
        case LoopMethod::Softfade: return "softfade";
    }
    return "?";
}

bool loop_method_from_name(const std::string& name, LoopMethod& out) {
    for (LoopMethod m : {LoopMethod::Spring, LoopMethod::Cubic, LoopMethod::Linear, LoopMethod::Softfade})
        if (name == loop_method_name(m)) return out = m, true;
    return false;
}

const char* root_mode_name(RootMode m) {
    switch (m) {
        case RootMode::Accumulate: return "accumulate";
        case RootMode::Loop: return "loop";
        case RootMode::Fix: return "fix";
    }
    return "?";
}

bool root_mode_from_name(const std::string& name, RootMode& out) {
    for (RootMode m : {RootMode::Accumulate, RootMode::Loop, RootMode::Fix})
        if (name == root_mode_name(m)) return out = m, true;
    return false;
}

vec3 detect_hips_forward(const Clip& clip) {
    double hx = 0, hz = 0;
    for (int f = 0; f < clip.frames; ++f) {
        const vec3 x = quat_mul_vec3(clip.rot(f, 0), {1, 0, 0}), z = quat_mul_vec3(clip.rot(f, 0), {0, 0, 1});
        hx += std::sqrt(x.x * x.x + x.z * x.z);
        hz += std::sqrt(z.x * z.x + z.z * z.z);
    }
    return hz >= hx ? vec3{0, 0, 1} : vec3{1, 0, 0};
}

namespace {

// Softfade normalised to be exactly 1 at u = 0 and exactly 0 for u >= 1.
float softfade_norm(float u, float hardness) {
    if (u >= 1.0f) return 0.0f;
    const float a = softfade(0.0f, hardness), b = softfade(1.0f, hardness);
    return (softfade(std::max(u, 0.0f), hardness) - b) / (a - b);
}
float softfade_norm_slope0(float hardness) {
    return softfade_dx(0.0f, hardness) / (softfade(0.0f, hardness) - softfade(1.0f, hardness));
}

// The displacement part of each method moves the first frame by r d and the last by -(1 - r) d;
// its own slopes at the two ends (zero for Spring and Cubic) are returned here.
void shape_slopes(vec3 d, const LoopOptions& o, float length, vec3& g_start, vec3& g_end) {
    const float r = clampf(o.ratio, 0.0f, 1.0f);
    switch (o.method) {
        case LoopMethod::Spring:
        case LoopMethod::Cubic: g_start = g_end = vec3{}; break;
        case LoopMethod::Linear: g_start = g_end = -d / length; break;
        case LoopMethod::Softfade: {
            const float ds = std::min(o.softfade_duration_start, length), de = std::min(o.softfade_duration_end, length);
            g_start = r * d * (softfade_norm_slope0(o.softfade_hardness_start) / ds);
            g_end = (1.0f - r) * d * (softfade_norm_slope0(o.softfade_hardness_end) / de);
            break;
        }
    }
}

// Offsets for one channel (a vec3 signal: positions, or rotations as scaled angle axis) whose
// last-minus-first difference is d: the method's displacement plus extra rates a_start at the first
// frame and a_end at the last (forward time), which the caller chooses to match the velocities.
void channel_offsets(std::vector<vec3>& off, vec3 d, vec3 a_start, vec3 a_end, const LoopOptions& o, float dt) {
    const int n = int(off.size());
    const float length = float(n - 1) * dt;
    const float r = clampf(o.ratio, 0.0f, 1.0f);
    const float bs = std::min(o.blendtime_start, length), be = std::min(o.blendtime_end, length);
    vec3 rate;
    for (int i = 0; i < n; ++i) {
        const float ts = float(i) * dt, te = float(n - 1 - i) * dt;
        vec3& v = off[size_t(i)];
        switch (o.method) {
            case LoopMethod::Spring:
                v = decayed_offset(r * d, a_start, o.halflife_start, ts, rate) +
                    decayed_offset(-(1.0f - r) * d, -a_end, o.halflife_end, te, rate);
                break;
            case LoopMethod::Cubic:
                v = decayed_offset_cubic(r * d, a_start, bs, ts, rate) + decayed_offset_cubic(-(1.0f - r) * d, -a_end, be, te, rate);
                break;
            case LoopMethod::Linear: {
                const float u = n > 1 ? float(i) / float(n - 1) : 0.0f;
                v = lerpf(r, r - 1.0f, u) * d;
                break;
            }
            case LoopMethod::Softfade: {
                const float ds = std::min(o.softfade_duration_start, length), de = std::min(o.softfade_duration_end, length);
                v = r * d * softfade_norm(ts / ds, o.softfade_hardness_start) -
                    (1.0f - r) * d * softfade_norm(te / de, o.softfade_hardness_end);
                break;
            }
        }
        if (o.method == LoopMethod::Linear || o.method == LoopMethod::Softfade)
            v += decayed_velocity_offset_cubic(a_start, bs, ts, rate) + decayed_velocity_offset_cubic(-a_end, be, te, rate);
    }
}

// Positions: the totals v + g + a at both ends must agree; the correction is split by ratio.
void position_rates(vec3 d, vec3 v_start, vec3 v_end, const LoopOptions& o, float length, vec3& a_start, vec3& a_end) {
    vec3 gs, ge;
    shape_slopes(d, o, length, gs, ge);
    const float r = clampf(o.ratio, 0.0f, 1.0f);
    const vec3 dv = (v_end + ge) - (v_start + gs);
    a_start = r * dv;
    a_end = -(1.0f - r) * dv;
}

// Rotations: the offset Exp(phi(t)) is applied on the left, so the looped angular velocity at an
// end is J_l(phi) phi' + Exp(phi) w. Both ends are made to reach the same target (mixed by ratio),
// solving for phi' through the inverse Jacobian; the plain "add the angular velocity difference"
// of the article is this only when the end offsets are small.
void rotation_rates(vec3 d, vec3 w_start, vec3 w_end, const LoopOptions& o, float length, vec3& a_start, vec3& a_end) {
    vec3 gs, ge;
    shape_slopes(d, o, length, gs, ge);
    const float r = clampf(o.ratio, 0.0f, 1.0f);
    const vec3 phi0 = r * d, phi1 = -(1.0f - r) * d;
    const vec3 w0 = quat_mul_vec3(quat_from_scaled_angle_axis(phi0), w_start);
    const vec3 w1 = quat_mul_vec3(quat_from_scaled_angle_axis(phi1), w_end);
    const vec3 target = (1.0f - r) * w0 + r * w1;
    a_start = so3_left_jacobian_inv_mul(phi0, target - w0) - gs;
    a_end = so3_left_jacobian_inv_mul(phi1, target - w1) - ge;
}

// Second-order one-sided velocity estimates at the first and last frame: plain one-sided
// differences are centred half a frame inside, so a perfectly smooth loop would show a velocity
// "jump" of acceleration * dt at the seam and get needlessly corrected.
template <typename Get>
vec3 start_velocity(Get p, float dt) { return (-3.0f * p(0) + 4.0f * p(1) - p(2)) / (2.0f * dt); }
template <typename Get>
vec3 end_velocity(Get p, int n, float dt) { return (3.0f * p(n - 1) - 4.0f * p(n - 2) + p(n - 3)) / (2.0f * dt); }
// The same for rotations, on rotation vectors taken around the end frame.
vec3 start_angular_velocity(quat r0, quat r1, quat r2, float dt) {
    const vec3 u1 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(r1, r0)));
    const vec3 u2 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(r2, r0)));
    return (4.0f * u1 - u2) / (2.0f * dt);
}
vec3 end_angular_velocity(quat rn1, quat rn2, quat rn3, float dt) {
    const vec3 u1 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(rn2, rn1)));
    const vec3 u2 = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(rn3, rn1)));
    return (-4.0f * u1 + u2) / (2.0f * dt);
}

float heading(quat hips_rot, vec3 fwd) {
    const vec3 f = quat_mul_vec3(hips_rot, fwd);
    return std::atan2(f.x, f.z);
}

quat yaw_quat(float yaw) { return quat_from_angle_axis(yaw, {0, 1, 0}); }

// Ground root (floor position, unwrapped heading) of every frame, and the hips relative to it.
struct RootSplit {
    std::vector<vec3> pos;
    std::vector<float> yaw;
};

RootSplit split_root(const Clip& clip, vec3 fwd) {
    RootSplit s;
    s.pos.resize(size_t(clip.frames));
    s.yaw.resize(size_t(clip.frames));
    for (int f = 0; f < clip.frames; ++f) {
        const vec3 h = clip.pos(f, 0);
        s.pos[size_t(f)] = {h.x, 0.0f, h.z};
        float y = heading(clip.rot(f, 0), fwd);
        if (f > 0) y = s.yaw[size_t(f - 1)] + std::remainder(y - s.yaw[size_t(f - 1)], 2.0f * kPi);
        s.yaw[size_t(f)] = y;
    }
    return s;
}

kform ground_kform(vec3 pos, float yaw) {
    kform k;
    k.pos = pos;
    k.rot = yaw_quat(yaw);
    return k;
}

}  // namespace

Clip make_loop(const Clip& in, const LoopOptions& o) {
    if (in.frames < 3) throw std::invalid_argument("make_loop: " + in.name + " has fewer than 3 frames");
    const int n = in.frames, joints = in.joints();
    const float dt = in.frame_dt;
    const float length = float(n - 1) * dt;
    Clip out = in;
    const vec3 fwd = detect_hips_forward(in);
    RootSplit root = split_root(in, fwd);

    // Hips relative to the ground root.
    for (int f = 0; f < n; ++f) {
        kform h;
        h.pos = in.pos(f, 0);
        h.rot = in.rot(f, 0);
        const kform rel = kform_div(ground_kform(root.pos[size_t(f)], root.yaw[size_t(f)]), h);
        out.pos(f, 0) = rel.pos;
        out.rot(f, 0) = rel.rot;
    }

    std::vector<vec3> off(static_cast<size_t>(n));
    for (int j = 0; j < joints; ++j) {
        // Positions.
        const vec3 d = out.pos(n - 1, j) - out.pos(0, j);
        auto pj = [&](int f) { return out.pos(f, j); };
        const vec3 vs = start_velocity(pj, dt), ve = end_velocity(pj, n, dt);
        vec3 as, ae;
        position_rates(d, vs, ve, o, length, as, ae);
        channel_offsets(off, d, as, ae, o, dt);
        for (int f = 0; f < n; ++f) out.pos(f, j) = out.pos(f, j) + off[size_t(f)];
        // Rotations, as scaled angle axis offsets applied on the left (the article's choice).
        const vec3 dr = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(out.rot(n - 1, j), out.rot(0, j))));
        const vec3 ws = start_angular_velocity(out.rot(0, j), out.rot(1, j), out.rot(2, j), dt);
        const vec3 we = end_angular_velocity(out.rot(n - 1, j), out.rot(n - 2, j), out.rot(n - 3, j), dt);
        rotation_rates(dr, ws, we, o, length, as, ae);
        channel_offsets(off, dr, as, ae, o, dt);
        for (int f = 0; f < n; ++f) out.rot(f, j) = quat_normalize(quat_mul(quat_from_scaled_angle_axis(off[size_t(f)]), out.rot(f, j)));
    }

    // The character root.
    switch (o.root) {
        case RootMode::Fix:
            std::fill(root.pos.begin(), root.pos.end(), vec3{});
            std::fill(root.yaw.begin(), root.yaw.end(), 0.0f);
            break;
        case RootMode::Loop: {
            const vec3 d = root.pos[size_t(n - 1)] - root.pos[0];
            auto rp = [&](int f) { return root.pos[size_t(f)]; };
            auto ry3 = [&](int f) { return vec3{0, root.yaw[size_t(f)], 0}; };
            vec3 as, ae;
            position_rates(d, start_velocity(rp, dt), end_velocity(rp, n, dt), o, length, as, ae);
            channel_offsets(off, d, as, ae, o, dt);
            for (int f = 0; f < n; ++f) root.pos[size_t(f)] += off[size_t(f)];
            const vec3 dy{0, root.yaw[size_t(n - 1)] - root.yaw[0], 0};
            position_rates(dy, start_velocity(ry3, dt), end_velocity(ry3, n, dt), o, length, as, ae);
            channel_offsets(off, dy, as, ae, o, dt);
            for (int f = 0; f < n; ++f) root.yaw[size_t(f)] += off[size_t(f)].y;
            break;
        }
        case RootMode::Accumulate: {
            // Velocities in the character's own frame at both ends; only their difference is
            // inertialized out (cubic velocity offsets), applied in each end's world frame.
            auto rp = [&](int f) { return root.pos[size_t(f)]; };
            auto ry3 = [&](int f) { return vec3{0, root.yaw[size_t(f)], 0}; };
            const float y0 = root.yaw[0], y1 = root.yaw[size_t(n - 1)];
            const vec3 vs = quat_inv_mul_vec3(yaw_quat(y0), start_velocity(rp, dt));
            const vec3 ve = quat_inv_mul_vec3(yaw_quat(y1), end_velocity(rp, n, dt));
            const vec3 dv = ve - vs;
            const float dw = end_velocity(ry3, n, dt).y - start_velocity(ry3, dt).y;
            const float r = clampf(o.ratio, 0.0f, 1.0f);
            const float bs = std::min(o.blendtime_start, length), be = std::min(o.blendtime_end, length);
            vec3 rate;
            for (int f = 0; f < n; ++f) {
                const float ts = float(f) * dt, te = float(n - 1 - f) * dt;
                root.pos[size_t(f)] += decayed_velocity_offset_cubic(r * quat_mul_vec3(yaw_quat(y0), dv), bs, ts, rate) +
                                       decayed_velocity_offset_cubic((1.0f - r) * quat_mul_vec3(yaw_quat(y1), dv), be, te, rate);
                root.yaw[size_t(f)] += decayed_velocity_offset_cubic(vec3{r * dw, 0, 0}, bs, ts, rate).x +
                                       decayed_velocity_offset_cubic(vec3{(1.0f - r) * dw, 0, 0}, be, te, rate).x;
            }
            break;
        }
    }

    // Recompose the hips.
    for (int f = 0; f < n; ++f) {
        kform rel;
        rel.pos = out.pos(f, 0);
        rel.rot = out.rot(f, 0);
        const kform h = kform_mul(ground_kform(root.pos[size_t(f)], root.yaw[size_t(f)]), rel);
        out.pos(f, 0) = h.pos;
        out.rot(f, 0) = quat_normalize(h.rot);
    }
    return out;
}

SeamReport measure_seam(const Clip& clip) {
    SeamReport rep;
    const int n = clip.frames, joints = clip.joints();
    if (n < 3) return rep;
    const float dt = clip.frame_dt, m = clip.metres_per_unit;
    const vec3 fwd = detect_hips_forward(clip);
    const RootSplit root = split_root(clip, fwd);
    // Character-space global joint positions of every frame.
    std::vector<vec3> pc(size_t(n) * size_t(joints));
    Pose local(joints), global(joints);
    for (int f = 0; f < n; ++f) {
        for (int j = 0; j < joints; ++j) {
            local.pos[size_t(j)] = clip.pos(f, j);
            local.rot[size_t(j)] = clip.rot(f, j);
            local.scl[size_t(j)] = clip.scl(f, j);
        }
        op_fk_static(global, local, clip.skeleton.parents);
        const quat inv_yaw = quat_inv(yaw_quat(root.yaw[size_t(f)]));
        for (int j = 0; j < joints; ++j)
            pc[size_t(f) * size_t(joints) + size_t(j)] = quat_mul_vec3(inv_yaw, global.pos[size_t(j)] - root.pos[size_t(f)]) * m;
    }
    auto P = [&](int f, int j) { return pc[size_t(f) * size_t(joints) + size_t(j)]; };
    auto vel_step = [&](int f, int j) {  // |v(f -> f+1) - v(f-1 -> f)|
        return length((P(f + 1, j) - P(f, j)) / dt - (P(f, j) - P(f - 1, j)) / dt);
    };
    for (int j = 0; j < joints; ++j) {
        const float dp = length(P(n - 1, j) - P(0, j));
        const float dv = length((P(n - 1, j) - P(n - 2, j)) / dt - (P(1, j) - P(0, j)) / dt);
        if (dp > rep.pos_m) rep.pos_m = dp, rep.pos_joint = clip.skeleton.names[size_t(j)];
        if (dv > rep.vel_mps) rep.vel_mps = dv, rep.vel_joint = clip.skeleton.names[size_t(j)];
        // A smooth loop changes velocity at the seam about as much as at the frames around it.
        if (n >= 6) {
            const float around = std::max({vel_step(1, j), vel_step(2, j), vel_step(n - 2, j), vel_step(n - 3, j)});
            rep.vel_excess_mps = std::max(rep.vel_excess_mps, dv - 2.0f * around);
        }
    }
    std::vector<float> steps;
    for (int f = 1; f + 1 < n; ++f)
        for (int j = 0; j < joints; ++j) steps.push_back(length((P(f + 1, j) - P(f, j)) / dt - (P(f, j) - P(f - 1, j)) / dt));
    if (!steps.empty()) {
        const size_t k = std::min(steps.size() - 1, size_t(0.99 * double(steps.size())));
        std::nth_element(steps.begin(), steps.begin() + std::ptrdiff_t(k), steps.end());
        rep.typical_vel_step_mps = steps[k];
    }
    auto rp = [&](int f) { return root.pos[size_t(f)]; };
    auto ry3 = [&](int f) { return vec3{0, root.yaw[size_t(f)], 0}; };
    const vec3 vs = quat_inv_mul_vec3(yaw_quat(root.yaw[0]), start_velocity(rp, dt));
    const vec3 ve = quat_inv_mul_vec3(yaw_quat(root.yaw[size_t(n - 1)]), end_velocity(rp, n, dt));
    rep.root_vel_mps = length(ve - vs) * m;
    rep.root_turn_rads = std::fabs(end_velocity(ry3, n, dt).y - start_velocity(ry3, dt).y);
    return rep;
}

}  // namespace ks
