#include <kinesync/offline/game_rig.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace ks {

namespace {


std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// 'l', 'r' or 0 from a joint name: "Left...", "l...", "..._L_...", "...left...".
char side_of(const std::string& name) {
    const std::string n = lower(name);
    if (n.find("left") != std::string::npos || n.find("_l_") != std::string::npos || n[0] == 'l') return 'l';
    if (n.find("right") != std::string::npos || n.find("_r_") != std::string::npos || n[0] == 'r') return 'r';
    return 0;
}

// The first joint on `side` (0: any) whose name holds one of `tokens` and none of `not_tokens`.
int find_joint(const Skeleton& s, std::initializer_list<const char*> tokens, char side,
               std::initializer_list<const char*> not_tokens = {}) {
    for (int j = 0; j < s.size(); ++j) {
        const std::string n = lower(s.names[size_t(j)]);
        const bool hit = std::any_of(tokens.begin(), tokens.end(), [&](const char* t) { return n.find(t) != std::string::npos; });
        const bool miss = std::any_of(not_tokens.begin(), not_tokens.end(), [&](const char* t) { return n.find(t) != std::string::npos; });
        if (hit && !miss && (side == 0 || side_of(s.names[size_t(j)]) == side)) return j;
    }
    return -1;
}

int require(int joint, const std::string& what) {
    if (joint < 0) throw std::invalid_argument("make_game_rig: the body has no joint for " + what);
    return joint;
}

quat axis_angle(vec3 axis, float angle) { return quat_from_scaled_angle_axis(normalize(axis) * angle); }

// The twist of q about `axis` (unit): the swing-twist decomposition's twist.
quat twist_about(quat q, vec3 axis) {
    const float d = q.x * axis.x + q.y * axis.y + q.z * axis.z;
    quat t{q.w, axis.x * d, axis.y * d, axis.z * d};
    const float len = quat_length(t);
    return len < 1e-6f ? quat{} : t / len;
}

float smoothstep01(float x) {
    x = std::clamp(x, 0.0f, 1.0f);
    return x * x * (3.0f - 2.0f * x);
}

// A pulse of length `width` s starting every `period` s (phase `at`), smooth at both ends.
float pulse(float t, float period, float at, float width) {
    const float u = std::fmod(t - at + 100.0f * period, period);
    if (u > width) return 0.0f;
    return std::sin(kPi * u / width);
}

// Adds joints to a copy of the clip: each with a parent, a rest offset (file units) and its local
// rotation as a function of time (and of the body's pose at that frame).
struct RigBuilder {
    Clip in;
    struct Added {
        int parent;
        vec3 offset;
        std::function<quat(float t, int frame)> rot;
    };
    std::vector<Added> added;
    float unit;  // file units per metre

    explicit RigBuilder(const Clip& body) : in(body), unit(1.0f / std::max(body.metres_per_unit, 1e-6f)) {}
    int add(const std::string& name, int parent, vec3 offset_m, std::function<quat(float, int)> rot = {}) {
        const int index = in.joints() + int(added.size());
        names.push_back(name);
        added.push_back({parent, offset_m * unit, std::move(rot)});
        return index;
    }
    std::vector<std::string> names;

