#include <kinesync/common/anim/tracks.h>

#include "common/src/anim/op_checks.h"
#include <kinesync/common/errors.h>

#include <algorithm>
#include <cmath>

#include "common/src/math/derivatives.h"

namespace ks {

namespace {

// Forward queries that pass more keys than this gallop instead of stepping one key at a time.
constexpr int kLinearSteps = 8;
// Longest key interval the key reduction makes, in frames: bounds its cost (quadratic in the
// interval length) on long near-linear stretches; costs at most one extra key per this many frames.
constexpr int kMaxReducedSpan = 512;

// Last k in [lo, n) with times[k] <= t, given times[lo] <= t (lo may be -1): exponential steps
// from lo, then a binary search of the bracket. Costs O(log(distance)), counted in `steps`.
int gallop(const std::vector<double>& times, double t, int lo, std::int64_t& steps) {
    const int n = int(times.size());
    int stride = 1, hi = lo + 1;
    while (hi < n && times[size_t(hi)] <= t) {
        ++steps;
        lo = hi;
        stride *= 2;
        hi = lo + stride;
    }
    if (hi < n) ++steps;  // the probe that stopped the gallop
    hi = std::min(hi, n);
    // Invariant: times[lo] <= t (or lo == -1), times[hi] > t (or hi == n).
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        ++steps;
        if (times[size_t(mid)] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// Where a track is at a time: keys k0 -> k1 at fraction x, inv_span = 1 / interval length
// (0 when holding a key: clamped ends, single keys, degenerate loop wrap).
struct TrackSegment {
    int k0 = 0, k1 = 0;
    float x = 0.0f;
    float inv_span = 0.0f;
};

TrackSegment hold(int k) { return {k, k, 0.0f, 0.0f}; }

TrackSegment between(int k0, int k1, double t0, double t1, double t) {
    if (!(t1 > t0)) return hold(k0);
    const double span = t1 - t0;
    return {k0, k1, float(std::clamp((t - t0) / span, 0.0, 1.0)), float(1.0 / span)};
}

TrackSegment locate(const std::vector<double>& times, TrackCursor& cursor, double time, double duration, TrackEnd end) {
    const int n = int(times.size());
    if (n <= 1) return hold(0);
    if (end == TrackEnd::Loop && duration > 0.0) {
        double t = std::fmod(time, duration);
        if (t < 0.0) t += duration;
        if (t >= duration) t = 0.0;  // fmod/addition rounding
        const int k = track_cursor_seek(cursor, times, t);
        // The wrap interval joins the last key to the first key one period later.
        if (k < 0) return between(n - 1, 0, times[size_t(n - 1)] - duration, times[0], t);
        if (k >= n - 1) return between(n - 1, 0, times[size_t(n - 1)], times[0] + duration, t);
        return between(k, k + 1, times[size_t(k)], times[size_t(k + 1)], t);
    }
    const int k = track_cursor_seek(cursor, times, time);
    if (k < 0) return hold(0);
    if (k >= n - 1) {
        // Exactly on the last key still belongs to the last interval (as op_sample_linear does).
        if (time == times[size_t(n - 1)]) return between(n - 2, n - 1, times[size_t(n - 2)], times[size_t(n - 1)], time);
        return hold(n - 1);
    }
    return between(k, k + 1, times[size_t(k)], times[size_t(k + 1)], time);
}

// The slerp's rotation vector from q0 to q1 (shortest way): shared by sampling and key reduction,
// so the reduction measures exactly what playback will produce.
vec3 interp_rot_u(quat q0, quat q1) { return quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(q1, q0))); }

float rotation_angle(quat a, quat b) { return length(interp_rot_u(a, b)); }

}  // namespace

TrackClipCursor make_track_cursor(const TrackClip& clip) {
    TrackClipCursor c;
    c.pos.assign(clip.channels.size(), TrackCursor{});
    c.rot.assign(clip.channels.size(), TrackCursor{});
    c.scl.assign(clip.channels.size(), TrackCursor{});
    return c;
}

int find_segment(const std::vector<double>& times, double t) {
    return int(std::upper_bound(times.begin(), times.end(), t) - times.begin()) - 1;
}

int track_cursor_seek(TrackCursor& cursor, const std::vector<double>& times, double t) {
    const int n = int(times.size());
    int k = cursor.key;
    // Before the cursor's key (time went backwards, a loop wrapped) or a cursor from another
    // track: restart before the first key and search forward from there.
    if (k < -1 || k >= n || (k >= 0 && !(times[size_t(k)] <= t))) k = -1;
    if (k + kLinearSteps < n && times[size_t(k + kLinearSteps)] <= t) {
        k = gallop(times, t, k + kLinearSteps, cursor.steps);  // far ahead: don't walk there
    } else {
        while (k + 1 < n && times[size_t(k + 1)] <= t) {
            ++k;
            ++cursor.steps;
        }
    }
    cursor.key = k;
    cursor.last_time = t;
    return k;
}

bool sample_position_track(const Vec3Track& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                           vec3& value, vec3& vel) {
    if (track.times.empty()) return false;
    if (track.values.size() != track.times.size()) throw Error(Errc::InvalidArgument, "sample_tracks: a track has " + std::to_string(track.times.size()) + " times and " + std::to_string(track.values.size()) + " values", "track.values");
    const TrackSegment s = locate(track.times, cursor, time, duration, end);
    const vec3 p0 = track.values[size_t(s.k0)], p1 = track.values[size_t(s.k1)];
    value = s.inv_span == 0.0f ? p0 : lerp(p0, p1, s.x);
    vel = (p1 - p0) * s.inv_span;
    return true;
}

bool sample_rotation_track(const QuatTrack& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                           quat& value, vec3& ang) {
    if (track.times.empty()) return false;
    if (track.values.size() != track.times.size()) throw Error(Errc::InvalidArgument, "sample_tracks: a track has " + std::to_string(track.times.size()) + " times and " + std::to_string(track.values.size()) + " values", "track.values");
    const TrackSegment s = locate(track.times, cursor, time, duration, end);
    const quat q0 = track.values[size_t(s.k0)];
    if (s.inv_span == 0.0f) {
        value = q0;
        ang = vec3{};
        return true;
    }
    const vec3 u = interp_rot_u(q0, track.values[size_t(s.k1)]);
    value = quat_mul(quat_from_scaled_angle_axis(u * s.x), q0);
    ang = u * s.inv_span;  // exact: d/dt Exp(x(t) u) = J_l(x u) u x' and J_l(x u) u == u
    return true;
}

bool sample_scale_track(const Vec3Track& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                        vec3& value, vec3& svl) {
    if (track.times.empty()) return false;
    if (track.values.size() != track.times.size()) throw Error(Errc::InvalidArgument, "sample_tracks: a track has " + std::to_string(track.times.size()) + " times and " + std::to_string(track.values.size()) + " values", "track.values");
    const TrackSegment s = locate(track.times, cursor, time, duration, end);
    const vec3 s0 = track.values[size_t(s.k0)];
    if (s.inv_span == 0.0f) {
        value = s0;
        svl = vec3{};
        return true;
    }
    const vec3 l0 = log(s0), l1 = log(track.values[size_t(s.k1)]);
    value = exp(lerp(l0, l1, s.x));
    svl = (l1 - l0) * s.inv_span;
    return true;
}

void sample_tracks(Pose& out, const TrackClip& clip, TrackClipCursor& cursor, double time, TrackEnd end) {
    const double d = clip.duration;
    for (size_t c = 0; c < clip.channels.size(); ++c) {
        const JointTracks& jt = clip.channels[c];
        detail::check_joint("sample_tracks", "channel joint", jt.joint, out.size());
        const size_t j = size_t(jt.joint);
        TrackCursor fp, fr, fs;  // stateless fallbacks for an undersized cursor
        TrackCursor& cp = c < cursor.pos.size() ? cursor.pos[c] : fp;
        TrackCursor& cr = c < cursor.rot.size() ? cursor.rot[c] : fr;
        TrackCursor& cs = c < cursor.scl.size() ? cursor.scl[c] : fs;
        sample_position_track(jt.pos, cp, time, d, end, out.pos[j], out.vel[j]);
        sample_rotation_track(jt.rot, cr, time, d, end, out.rot[j], out.ang[j]);
        sample_scale_track(jt.scl, cs, time, d, end, out.scl[j], out.svl[j]);
    }
}

const JointTracks* find_joint_tracks(const TrackClip& clip, int joint) {
    if (joint >= 0 && size_t(joint) < clip.channels.size() && clip.channels[size_t(joint)].joint == joint)
        return &clip.channels[size_t(joint)];
    for (const JointTracks& jt : clip.channels)
        if (jt.joint == joint) return &jt;
    return nullptr;
}

namespace {

// Frames kept by the greedy reduction: the interval from the last kept frame `a` grows while
// err(a, e, i) <= tol for every frame i strictly inside (a, e); when it fails, e - 1 is kept.
template <class Err>
std::vector<int> reduce_keys(int frames, float tol, Err err) {
    std::vector<int> keep{0};
    if (frames <= 1) return keep;
    if (tol > 0.0f) {
        int a = 0;
        for (int e = 2; e < frames; ++e) {
            bool ok = e - a <= kMaxReducedSpan;
            for (int i = a + 1; ok && i < e; ++i) ok = err(a, e, i) <= tol;
            if (!ok) {
                keep.push_back(e - 1);
                a = e - 1;
            }
        }
    } else {
        for (int f = 1; f < frames - 1; ++f) keep.push_back(f);
    }
    keep.push_back(frames - 1);
    return keep;
}

// err(a, e, i) with a == e measures holding frame a (the constant test).
template <class Track, class Value, class Err>
void build_track(Track& track, const std::vector<double>& times, const std::vector<Value>& values, float tol, Err err) {
    const int frames = int(values.size());
    track.times.clear();
    track.values.clear();
    if (frames == 0) return;
    bool constant = true;
    for (int f = 1; constant && f < frames; ++f) constant = err(0, 0, f) <= tol;
    if (constant) {
        track.times.push_back(times[0]);
        track.values.push_back(values[0]);
        return;
    }
    for (int f : reduce_keys(frames, tol, err)) {
        track.times.push_back(times[size_t(f)]);
        track.values.push_back(values[size_t(f)]);
    }
}

}  // namespace

TrackClip tracks_from_clip(const Clip& clip, float tolerance) {
    TrackClip out;
    out.name = clip.name;
    out.skeleton = clip.skeleton;
    const int frames = clip.frames;
    // Key times in double exactly as op_sample_linear computes frame positions (time / frame_dt).
    const double dt = double(clip.frame_dt);
    out.duration = frames > 1 ? double(frames - 1) * dt : 0.0;
    std::vector<double> times(size_t(std::max(frames, 0)));
    for (int f = 0; f < frames; ++f) times[size_t(f)] = double(f) * dt;
    // Fraction of frame i between kept frames a and e, computed as sampling will.
    auto frac = [&](int a, int e, int i) {
        return float((times[size_t(i)] - times[size_t(a)]) / (times[size_t(e)] - times[size_t(a)]));
    };

    std::vector<vec3> pos(size_t(std::max(frames, 0))), logscl(pos.size()), scl(pos.size());
    std::vector<quat> rot(pos.size());
    out.channels.resize(size_t(clip.joints()));
    for (int j = 0; j < clip.joints(); ++j) {
        JointTracks& jt = out.channels[size_t(j)];
        jt.joint = j;
        for (int f = 0; f < frames; ++f) {
            pos[size_t(f)] = clip.pos(f, j);
            rot[size_t(f)] = clip.rot(f, j);
            scl[size_t(f)] = clip.scl(f, j);
            logscl[size_t(f)] = log(scl[size_t(f)]);
        }
        // err(a, e, i): error at frame i of interpolating kept frames a and e (a == e: holding a).
        auto pos_err = [&](int a, int e, int i) {
            const vec3 p = a == e ? pos[size_t(a)] : lerp(pos[size_t(a)], pos[size_t(e)], frac(a, e, i));
            return length(p - pos[size_t(i)]);
        };
        auto rot_err = [&](int a, int e, int i) {
            const quat qa = rot[size_t(a)], qi = rot[size_t(i)];
            if (a == e && qa.w == qi.w && qa.x == qi.x && qa.y == qi.y && qa.z == qi.z) return 0.0f;
            const quat q = a == e ? qa
                                  : quat_mul(quat_from_scaled_angle_axis(interp_rot_u(qa, rot[size_t(e)]) * frac(a, e, i)), qa);
            return rotation_angle(q, qi);
        };
        auto scl_err = [&](int a, int e, int i) {
            const vec3 l = a == e ? logscl[size_t(a)] : lerp(logscl[size_t(a)], logscl[size_t(e)], frac(a, e, i));
            return length(l - logscl[size_t(i)]);
        };
        build_track(jt.pos, times, pos, tolerance, pos_err);
        build_track(jt.rot, times, rot, tolerance, rot_err);
        build_track(jt.scl, times, scl, tolerance, scl_err);
    }
    return out;
}

namespace {

void blend_pos(Pose& out, const Pose& a, const Pose& b, size_t j, float w, float wv) {
    out.pos[j] = lerp(a.pos[j], b.pos[j], w);
    out.vel[j] = lerp(a.vel[j], b.vel[j], w) + (b.pos[j] - a.pos[j]) * wv;
}

void blend_rot(Pose& out, const Pose& a, const Pose& b, size_t j, float w, float wv) {
    const quat path = quat_abs(quat_mul_inv(b.rot[j], a.rot[j]));
    out.rot[j] = quat_slerp_path_kinematic(a.rot[j], a.ang[j], b.ang[j], path, w, wv, out.ang[j]);
}

void blend_scl(Pose& out, const Pose& a, const Pose& b, size_t j, float w, float wv) {
    const vec3 sa = a.scl[j], sb = b.scl[j];
    out.svl[j] = lerp(a.svl[j], b.svl[j], w);
    if (sa.x == sb.x && sa.y == sb.y && sa.z == sb.z) {
        out.scl[j] = sa;
        return;
    }
    const vec3 la = log(sa), lb = log(sb);
    out.scl[j] = exp(lerp(la, lb, w));
    out.svl[j] += (lb - la) * wv;
}

}  // namespace

void sample_transition(Pose& out, Pose& scratch_a, Pose& scratch_b, const TrackClip& from, TrackClipCursor& cf,
                       double t_from, const TrackClip& to, TrackClipCursor& ct, double t_to, float weight,
                       float weight_vel, TrackEnd end) {
    detail::check_poses(__func__, {{"out", &out}, {"scratch_a", &scratch_a}, {"scratch_b", &scratch_b}});
    // Only the channels a clip animates are written into its scratch pose, and only those are read.
    sample_tracks(scratch_a, from, cf, t_from, end);
    sample_tracks(scratch_b, to, ct, t_to, end);
    const int n = out.size();
    for (const JointTracks& ja : from.channels) {
        if (ja.joint < 0 || ja.joint >= n) continue;
        const size_t j = size_t(ja.joint);
        const JointTracks* jb = find_joint_tracks(to, ja.joint);
        if (!ja.pos.times.empty()) {
            if (jb && !jb->pos.times.empty())
                blend_pos(out, scratch_a, scratch_b, j, weight, weight_vel);
            else
                out.pos[j] = scratch_a.pos[j], out.vel[j] = scratch_a.vel[j];
        }
        if (!ja.rot.times.empty()) {
            if (jb && !jb->rot.times.empty())
                blend_rot(out, scratch_a, scratch_b, j, weight, weight_vel);
            else
                out.rot[j] = scratch_a.rot[j], out.ang[j] = scratch_a.ang[j];
        }
        if (!ja.scl.times.empty()) {
            if (jb && !jb->scl.times.empty())
                blend_scl(out, scratch_a, scratch_b, j, weight, weight_vel);
            else
                out.scl[j] = scratch_a.scl[j], out.svl[j] = scratch_a.svl[j];
        }
    }
    // Channels only `to` animates.
    for (const JointTracks& jb : to.channels) {
        if (jb.joint < 0 || jb.joint >= n) continue;
        const size_t j = size_t(jb.joint);
        const JointTracks* ja = find_joint_tracks(from, jb.joint);
        if (!jb.pos.times.empty() && !(ja && !ja->pos.times.empty()))
            out.pos[j] = scratch_b.pos[j], out.vel[j] = scratch_b.vel[j];
        if (!jb.rot.times.empty() && !(ja && !ja->rot.times.empty()))
            out.rot[j] = scratch_b.rot[j], out.ang[j] = scratch_b.ang[j];
        if (!jb.scl.times.empty() && !(ja && !ja->scl.times.empty()))
            out.scl[j] = scratch_b.scl[j], out.svl[j] = scratch_b.svl[j];
    }
}

}  // namespace ks
