#include <kinesync/offline/builtin_motion.h>

#include <cmath>
#include <stdexcept>

namespace ks {

namespace {

enum J {
    Hips, Spine, Chest, Neck, Head,
    LShoulder, LArm, LForeArm, LHand,
    RShoulder, RArm, RForeArm, RHand,
    LUpLeg, LLeg, LFoot, LToe,
    RUpLeg, RLeg, RFoot, RToe,
    kJoints
};

// Gait parameters; angles in radians. Leg pitch about X: negative swings the leg forward
// (rotating the downward bone towards +Z), positive knee bends the shin back.
struct Gait {
    float period;      // seconds per full cycle (two steps)
    float cycles;      // cycles in the clip
    float speed;       // m/s along the heading
    float turn_rate;   // rad/s of heading change
    float hip_swing, knee_base, knee_lift, ankle, arm_swing, elbow, lean, bob, sway, twist;
};

quat rx(float a) { return quat_from_angle_axis(a, {1, 0, 0}); }
quat ry(float a) { return quat_from_angle_axis(a, {0, 1, 0}); }
quat rz(float a) { return quat_from_angle_axis(a, {0, 0, 1}); }

// Smooth non-negative bump: max(0, cos)^2 (C1), peaking at phase 0.
float bump(float phase) {
    const float c = std::cos(phase);
    return c > 0.0f ? c * c : 0.0f;
}

void pose_gait(Clip& c, int f, float t, const Gait& g) {
    const float w = 2.0f * kPi / g.period;
    const float ph = w * t;  // left leg phase; right leg is half a cycle behind
    // Character root: heading and position integrate the constant speed and turn rate.
    const float heading = g.turn_rate * t;
    vec3 root;
    if (std::fabs(g.turn_rate) > 1e-6f) {
        const float radius = g.speed / g.turn_rate;
        root = {radius * (1.0f - std::cos(heading)), 0.0f, radius * std::sin(heading)};
    } else {
        root = {0.0f, 0.0f, g.speed * t};
    }
    const quat yaw = ry(heading);
    const vec3 bob{g.sway * std::sin(ph), 0.95f - g.bob * (0.5f + 0.5f * std::cos(2.0f * ph)), 0.0f};
    c.pos(f, Hips) = root + quat_mul_vec3(yaw, bob);
    c.rot(f, Hips) = quat_mul(yaw, quat_mul(ry(g.twist * std::sin(ph)), quat_mul(rx(g.lean), rz(0.5f * g.sway * std::sin(ph)))));
    c.rot(f, Spine) = quat_mul(ry(-0.6f * g.twist * std::sin(ph)), rx(0.3f * g.lean));
    c.rot(f, Chest) = rx(0.02f * std::sin(2.0f * ph));
    c.rot(f, Neck) = rx(-0.5f * g.lean);
    c.rot(f, Head) = quat_mul(ry(-0.4f * g.twist * std::sin(ph)), rx(-0.4f * g.lean));
    for (int side = 0; side < 2; ++side) {
        const float p = ph + (side == 0 ? 0.0f : kPi);
        const int up = side == 0 ? LUpLeg : RUpLeg, leg = up + 1, foot = up + 2, arm = side == 0 ? LArm : RArm;
        const float hip = -g.hip_swing * std::sin(p);
        const float knee = g.knee_base + g.knee_lift * bump(p);
        c.rot(f, up) = rx(hip);
        c.rot(f, leg) = rx(knee);
        c.rot(f, foot) = rx(-g.ankle * (hip + knee) + 0.1f * std::sin(p));
        // Arms swing against the leg on the same side, hanging slightly out from the body.
        const float out = side == 0 ? 0.08f : -0.08f;
        c.rot(f, arm) = quat_mul(rz(out), rx(g.arm_swing * std::sin(p)));
        c.rot(f, arm + 1) = rx(-(g.elbow + 0.5f * g.elbow * (0.5f + 0.5f * std::sin(p))));
    }
}

void pose_idle(Clip& c, int f, float t) {
    const float breathe = std::sin(2.0f * kPi * t / 4.0f), shift = std::sin(2.0f * kPi * t / 8.0f);
    c.pos(f, Hips) = {0.025f * shift, 0.95f - 0.005f * (1.0f + breathe), 0.0f};
    c.rot(f, Hips) = rz(0.03f * shift);
    c.rot(f, Spine) = rz(-0.02f * shift);
    c.rot(f, Chest) = rx(-0.03f * breathe);
    c.rot(f, Neck) = rx(0.01f * breathe);
    c.rot(f, Head) = quat_mul(ry(0.15f * std::sin(2.0f * kPi * t / 8.0f + 1.0f)), rx(0.02f * breathe));
    for (int side = 0; side < 2; ++side) {
        const float s = side == 0 ? 1.0f : -1.0f;
        const int up = side == 0 ? LUpLeg : RUpLeg, arm = side == 0 ? LArm : RArm;
        c.rot(f, up) = rz(-0.03f * s * shift);
        c.rot(f, up + 1) = rx(0.05f + 0.03f * (1.0f + s * shift));
        c.rot(f, up + 2) = rx(-0.04f - 0.015f * (1.0f + s * shift));
        c.rot(f, arm) = quat_mul(rz(s * 0.1f), rx(0.04f * breathe));
        c.rot(f, arm + 1) = rx(-0.15f - 0.03f * breathe);
    }
}

}  // namespace

Skeleton builtin_skeleton() {
    Skeleton s;
    auto add = [&s](const char* name, int parent, vec3 offset) {
        s.names.push_back(name);
        s.parents.push_back(parent);
        s.offsets.push_back(offset);
    };
    add("Hips", -1, {0, 0.95f, 0});
    add("Spine", Hips, {0, 0.10f, 0});
    add("Chest", Spine, {0, 0.15f, 0});
    add("Neck", Chest, {0, 0.22f, 0});
    add("Head", Neck, {0, 0.10f, 0});
    for (int side = 0; side < 2; ++side) {
        const float s = side == 0 ? 1.0f : -1.0f;
        add(side == 0 ? "LeftShoulder" : "RightShoulder", Chest, {s * 0.06f, 0.17f, 0});
        add(side == 0 ? "LeftArm" : "RightArm", side == 0 ? LShoulder : RShoulder, {s * 0.13f, 0, 0});
        add(side == 0 ? "LeftForeArm" : "RightForeArm", side == 0 ? LArm : RArm, {0, -0.28f, 0});
        add(side == 0 ? "LeftHand" : "RightHand", side == 0 ? LForeArm : RForeArm, {0, -0.25f, 0});
    }
    for (int side = 0; side < 2; ++side) {
        const float s = side == 0 ? 1.0f : -1.0f;
        add(side == 0 ? "LeftUpLeg" : "RightUpLeg", Hips, {s * 0.09f, -0.05f, 0});
        add(side == 0 ? "LeftLeg" : "RightLeg", side == 0 ? LUpLeg : RUpLeg, {0, -0.43f, 0});
        add(side == 0 ? "LeftFoot" : "RightFoot", side == 0 ? LLeg : RLeg, {0, -0.42f, 0});
        add(side == 0 ? "LeftToeBase" : "RightToeBase", side == 0 ? LFoot : RFoot, {0, -0.05f, 0.13f});
    }
    return s;
}

const std::vector<std::string>& builtin_clip_names() {
    static const std::vector<std::string> names = {"idle", "walk", "run", "turn"};
    return names;
}

Clip builtin_clip(const std::string& name, float hz) {
    Gait g{};
    float duration = 0.0f;
    if (name == "walk" || name == "turn") {
        g = {1.1f, 2.0f, 1.4f, 0.0f, 0.42f, 0.08f, 0.65f, 0.5f, 0.35f, 0.25f, 0.04f, 0.03f, 0.025f, 0.08f};
        if (name == "turn") g.turn_rate = 0.6f;
        duration = g.period * g.cycles;
    } else if (name == "run") {
        g = {0.7f, 2.0f, 3.5f, 0.0f, 0.65f, 0.25f, 1.45f, 0.4f, 0.6f, 0.9f, 0.18f, 0.05f, 0.015f, 0.12f};
        duration = g.period * g.cycles;
    } else if (name == "idle") {
        duration = 8.0f;
    } else {
        throw std::invalid_argument("unknown built-in clip '" + name + "' (idle, walk, run, turn)");
    }
    Clip c;
    c.name = "builtin:" + name;
    c.skeleton = builtin_skeleton();
    c.frame_dt = 1.0f / hz;
    c.metres_per_unit = 1.0f;
    const int frames = int(std::lround(double(duration) * double(hz))) + 1;
    c.resize(frames);
    for (int f = 0; f < frames; ++f) {
        // Time from the frame index in double, so the last frame lands exactly on the period.
        const float t = float(double(f) / double(hz));
        for (int j = 0; j < c.joints(); ++j) c.pos(f, j) = c.skeleton.offsets[size_t(j)];
        if (name == "idle") pose_idle(c, f, t);
        else pose_gait(c, f, t, g);
    }
    return c;
}

std::vector<Clip> builtin_clips(float hz) {
    std::vector<Clip> out;
    for (const auto& n : builtin_clip_names()) out.push_back(builtin_clip(n, hz));
    return out;
}

}  // namespace ks