    Clip build() const {
        Clip out;
        out.name = in.name;
        out.frame_dt = in.frame_dt;
        out.metres_per_unit = in.metres_per_unit;
        out.skeleton = in.skeleton;
        for (size_t k = 0; k < added.size(); ++k) {
            out.skeleton.names.push_back(names[k]);
            out.skeleton.parents.push_back(added[k].parent);
            out.skeleton.offsets.push_back(added[k].offset);
        }
        out.resize(in.frames);
        const int body = in.joints();
        for (int f = 0; f < in.frames; ++f) {
            for (int j = 0; j < body; ++j) {
                out.pos(f, j) = in.pos(f, j);
                out.rot(f, j) = in.rot(f, j);
                out.scl(f, j) = in.scl(f, j);
            }
            const float t = float(f) * in.frame_dt;
            for (size_t k = 0; k < added.size(); ++k) {
                const int j = body + int(k);
                out.pos(f, j) = added[k].offset;
                out.rot(f, j) = added[k].rot ? quat_normalize(added[k].rot(t, f)) : quat{};
            }
        }
        return out;
    }
};

// Rest direction of a joint's bone toward its child `child` (unit), or +Y without one.
vec3 bone_axis(const Skeleton& s, int child) {
    const vec3 o = s.offsets[size_t(child)];
    return length(o) > 1e-6f ? o / length(o) : vec3{0, 1, 0};
}

void add_fingers(RigBuilder& b, int hand, char side, vec3 along_m) {
    const float s = side == 'l' ? 1.0f : -1.0f;
    const char* fingers[] = {"Thumb", "Index", "Middle", "Ring", "Pinky"};
    const vec3 dir = length(along_m) > 1e-6f ? along_m / length(along_m) : vec3{0, -1, 0};
    // A sideways axis to spread the fingers and the curl axis across them.
    vec3 across = cross(dir, vec3{0, 0, 1});
    if (length(across) < 1e-3f) across = cross(dir, vec3{1, 0, 0});
    across = normalize(across);
    for (int f = 0; f < 5; ++f) {
        int parent = hand;
        const float spread = (float(f) - 2.0f) * 0.018f;
        for (int k = 0; k < 3; ++k) {
            const vec3 off = k == 0 ? dir * 0.08f + across * spread * s : dir * (0.035f - 0.006f * float(k));
            const float phase = float(f) * 0.7f + (side == 'l' ? 0.0f : 1.9f);
            parent = b.add(std::string(side == 'l' ? "Left" : "Right") + fingers[f] + std::to_string(k + 1), parent, off,
                           [across, phase, k](float t, int) {
                               const float curl = 0.35f + 0.3f * std::sin(2.0f * kPi * 0.35f * t + phase) + 0.1f * float(k);
                               return axis_angle(across, curl);
                           });
        }
    }
}

// Two twist joints along the bone from `joint` to `child`, each with a share of the child's twist.
void add_twists(RigBuilder& b, const Clip& body, int joint, int child, int count, const std::string& prefix) {
    const vec3 axis = bone_axis(body.skeleton, child);
    const vec3 bone = body.skeleton.offsets[size_t(child)] * body.metres_per_unit;
    for (int k = 1; k <= count; ++k) {
        const float share = float(k) / float(count + 1);
        b.add(prefix + "Twist" + std::to_string(k), joint, bone * share, [&body, child, axis, share](float, int frame) {
            const quat tw = twist_about(body.rot(frame, child), axis);
            return quat_normalize(quat_slerp_shortest(quat{}, tw, share));
        });
    }
}

void add_face(RigBuilder& b, int head, int total) {
    auto eye = [](float t, float phase) {
        // Saccades: a new gaze every 1.7 s, reached in 60 ms, held.
        const float period = 1.7f, u = std::fmod(t + phase, period);
        const int n = int(std::floor((t + phase) / period));
        const float yaw_to = 0.25f * std::sin(float(n) * 2.3f), pitch_to = 0.12f * std::sin(float(n) * 1.7f + 1.0f);
        const float yaw_from = 0.25f * std::sin(float(n - 1) * 2.3f), pitch_from = 0.12f * std::sin(float(n - 1) * 1.7f + 1.0f);
        const float a = smoothstep01(u / 0.06f);
        return quat_mul(axis_angle({0, 1, 0}, yaw_from + (yaw_to - yaw_from) * a), axis_angle({1, 0, 0}, pitch_from + (pitch_to - pitch_from) * a));
    };
    auto talk = [](float t) { return pulse(t, 6.0f, 1.0f, 1.5f) * (0.5f + 0.5f * std::sin(2.0f * kPi * 4.5f * t)); };
    for (int s = 0; s < 2; ++s) {
        const float x = s == 0 ? 0.032f : -0.032f;
        const std::string side = s == 0 ? "Left" : "Right";
        b.add(side + "Eye", head, {x, 0.06f, 0.08f}, [eye, s](float t, int) { return eye(t, s * 0.0f); });
        for (const char* lid : {"UpperLid", "LowerLid"}) {
            const float sign = std::string(lid) == "UpperLid" ? 1.0f : -0.3f;
            b.add(side + lid, head, {x, 0.07f, 0.085f}, [sign](float t, int) { return axis_angle({1, 0, 0}, sign * 0.5f * pulse(t, 4.1f, 0.5f, 0.18f)); });
        }
        for (int k = 0; k < 3; ++k)
            b.add(side + "Brow" + std::to_string(k + 1), head, {x * (0.6f + 0.4f * float(k)), 0.10f, 0.09f},
                  [k](float t, int) { return axis_angle({1, 0, 0}, -0.15f * pulse(t, 9.0f, 3.0f + 0.05f * float(k), 0.8f)); });
    }
    const int jaw = b.add("Jaw", head, {0, 0.0f, 0.03f}, [talk](float t, int) { return axis_angle({1, 0, 0}, 0.25f * talk(t)); });
    for (int k = 0; k < 8; ++k) {
        const float x = (float(k) - 3.5f) * 0.008f;
        b.add("LowerLip" + std::to_string(k + 1), jaw, {x, -0.01f, 0.07f}, [talk, k](float t, int) { return axis_angle({1, 0, 0}, 0.08f * talk(t + 0.02f * float(k))); });
        b.add("UpperLip" + std::to_string(k + 1), head, {x, 0.02f, 0.10f}, [talk, k](float t, int) { return axis_angle({1, 0, 0}, -0.05f * talk(t + 0.02f * float(k))); });
    }
    // The rest never moves: cheeks, nose, ears, chin, tongue, ... up to the total.
    for (int k = 0; b.in.joints() + int(b.added.size()) < total; ++k) {
        const float a = float(k) * 2.39996f, r = 0.04f + 0.0004f * float(k % 100);
        b.add("Face" + std::to_string(k + 1), head, {r * std::cos(a), 0.06f + 0.03f * std::sin(a * 0.5f), 0.06f + 0.02f * std::sin(a)});
    }
}

struct Limbs {
    int hand[2], forearm[2], upper_arm[2], foot[2], shin[2], thigh[2], head;
};

Limbs find_limbs(const Skeleton& s) {
    Limbs l{};
    const char sides[2] = {'l', 'r'};
    for (int k = 0; k < 2; ++k) {
        const std::string name = k == 0 ? "the left " : "the right ";
        l.hand[k] = require(find_joint(s, {"hand", "wrist"}, sides[k], {"index", "thumb", "finger", "pinky", "ring", "mid", "twist"}), name + "hand");
        l.forearm[k] = require(s.parents[size_t(l.hand[k])], name + "forearm");
        l.upper_arm[k] = require(s.parents[size_t(l.forearm[k])], name + "upper arm");
        l.foot[k] = require(find_joint(s, {"foot", "ankle"}, sides[k], {"toe"}), name + "foot");
        l.shin[k] = require(s.parents[size_t(l.foot[k])], name + "shin");
        l.thigh[k] = require(s.parents[size_t(l.shin[k])], name + "thigh");
    }
    l.head = require(find_joint(s, {"head"}, 0), "the head");
    return l;
}

void add_game_joints(RigBuilder& b, const Clip& body, int total) {
    const Limbs l = find_limbs(body.skeleton);
    const char sides[2] = {'l', 'r'};
    for (int k = 0; k < 2; ++k) {
        const std::string side = k == 0 ? "Left" : "Right";
        const vec3 along = body.skeleton.offsets[size_t(l.hand[k])] * body.metres_per_unit;
        add_fingers(b, l.hand[k], sides[k], along);
        add_twists(b, body, l.upper_arm[k], l.forearm[k], 2, side + "UpperArm");
        add_twists(b, body, l.forearm[k], l.hand[k], 2, side + "ForeArm");
        add_twists(b, body, l.thigh[k], l.shin[k], 2, side + "Thigh");
        add_twists(b, body, l.shin[k], l.foot[k], 1, side + "Shin");
    }
    add_face(b, l.head, total);
}

}  // namespace

