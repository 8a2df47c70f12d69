#include <kinesync/offline/bvh_export.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include "offline/src/text.h"

namespace ks {

namespace {

constexpr double kPiD = 3.14159265358979323846;
constexpr double kTwoPi = 2.0 * kPiD;
constexpr double kAcceptErr = 1e-6;     // rad: a decomposition candidate must reconstruct q this well
constexpr double kRewrapLimit = 20.0 * kTwoPi;  // unwrapped angles beyond 20 turns are re-wrapped

// ---- double-precision rotation helpers (local: the project's math is float) ----

struct dquat {
    double w = 1, x = 0, y = 0, z = 0;
};

dquat dmul(const dquat& a, const dquat& b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

dquat daxis(int axis, double angle) {
    dquat q{std::cos(0.5 * angle), 0, 0, 0};
    const double s = std::sin(0.5 * angle);
    (axis == 0 ? q.x : axis == 1 ? q.y : q.z) = s;
    return q;
}

// Angle (rad) of a * b^-1, in [0, pi].
double dangle_between(const dquat& a, const dquat& b) {
    const dquat d = dmul(a, dquat{b.w, -b.x, -b.y, -b.z});
    const double v = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    return 2.0 * std::atan2(v, std::fabs(d.w));
}

struct dmat {
    double m[3][3];
};

dmat dmat_from_quat(const dquat& q) {
    const double w = q.w, x = q.x, y = q.y, z = q.z;
    dmat r;
    r.m[0][0] = 1 - 2 * (y * y + z * z);
    r.m[0][1] = 2 * (x * y - w * z);
    r.m[0][2] = 2 * (x * z + w * y);
    r.m[1][0] = 2 * (x * y + w * z);
    r.m[1][1] = 1 - 2 * (x * x + z * z);
    r.m[1][2] = 2 * (y * z - w * x);
    r.m[2][0] = 2 * (x * z - w * y);
    r.m[2][1] = 2 * (y * z + w * x);
    r.m[2][2] = 1 - 2 * (x * x + y * y);
    return r;
}

int axis_index(char c) {
    switch (c) {
        case 'X': case 'x': return 0;
        case 'Y': case 'y': return 1;
        case 'Z': case 'z': return 2;
        default: return -1;
    }
}

// +1 when (i, j, k) is a cyclic permutation of (0, 1, 2), -1 otherwise.
int parity(int i, int j, int k) { return ((j - i + 3) % 3 == 1 && (k - j + 3) % 3 == 1) ? 1 : -1; }

struct EulerOrder {
    int a[3];
    bool proper;  // a[0] == a[2]
};

bool parse_order(const char order[3], EulerOrder& o) {
    for (int i = 0; i < 3; ++i) {
        o.a[i] = axis_index(order[i]);
        if (o.a[i] < 0) return false;
    }
    if (o.a[0] == o.a[1] || o.a[1] == o.a[2]) return false;
    o.proper = o.a[0] == o.a[2];
    return true;
}

dquat dquat_from_euler(const EulerOrder& o, const std::array<double, 3>& e) {
    return dmul(dmul(daxis(o.a[0], e[0]), daxis(o.a[1], e[1])), daxis(o.a[2], e[2]));
}

// Given the first two angles, the third from the residual Rb(b)^T Ra(a)^T R (a rotation about the
// third axis when (a, b) are right). Robust to an ill-conditioned first angle near gimbal lock.
double third_angle(const EulerOrder& o, const dquat& q, double a, double b) {
    const dquat ra = daxis(o.a[0], -a), rb = daxis(o.a[1], -b);
    const dmat m = dmat_from_quat(dmul(dmul(rb, ra), q));
    const int c = o.a[2], p = (c + 1) % 3, r = (c + 2) % 3;
    return std::atan2(m.m[r][p] - m.m[p][r], m.m[p][p] + m.m[r][r]);
}

double wrap_near(double angle, double ref) { return angle + kTwoPi * std::round((ref - angle) / kTwoPi); }

}  // namespace

std::array<double, 3> euler_from_quat(quat qf, const char order[3], const std::array<double, 3>* prev_in) {
    EulerOrder o;
    if (!parse_order(order, o))
        throw std::invalid_argument(std::string("euler_from_quat: unsupported rotation order '") +
                                    std::string(order, order + 3) + "'");
    dquat q{qf.w, qf.x, qf.y, qf.z};
    const double n = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    if (!(n > 0.0) || !std::isfinite(n)) return {0, 0, 0};
    q = {q.w / n, q.x / n, q.y / n, q.z / n};
    const dmat R = dmat_from_quat(q);
    const auto& m = R.m;
    const int i = o.a[0], j = o.a[1];

    // Branch 1 (closed form) and branch 2 (the other solution of the same rotation).
    double a1, b1, b2;
    if (!o.proper) {
        const int k = o.a[2];
        const int s = parity(i, j, k);
        // R = Ri(a) Rj(b) Rk(c): R[i][k] = s sin b, R[i][i] = cos b cos c, R[i][j] = -s cos b sin c,
        // R[j][k] = -s sin a cos b, R[k][k] = cos a cos b.
        b1 = std::atan2(s * m[i][k], std::sqrt(m[i][i] * m[i][i] + m[i][j] * m[i][j]));
        a1 = std::atan2(-s * m[j][k], m[k][k]);
        b2 = kPiD - b1;
    } else {
        const int k = 3 - i - j;
        const int s = parity(i, j, k);
        // R = Ri(a) Rj(b) Ri(c): R e_i = cos b e_i + sin b sin a e_j - s sin b cos a e_k.
        b1 = std::atan2(std::sqrt(m[j][i] * m[j][i] + m[k][i] * m[k][i]), m[i][i]);
        a1 = std::atan2(m[j][i], -s * m[k][i]);
        b2 = -b1;
    }
    const double a2 = a1 + kPiD;

    const std::array<double, 3> zero{0, 0, 0};
    const std::array<double, 3>& prev = prev_in ? *prev_in : zero;

    std::array<double, 3> cands[4];
    int nc = 0;
    cands[nc++] = {a1, b1, third_angle(o, q, a1, b1)};
    cands[nc++] = {a2, b2, third_angle(o, q, a2, b2)};
    // Near gimbal lock only the combination of the first and third angle is determined: keeping the
    // previous first angle gives a continuous split (accepted only when it reconstructs q).
    cands[nc++] = {prev[0], b1, third_angle(o, q, prev[0], b1)};
    cands[nc++] = {prev[0], b2, third_angle(o, q, prev[0], b2)};

    int best = -1;
    double best_d = std::numeric_limits<double>::infinity();
    double best_err = std::numeric_limits<double>::infinity();
    int most_exact = 0;
    for (int c = 0; c < nc; ++c) {
        auto& e = cands[c];
        for (int t = 0; t < 3; ++t) e[size_t(t)] = wrap_near(e[size_t(t)], prev[size_t(t)]);
        const double err = dangle_between(dquat_from_euler(o, e), q);
        if (err < best_err) {
            best_err = err;
            most_exact = c;
        }
        if (!(err <= kAcceptErr)) continue;
        double d = 0;
        for (int t = 0; t < 3; ++t) d += (e[size_t(t)] - prev[size_t(t)]) * (e[size_t(t)] - prev[size_t(t)]);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    std::array<double, 3> out = cands[best >= 0 ? best : most_exact];
    for (double& v : out)
        if (std::fabs(v) > kRewrapLimit) v = std::remainder(v, kTwoPi);
    return out;
}

namespace {

const char* kPositionNames[3] = {"Xposition", "Yposition", "Zposition"};

// Why a joint name would not read back through load_bvh (empty when it would).
std::string bad_name_reason(const std::string& name) {
    if (name.empty()) return "is empty";
    if (name.front() == ' ' || name.back() == ' ') return "has leading or trailing spaces";
    if (name.find("  ") != std::string::npos) return "has consecutive spaces";
    for (char c : name) {
        if (c == '{' || c == '}') return "contains a brace";
        if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') return "contains a tab or line break";
    }
    size_t b = 0;
    while (b <= name.size()) {
        size_t e = name.find(' ', b);
        if (e == std::string::npos) e = name.size();
        const std::string_view w(name.data() + b, e - b);
        // The importer accepts a keyword as the first word of a name ("Root", "End"), not later.
        for (const char* kw : {"OFFSET", "CHANNELS", "JOINT", "End", "ROOT", "MOTION", "HIERARCHY"})
            if (b > 0 && iequals(w, kw)) return "contains the BVH keyword '" + std::string(w) + "'";
        b = e + 1;
    }
    return {};
}

void check_clip(const Clip& clip) {
    if (const std::string err = clip.skeleton.validate(); !err.empty())
        throw std::invalid_argument("save_bvh: bad skeleton: " + err);
    if (clip.joints() < 1) throw std::invalid_argument("save_bvh: the skeleton has no joints");
    if (clip.frames < 1) throw std::invalid_argument("save_bvh: the clip has no frames");
    if (!(clip.frame_dt > 0.0f) || !std::isfinite(clip.frame_dt))
        throw std::invalid_argument("save_bvh: frame_dt must be positive and finite");
    const size_t n = size_t(clip.frames) * size_t(clip.joints());
    if (clip.pos_.size() != n || clip.rot_.size() != n)
        throw std::invalid_argument("save_bvh: clip arrays do not hold frames * joints values");
    std::unordered_set<std::string> seen;
    for (int j = 0; j < clip.joints(); ++j) {
        const std::string& name = clip.skeleton.names[size_t(j)];
        if (const std::string why = bad_name_reason(name); !why.empty())
            throw std::invalid_argument("save_bvh: joint " + std::to_string(j) + " name '" + name + "' " + why +
                                        " (load_bvh would not read it back)");
        if (!seen.insert(name).second) throw std::invalid_argument("save_bvh: duplicate joint name '" + name + "'");
        if (!isfinite(clip.skeleton.offsets[size_t(j)]))
            throw std::invalid_argument("save_bvh: joint '" + name + "' has a non-finite OFFSET");
    }
    for (size_t k = 0; k < n; ++k)
        if (!isfinite(clip.pos_[k]) || !isfinite(clip.rot_[k]))
            throw std::invalid_argument("save_bvh: non-finite position or rotation at frame " +
                                        std::to_string(k / size_t(clip.joints())) + ", joint '" +
                                        clip.skeleton.names[k % size_t(clip.joints())] + "'");
}

// Per joint and axis: does the local position move away from the OFFSET in any frame?
std::vector<std::array<bool, 3>> moving_axes(const Clip& clip) {
    std::vector<std::array<bool, 3>> out(size_t(clip.joints()), {false, false, false});
    for (int j = 0; j < clip.joints(); ++j) {
        const vec3 o = clip.skeleton.offsets[size_t(j)];
        const float tol = 1e-6f * std::max(1.0f, length(o));
        for (int f = 0; f < clip.frames; ++f) {
            const vec3 d = clip.pos(f, j) - o;
            if (std::fabs(d.x) > tol) out[size_t(j)][0] = true;
            if (std::fabs(d.y) > tol) out[size_t(j)][1] = true;
            if (std::fabs(d.z) > tol) out[size_t(j)][2] = true;
        }
    }
    return out;
}

bool rotates(const Clip& clip, int j) {
    for (int f = 0; f < clip.frames; ++f) {
        const quat q = clip.rot(f, j);
        const float v = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
        if (2.0f * std::atan2(v, std::fabs(q.w)) > 1e-6f) return true;
    }
    return false;
}

// The rotation order of a channel list ("" when it has no rotation channels); throws when unsupported.
std::string rotation_order(const BvhChannels& ch) {
    std::string order;
    for (const std::string& c : ch.channels) {
        const int k = bvh_channel_kind(c);
        if (k >= 3) order += char('X' + (k - 3));
    }
    if (order.empty()) return order;
    EulerOrder o;
    if (order.size() != 3 || !parse_order(order.c_str(), o))
        throw std::invalid_argument("save_bvh: joint '" + ch.joint + "' has rotation channels '" + order +
                                    "'; export supports none or three (e.g. Zrotation Yrotation Xrotation)");
    return order;
}

// Channel writer for one joint: what each channel of the joint writes.
struct JointPlan {
    std::vector<int> kinds;   // channel kinds, 0..5
    std::vector<int> rot_slot;  // for rotation channels: index into the Euler angles (0..2); -1 for positions
    std::vector<bool> first_of_axis;  // position channel: the first one on its axis (later duplicates write 0)
    std::string order;        // rotation order, "" for none
};

std::vector<JointPlan> make_plans(const std::vector<BvhChannels>& layout) {
    std::vector<JointPlan> plans(layout.size());
    for (size_t j = 0; j < layout.size(); ++j) {
        JointPlan& p = plans[j];
        p.order = rotation_order(layout[j]);
        int slot = 0;
        bool seen_axis[3] = {false, false, false};
        for (const std::string& c : layout[j].channels) {
            const int k = bvh_channel_kind(c);
            p.kinds.push_back(k);
            if (k >= 3) {
                p.rot_slot.push_back(slot++);
                p.first_of_axis.push_back(false);
            } else {
                p.rot_slot.push_back(-1);
                p.first_of_axis.push_back(!seen_axis[k]);
                seen_axis[k] = true;
            }
        }
    }
    return plans;
}

void append_number(std::string& out, double v) {
    if (std::fabs(v) < 5e-10) {
        out += '0';
        return;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, float(v), std::chars_format::fixed);
    if (r.ec != std::errc()) {  // cannot happen for finite floats below 1e39; keep a valid number anyway
        const int n = std::snprintf(buf, sizeof buf, "%.9g", v);
        out.append(buf, size_t(n));
        return;
    }
    out.append(buf, r.ptr);
}

// Depth-first pre-order of the joints (children in index order), as the HIERARCHY lists them.
std::vector<int> dfs_order(const Skeleton& s) {
    const int n = s.size();
    std::vector<std::vector<int>> children(static_cast<size_t>(n));
    std::vector<int> roots;
    for (int j = 0; j < n; ++j) (s.parents[size_t(j)] < 0 ? roots : children[size_t(s.parents[size_t(j)])]).push_back(j);
    std::vector<int> order, stack;
    for (int r : roots) {
        stack.push_back(r);
        while (!stack.empty()) {
            const int j = stack.back();
            stack.pop_back();
            order.push_back(j);
            for (auto it = children[size_t(j)].rbegin(); it != children[size_t(j)].rend(); ++it) stack.push_back(*it);
        }
    }
    return order;
}

std::string render(const Clip& clip, const std::vector<BvhChannels>* layout_in, const std::vector<vec3>* end_sites,
                   const std::vector<int>* end_site_parents) {
    const std::vector<BvhChannels> layout = bvh_export_layout(clip, layout_in);
    const std::vector<JointPlan> plans = make_plans(layout);
    const Skeleton& sk = clip.skeleton;
    const int nj = clip.joints();

    // End Sites per joint.
    std::vector<std::vector<vec3>> sites(static_cast<size_t>(nj));
    if (end_sites) {
        for (size_t k = 0; k < end_sites->size(); ++k) {
            const int p = end_site_parents && k < end_site_parents->size() ? (*end_site_parents)[k] : -1;
            if (p < 0 || p >= nj) throw std::invalid_argument("save_bvh: End Site " + std::to_string(k) + " has no valid parent joint");
            if (!isfinite((*end_sites)[k])) throw std::invalid_argument("save_bvh: End Site " + std::to_string(k) + " has a non-finite OFFSET");
            sites[size_t(p)].push_back((*end_sites)[k]);
        }
    } else {
        std::vector<bool> has_child(size_t(nj), false);
        for (int j = 0; j < nj; ++j)
            if (sk.parents[size_t(j)] >= 0) has_child[size_t(sk.parents[size_t(j)])] = true;
        for (int j = 0; j < nj; ++j)
            if (!has_child[size_t(j)]) sites[size_t(j)].push_back(vec3{});
    }

    const std::vector<int> order = dfs_order(sk);
    std::vector<int> depth(size_t(nj), 0);
    for (int j = 0; j < nj; ++j) depth[size_t(j)] = sk.parents[size_t(j)] < 0 ? 0 : depth[size_t(sk.parents[size_t(j)])] + 1;

    std::string out;
    out.reserve(size_t(clip.frames) * size_t(nj) * 40 + 4096);
    out += "HIERARCHY\n";
    auto indent = [&](int d) { out.append(size_t(d), '\t'); };
    auto offset_line = [&](int d, vec3 o) {
        indent(d);
        out += "OFFSET ";
        append_number(out, o.x);
        out += ' ';
        append_number(out, o.y);
        out += ' ';
        append_number(out, o.z);
        out += '\n';
    };
    // Closes the blocks of joints on the open path that are not ancestors of `next` (-1: close all).
    std::vector<int> open;
    auto close_until = [&](int parent_of_next) {
        while (!open.empty() && open.back() != parent_of_next) {
            const int j = open.back();
            for (const vec3& s : sites[size_t(j)]) {
                indent(depth[size_t(j)] + 1);
                out += "End Site\n";
                indent(depth[size_t(j)] + 1);
                out += "{\n";
                offset_line(depth[size_t(j)] + 2, s);
                indent(depth[size_t(j)] + 1);
                out += "}\n";
            }
            indent(depth[size_t(j)]);
            out += "}\n";
            open.pop_back();
        }
    };
    for (const int j : order) {
        const int p = sk.parents[size_t(j)];
        close_until(p);
        const int d = depth[size_t(j)];
        indent(d);
        out += p < 0 ? "ROOT " : "JOINT ";
        out += sk.names[size_t(j)];
        out += '\n';
        indent(d);
        out += "{\n";
        offset_line(d + 1, sk.offsets[size_t(j)]);
        indent(d + 1);
        out += "CHANNELS " + std::to_string(layout[size_t(j)].channels.size());
        for (const std::string& c : layout[size_t(j)].channels) out += ' ' + c;
        out += '\n';
        open.push_back(j);
    }
    close_until(-1);

    out += "MOTION\nFrames: " + std::to_string(clip.frames) + "\nFrame Time: ";
    append_number(out, clip.frame_dt);
    out += '\n';

    constexpr double deg = 180.0 / kPiD;
    std::vector<std::array<double, 3>> prev(size_t(nj), {0, 0, 0});
    std::vector<std::array<double, 3>> angles(size_t(nj), {0, 0, 0});
    for (int f = 0; f < clip.frames; ++f) {
        for (int j = 0; j < nj; ++j) {
            const JointPlan& plan = plans[size_t(j)];
            if (plan.order.empty()) continue;
            angles[size_t(j)] = euler_from_quat(clip.rot(f, j), plan.order.c_str(), &prev[size_t(j)]);
            prev[size_t(j)] = angles[size_t(j)];
        }
        bool first = true;
        for (const int j : order) {
            const JointPlan& plan = plans[size_t(j)];
            const vec3 p = clip.pos(f, j), o = sk.offsets[size_t(j)];
            for (size_t c = 0; c < plan.kinds.size(); ++c) {
                if (!first) out += ' ';
                first = false;
                const int k = plan.kinds[c];
                if (k < 3) {
                    const double v = !plan.first_of_axis[c] ? 0.0
                                     : k == 0           ? double(p.x) - double(o.x)
                                     : k == 1           ? double(p.y) - double(o.y)
                                                        : double(p.z) - double(o.z);
                    append_number(out, v);
                } else {
                    append_number(out, angles[size_t(j)][size_t(plan.rot_slot[c])] * deg);
                }
            }
        }
        out += '\n';
    }
    return out;
}

void write_file(const std::string& path, const std::string& text) {
    std::FILE* fp = std::fopen(path.c_str(), "wb");
    if (!fp) throw std::runtime_error(path + ": cannot open for writing: " + std::strerror(errno));
    const size_t n = std::fwrite(text.data(), 1, text.size(), fp);
    const int err = errno;
    const bool closed = std::fclose(fp) == 0;
    if (n != text.size() || !closed)
        throw std::runtime_error(path + ": write failed: " + std::strerror(n != text.size() ? err : errno));
}

}  // namespace

std::vector<BvhChannels> bvh_export_layout(const Clip& clip, const std::vector<BvhChannels>* layout) {
    check_clip(clip);
    const int nj = clip.joints();
    const auto moving = moving_axes(clip);
    std::vector<BvhChannels> out;
    out.reserve(size_t(nj));
    if (!layout) {
        for (int j = 0; j < nj; ++j) {
            BvhChannels c{clip.skeleton.names[size_t(j)], {}};
            const auto& mv = moving[size_t(j)];
            if (clip.skeleton.parents[size_t(j)] < 0 || mv[0] || mv[1] || mv[2])
                c.channels = {"Xposition", "Yposition", "Zposition"};
            for (const char* r : {"Zrotation", "Yrotation", "Xrotation"}) c.channels.emplace_back(r);
            out.push_back(std::move(c));
        }
        return out;
    }
    if (int(layout->size()) != nj)
        throw std::invalid_argument("save_bvh: the layout has " + std::to_string(layout->size()) +
                                    " joints, the skeleton " + std::to_string(nj));
    for (int j = 0; j < nj; ++j) {
        const BvhChannels& in = (*layout)[size_t(j)];
        if (in.joint != clip.skeleton.names[size_t(j)])
            throw std::invalid_argument("save_bvh: layout entry " + std::to_string(j) + " is for joint '" + in.joint +
                                        "' but the skeleton's joint " + std::to_string(j) + " is '" +
                                        clip.skeleton.names[size_t(j)] + "'");
        bool has_axis[3] = {false, false, false};
        for (const std::string& c : in.channels) {
            const int k = bvh_channel_kind(c);
            if (k < 0)
                throw std::invalid_argument("save_bvh: joint '" + in.joint + "' has unknown channel '" + c + "'");
            if (k < 3) has_axis[k] = true;
        }
        BvhChannels c{in.joint, {}};
        for (int a = 0; a < 3; ++a)
            if (moving[size_t(j)][size_t(a)] && !has_axis[a]) c.channels.emplace_back(kPositionNames[a]);
        c.channels.insert(c.channels.end(), in.channels.begin(), in.channels.end());
        if (rotation_order(c).empty() && rotates(clip, j))
            for (const char* r : {"Zrotation", "Yrotation", "Xrotation"}) c.channels.emplace_back(r);
        out.push_back(std::move(c));
    }
    return out;
}

std::string save_bvh_text(const Clip& clip, const std::vector<BvhChannels>* layout) {
    return render(clip, layout, nullptr, nullptr);
}

void save_bvh(const std::string& path, const Clip& clip, const std::vector<BvhChannels>* layout) {
    write_file(path, save_bvh_text(clip, layout));
}

std::string save_bvh_text(const BvhFile& file) {
    return render(file.clip, &file.layout, &file.end_sites, &file.end_site_parents);
}

void save_bvh(const std::string& path, const BvhFile& file) { write_file(path, save_bvh_text(file)); }

}  // namespace ks