Clip make_game_rig(const Clip& body, const GameRigOptions& options) {
    if (options.joints < body.joints() + 50 || options.joints > 1024)
        throw std::invalid_argument("make_game_rig: joints " + std::to_string(options.joints) + " must be between the body's " +
                                    std::to_string(body.joints()) + " + 50 and 1024");
    RigBuilder b(body);
    add_game_joints(b, body, options.joints);
    return b.build();
}

Clip make_stress_rig(const Clip& body, const StressRigOptions& options) {
    if (options.joints < 300 || options.joints > 1024 || options.chain_length < 2)
        throw std::invalid_argument("make_stress_rig: joints " + std::to_string(options.joints) + " must be within 300..1024, chain_length at least 2");
    RigBuilder b(body);
    add_game_joints(b, body, 250);
    const int head = find_limbs(body.skeleton).head;
    for (int c = 0; b.in.joints() + int(b.added.size()) < options.joints; ++c) {
        const bool from_head = c % 2 == 1;
        const float a = float(c) * 2.39996f;
        int parent = from_head ? head : 0;
        const vec3 root_off = from_head ? vec3{0.06f * std::cos(a), 0.08f, 0.06f * std::sin(a)} : vec3{0.14f * std::cos(a), -0.05f, 0.14f * std::sin(a)};
        for (int k = 0; k < options.chain_length && b.in.joints() + int(b.added.size()) < options.joints; ++k) {
            const vec3 off = k == 0 ? root_off : vec3{0, -(from_head ? 0.012f : 0.02f), 0};
            // Half of the chains sway at a time (a gust every 8 s lasting 4 s, staggered).
            parent = b.add((from_head ? "Hair" : "Strap") + std::to_string(c + 1) + "_" + std::to_string(k + 1), parent, off,
                           [c, k](float t, int) {
                               const float gust = 0.5f + 0.5f * std::sin(2.0f * kPi * t / 8.0f + float(c) * kPi * 0.5f);
                               const float w = 0.06f * gust * std::sin(2.0f * kPi * 0.6f * t - 0.35f * float(k) + float(c));
                               return axis_angle({1, 0, 0.3f}, w);
                           });
        }
    }
    return b.build();
}

Clip make_rig(const std::string& name, const Clip& body) {
    if (name == "game") return make_game_rig(body);
    if (name == "stress") return make_stress_rig(body);
    throw std::invalid_argument("unknown rig '" + name + "' (game or stress)");
}

}  // namespace ks
