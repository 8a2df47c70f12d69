#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/common/anim/tracks.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double urand(Rng& rng, double lo, double hi) { return lo + (hi - lo) * double(rng.uniform(0.0f, 1.0f)); }

float angle_between(quat a, quat b) { return length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(a, b)))); }

double wrap_time(double t, double d) {
    double w = std::fmod(t, d);
    if (w < 0) w += d;
    return w;
}

// The reference the cursor must agree with: a brute-force linear search.
int brute_segment(const std::vector<double>& times, double t) {
    int k = -1;
    for (size_t i = 0; i < times.size(); ++i)
        if (times[i] <= t) k = int(i);
    return k;
}

// Strictly increasing, non-uniform key times: gaps log-uniform in [gap_lo, gap_hi].
std::vector<double> random_times(Rng& rng, int n, double first, double gap_lo, double gap_hi) {
    std::vector<double> t;
    double x = first;
    for (int i = 0; i < n; ++i) {
        t.push_back(x);
        x += std::exp(urand(rng, std::log(gap_lo), std::log(gap_hi)));
    }
    return t;
}

// Key times inside (0, duration): the first key after 0 and the last before duration, so a looped
// clip has a real wrap interval (last key -> first key one period later).
std::vector<double> random_times_within(Rng& rng, double duration, double gap_lo, double gap_hi) {
    std::vector<double> t;
    for (double x = urand(rng, 0.02, 0.1); x < duration - 0.02; x += urand(rng, gap_lo, gap_hi)) t.push_back(x);
    return t;
}

// A track clip with random non-uniform keys per channel (each channel its own times), random-walk
// positions, random rotations around a per-joint base, non-uniform non-unit scales.
// masks[j] lists the animated channels of joint j ("prs"); an empty mask leaves the joint out.
TrackClip random_track_clip(const std::vector<std::string>& masks, double duration, unsigned seed) {
    Rng rng(seed);
    TrackClip clip;
    clip.name = "random";
    clip.skeleton = random_skeleton(int(masks.size()), rng);
    clip.duration = duration;
    for (int j = 0; j < int(masks.size()); ++j) {
        const std::string& m = masks[size_t(j)];
        if (m.empty()) continue;
        JointTracks jt;
        jt.joint = j;
        if (m.find('p') != std::string::npos) {
            jt.pos.times = random_times_within(rng, duration, 0.04, 0.3);
            vec3 p = rng.vec(-1, 1);
            for (size_t k = 0; k < jt.pos.times.size(); ++k) jt.pos.values.push_back(p = p + rng.vec(-0.4f, 0.4f));
        }
        if (m.find('r') != std::string::npos) {
            jt.rot.times = random_times_within(rng, duration, 0.04, 0.3);
            // Keys within 1.35 rad of a per-joint base rotation that every random clip shares:
            // consecutive keys may be up to 2.7 rad apart, and two clips' rotations of a joint
            // always stay below 2.8 rad apart, clear of the side switch of slerp at pi.
            Rng base_rng(9000u + unsigned(j));
            const quat base = base_rng.rotation();
            for (size_t k = 0; k < jt.rot.times.size(); ++k)
                jt.rot.values.push_back(quat_mul(quat_from_scaled_angle_axis(rng.vec(-0.78f, 0.78f)), base));
        }
        if (m.find('s') != std::string::npos) {
            jt.scl.times = random_times_within(rng, duration, 0.04, 0.3);
            for (size_t k = 0; k < jt.scl.times.size(); ++k) jt.scl.values.push_back(exp(rng.vec(-0.6f, 0.6f)));
        }
        clip.channels.push_back(jt);
    }
    return clip;
}

// Distance from `time` to the nearest key of any channel (circular when looping): velocities jump
// at keys, so a finite difference must stay clear of them.
double key_clearance(const TrackClip& clip, double time, TrackEnd end) {
    const bool loop = end == TrackEnd::Loop;
    const double t = loop ? wrap_time(time, clip.duration) : time;
    double best = kInf;
    auto visit = [&](const std::vector<double>& times) {
        for (double k : times) {
            double d = std::fabs(t - k);
            if (loop) d = std::min(d, clip.duration - d);
            best = std::min(best, d);
        }
    };
    for (const JointTracks& jt : clip.channels) {
        visit(jt.pos.times);
        visit(jt.rot.times);
        visit(jt.scl.times);
    }
    return best;
}

// Independent reference for a position track: the keys' periodic extension (looping) or the keys
// held at both ends (clamped), searched linearly, interpolated directly.
vec3 reference_position(const Vec3Track& tr, double time, double duration, TrackEnd end, vec3& vel) {
    const size_t n = tr.times.size();
    std::vector<double> ts;
    std::vector<vec3> vs;
    double t = time;
    if (end == TrackEnd::Loop) {
        t = wrap_time(time, duration);
        ts.push_back(tr.times[n - 1] - duration);
        vs.push_back(tr.values[n - 1]);
    }
    ts.insert(ts.end(), tr.times.begin(), tr.times.end());
    vs.insert(vs.end(), tr.values.begin(), tr.values.end());
    if (end == TrackEnd::Loop) {
        ts.push_back(tr.times[0] + duration);
        vs.push_back(tr.values[0]);
    }
    vel = vec3{};
    if (t < ts.front()) return vs.front();
    if (t > ts.back()) return vs.back();
    for (size_t i = 0; i + 1 < ts.size(); ++i) {
        if (ts[i + 1] > ts[i] && t >= ts[i] && t <= ts[i + 1]) {
            const double x = (t - ts[i]) / (ts[i + 1] - ts[i]);
            vel = (vs[i + 1] - vs[i]) / float(ts[i + 1] - ts[i]);
            return lerp(vs[i], vs[i + 1], float(x));
        }
    }
    return vs.back();
}

const std::vector<std::string> kMasks = {"prs", "prs", "rs", "ps", "pr", "", "prs", "s"};

}  // namespace

// ---------------------------------------------------------------- cursor

TEST(TrackCursor, MatchesBruteForceUnderForwardBackwardAndRandomAccess) {
    Rng rng(101);
    for (int trial = 0; trial < 24; ++trial) {
        const int n = trial < 3 ? trial + 1 : 2 + int(rng.gen() % 300u);  // 1, 2, 3 keys, then many
        const std::vector<double> times = random_times(rng, n, urand(rng, -0.5, 0.5), 1e-3, 0.3);
        const double lo = times.front() - 0.2, hi = times.back() + 0.2;
        TrackCursor c;
        int checked = 0;
        auto check = [&](double t) {
            const int want = brute_segment(times, t);
            ASSERT_EQ(track_cursor_seek(c, times, t), want) << "trial " << trial << " t " << t;
            ASSERT_EQ(c.key, want);
            ASSERT_EQ(find_segment(times, t), want);
            ++checked;
        };
        // Forward playback in small, uneven steps, from before the first key to past the last.
        for (double t = lo; t < hi; t += urand(rng, 0.0, 0.02)) check(t);
        // Exactly on keys, forwards and backwards (a key belongs to the interval it starts).
        for (double k : times) check(k);
        for (auto it = times.rbegin(); it != times.rend(); ++it) check(*it);
        // Small backward steps, then backward jumps of random length.
        for (double t = hi; t > lo; t -= urand(rng, 0.0, 0.02)) check(t);
        for (int i = 0; i < 50; ++i) check(hi - urand(rng, 0.0, hi - lo));
        // Random access, including far forward jumps (the gallop path).
        for (int i = 0; i < 300; ++i) check(urand(rng, lo, hi));
        // A cursor left on another, longer track must not confuse it.
        c.key = n + 7;
        check(urand(rng, lo, hi));
        EXPECT_GT(checked, 400);
    }
}

TEST(TrackCursor, LoopingPlaybackMatchesBruteForce) {
    Rng rng(102);
    for (int trial = 0; trial < 6; ++trial) {
        const double duration = urand(rng, 1.0, 3.0);
        Vec3Track tr;
        if (trial % 2 == 0) {
            tr.times = random_times_within(rng, duration, 0.01, 0.2);  // real wrap interval
        } else {
            // Seamless loop: keys span [0, duration], the last equal to the first.
            tr.times = random_times_within(rng, duration, 0.01, 0.2);
            tr.times.front() = 0.0;
            tr.times.push_back(duration);
        }
        for (size_t k = 0; k < tr.times.size(); ++k) tr.values.push_back(rng.vec(-2, 2));
        if (trial % 2 == 1) tr.values.back() = tr.values.front();

        TrackCursor persistent;
        auto check = [&](double t) {
            vec3 v, vel, ref_vel;
            ASSERT_TRUE(sample_position_track(tr, persistent, t, duration, TrackEnd::Loop, v, vel));
            const vec3 ref = reference_position(tr, t, duration, TrackEnd::Loop, ref_vel);
            ASSERT_LT(length(v - ref), 1e-5f) << "trial " << trial << " t " << t;
            ASSERT_LT(length(vel - ref_vel), 1e-4f * (1 + length(ref_vel))) << "trial " << trial << " t " << t;
            // A fresh cursor (pure search) gives bit-identical results.
            TrackCursor fresh;
            vec3 v2, vel2;
            sample_position_track(tr, fresh, t, duration, TrackEnd::Loop, v2, vel2);
            ASSERT_EQ(v.x, v2.x);
            ASSERT_EQ(v.y, v2.y);
            ASSERT_EQ(vel.z, vel2.z);
        };
        // Forward at 60 Hz over several periods (wrapping each time), then random access, then
        // backwards through the seam.
        for (double t = 0; t < 5 * duration; t += 1.0 / 60.0) check(t);
        for (int i = 0; i < 200; ++i) check(urand(rng, -3 * duration, 6 * duration));
        for (double t = 2 * duration + 0.1; t > duration - 0.1; t -= 0.0037) check(t);
    }
}

TEST(TrackCursor, ForwardSweepIsAmortisedConstant) {
    Rng rng(103);
    struct Case {
        int keys, frames;
    };
    // Fewer keys than frames (the usual case) and many keys per frame (gallop path).
    for (const Case cs : {Case{1000, 5000}, Case{5000, 500}, Case{300, 300}}) {
        const std::vector<double> times = random_times(rng, cs.keys, 0.0, 0.2, 1.8);
        const double end = times.back();
        TrackCursor c;
        for (int f = 0; f < cs.frames; ++f) {
            const double t = end * double(f) / double(cs.frames - 1);
            ASSERT_EQ(track_cursor_seek(c, times, t), brute_segment(times, t));
        }
        EXPECT_LE(c.steps, cs.keys + cs.frames) << cs.keys << " keys, " << cs.frames << " frames";
        EXPECT_GE(c.steps, 1);  // the counter counts

        // Looping over three periods: each wrap restarts from the first key, still linear.
        Vec3Track tr;
        tr.times = times;
        tr.values.assign(times.size(), vec3{});
        TrackCursor lc;
        const double period = end + 0.5;
        const int frames = 3 * cs.frames;
        for (int f = 0; f < frames; ++f) {
            vec3 v, vel;
            sample_position_track(tr, lc, 3.0 * period * double(f) / double(frames), period, TrackEnd::Loop, v, vel);
        }
        EXPECT_LE(lc.steps, 3 * (cs.keys + 1) + frames);
    }
}

// ---------------------------------------------------------------- sampling

TEST(TrackSample, VelocitiesMatchFiniteDifferenceOnNonUniformKeys) {
    const TrackClip clip = random_track_clip(kMasks, 2.5, 201);
    const int n = int(kMasks.size());
    const float h = 1e-3f;
    Rng rng(202);
    for (TrackEnd end : {TrackEnd::Clamp, TrackEnd::Loop}) {
        const char* label = end == TrackEnd::Loop ? "tracks loop" : "tracks clamp";
        TrackClipCursor cursor = make_track_cursor(clip);
        int checked = 0;
        for (int tries = 0; checked < 30 && tries < 20000; ++tries) {
            // Loop: times over several periods and negative; clamp: inside the key range.
            const double t0 = end == TrackEnd::Loop ? urand(rng, -2 * clip.duration, 4 * clip.duration)
                                                    : urand(rng, 0.1, clip.duration - 0.1);
            if (key_clearance(clip, t0, end) < 3.0 * h) continue;
            ++checked;
            expect_velocities_match_fd(label, [&](float t, Pose& out) { sample_tracks(out, clip, cursor, t0 + t, end); }, n,
                                       h);
        }
        EXPECT_EQ(checked, 30);
    }
    // Straddling the loop seam (t = duration): the wrap interval is one smooth segment.
    TrackClipCursor cursor = make_track_cursor(clip);
    const double seam = 3 * clip.duration + 0.5 * h;
    ASSERT_GT(key_clearance(clip, seam, TrackEnd::Loop), 3.0 * h);
    expect_velocities_match_fd(
        "tracks loop seam", [&](float t, Pose& out) { sample_tracks(out, clip, cursor, seam + t, TrackEnd::Loop); }, n, h);

    // Non-trivial: the sampled velocities are not all zero.
    Pose p(n);
    sample_tracks(p, clip, cursor, 1.234, TrackEnd::Clamp);
    float speed = 0;
    for (int j = 0; j < n; ++j) speed += length(p.vel[size_t(j)]) + length(p.ang[size_t(j)]) + length(p.svl[size_t(j)]);
    EXPECT_GT(speed, 1.0f);
}

TEST(TrackSample, ClampedEndsHoldTheEndKeysWithZeroVelocity) {
    const TrackClip clip = random_track_clip(kMasks, 2.0, 203);
    const int n = int(kMasks.size());
    TrackClipCursor cursor = make_track_cursor(clip);
    Pose p(n);
    for (double t : {-5.0, -0.001, 2.0 + 1e-3, 7.0, 0.0}) {
        sample_tracks(p, clip, cursor, t, TrackEnd::Clamp);
        for (const JointTracks& jt : clip.channels) {
            const size_t j = size_t(jt.joint);
            // t = 0 is before every first key (keys start at >= 0.02).
            const bool before = t <= 0.0;
            if (!jt.pos.times.empty()) {
                const vec3 want = before ? jt.pos.values.front() : jt.pos.values.back();
                EXPECT_EQ(length(p.pos[j] - want), 0.0f);
                EXPECT_EQ(length(p.vel[j]), 0.0f);
            }
            if (!jt.rot.times.empty()) {
                const quat want = before ? jt.rot.values.front() : jt.rot.values.back();
                EXPECT_EQ(quat_dot(p.rot[j], want), quat_dot(want, want));
                EXPECT_EQ(length(p.ang[j]), 0.0f);
            }
            if (!jt.scl.times.empty()) {
                const vec3 want = before ? jt.scl.values.front() : jt.scl.values.back();
                EXPECT_EQ(length(p.scl[j] - want), 0.0f);
                EXPECT_EQ(length(p.svl[j]), 0.0f);
            }
        }
    }
    // Just inside the key range a channel moves: its velocity is that of the first interval.
    const Vec3Track& tr = clip.channels[0].pos;
    TrackCursor c;
    vec3 v, vel;
    sample_position_track(tr, c, tr.times[0] + 1e-6, clip.duration, TrackEnd::Clamp, v, vel);
    const vec3 want = (tr.values[1] - tr.values[0]) / float(tr.times[1] - tr.times[0]);
    EXPECT_LT(length(vel - want), 1e-4f * length(want));
    EXPECT_GT(length(vel), 0.0f);
    // Exactly on the last key the last interval's velocity applies (as op_sample_linear does).
    const size_t last = tr.times.size() - 1;
    sample_position_track(tr, c, tr.times[last], clip.duration, TrackEnd::Clamp, v, vel);
    EXPECT_EQ(length(v - tr.values[last]), 0.0f);
    EXPECT_GT(length(vel), 0.0f);
}

TEST(TrackSample, LoopWrapsContinuouslyInValue) {
    const TrackClip clip = random_track_clip(kMasks, 1.7, 204);
    const int n = int(kMasks.size());
    const double d = clip.duration;
    TrackClipCursor cursor = make_track_cursor(clip);
    Pose a(n), b(n);
    // Periodic: t and t + k * duration (k negative too) give the same pose.
    Rng rng(205);
    for (int i = 0; i < 50; ++i) {
        const double t = urand(rng, 0.0, d);
        sample_tracks(a, clip, cursor, t, TrackEnd::Loop);
        sample_tracks(b, clip, cursor, t + double(int(rng.gen() % 9u) - 4) * d, TrackEnd::Loop);
        for (size_t j = 0; j < size_t(n); ++j) {
            EXPECT_LT(length(a.pos[j] - b.pos[j]), 1e-5f);
            EXPECT_LT(angle_between(a.rot[j], b.rot[j]), 1e-5f);
            EXPECT_LT(length(log(a.scl[j]) - log(b.scl[j])), 1e-5f);
        }
    }
    // A dense sweep over two and a half periods: no step moves a channel further than its
    // velocity allows, seams and first/last keys included (a clamped end would jump here).
    const double dt = 1e-3;
    Pose prev(n), cur(n);
    sample_tracks(prev, clip, cursor, 0.0, TrackEnd::Loop);
    double worst = 0;
    for (double t = dt; t < 2.5 * d; t += dt) {
        sample_tracks(cur, clip, cursor, t, TrackEnd::Loop);
        for (size_t j = 0; j < size_t(n); ++j) {
            const double lim_p = std::max(length(prev.vel[j]), length(cur.vel[j])) * dt * 1.001 + 1e-5;
            const double lim_r = std::max(length(prev.ang[j]), length(cur.ang[j])) * dt * 1.001 + 1e-5;
            const double lim_s = std::max(length(prev.svl[j]), length(cur.svl[j])) * dt * 1.001 + 1e-5;
            const double ep = length(cur.pos[j] - prev.pos[j]), er = angle_between(cur.rot[j], prev.rot[j]),
                         es = length(log(cur.scl[j]) - log(prev.scl[j]));
            worst = std::max({worst, ep / lim_p, er / lim_r, es / lim_s});
            ASSERT_LE(ep, lim_p) << "joint " << j << " t " << t;
            ASSERT_LE(er, lim_r) << "joint " << j << " t " << t;
            ASSERT_LE(es, lim_s) << "joint " << j << " t " << t;
        }
        std::swap(prev, cur);
    }
    EXPECT_GT(worst, 0.5);  // the bound is tight enough to mean something

    // At the seam itself the value is the wrap interval's interpolation of last -> first key.
    const Vec3Track& tr = clip.channels[0].pos;
    const double t_last = tr.times.back(), t_first = tr.times.front() + d;
    const float x = float((d - t_last) / (t_first - t_last));
    sample_tracks(a, clip, cursor, d, TrackEnd::Loop);
    EXPECT_LT(length(a.pos[0] - lerp(tr.values.back(), tr.values.front(), x)), 1e-5f);
}

TEST(TrackSample, AbsentChannelsLeaveTheOutputUntouched) {
    const TrackClip clip = random_track_clip(kMasks, 2.0, 206);
    const int n = int(kMasks.size());
    Rng rng(207);
    const Pose rest = random_pose(n, rng);
    Pose p = rest;
    TrackClipCursor cursor = make_track_cursor(clip);
    sample_tracks(p, clip, cursor, 0.9, TrackEnd::Clamp);
    auto same = [](vec3 u, vec3 v) { return u.x == v.x && u.y == v.y && u.z == v.z; };
    int untouched = 0, written = 0;
    for (int j = 0; j < n; ++j) {
        const size_t i = size_t(j);
        const JointTracks* jt = find_joint_tracks(clip, j);
        const bool hp = jt && !jt->pos.times.empty(), hr = jt && !jt->rot.times.empty(), hs = jt && !jt->scl.times.empty();
        EXPECT_EQ(hp, kMasks[i].find('p') != std::string::npos);
        const bool pos_kept = same(p.pos[i], rest.pos[i]) && same(p.vel[i], rest.vel[i]);
        const bool rot_kept = quat_dot(p.rot[i], rest.rot[i]) == quat_dot(rest.rot[i], rest.rot[i]) && same(p.ang[i], rest.ang[i]);
        const bool scl_kept = same(p.scl[i], rest.scl[i]) && same(p.svl[i], rest.svl[i]);
        EXPECT_EQ(pos_kept, !hp) << "joint " << j;
        EXPECT_EQ(rot_kept, !hr) << "joint " << j;
        EXPECT_EQ(scl_kept, !hs) << "joint " << j;
        untouched += !hp + !hr + !hs;
        written += hp + hr + hs;
    }
    EXPECT_GE(untouched, 8);  // joints 5 (absent) and 7 (scale only), and the partial joints
    EXPECT_GE(written, 10);
    // Channels stored out of joint order are still found.
    TrackClip shuffled = clip;
    std::reverse(shuffled.channels.begin(), shuffled.channels.end());
    for (int j = 0; j < n; ++j) {
        const JointTracks* jt = find_joint_tracks(shuffled, j);
        EXPECT_EQ(jt != nullptr, !kMasks[size_t(j)].empty());
        if (jt) {
            EXPECT_EQ(jt->joint, j);
        }
    }
    EXPECT_EQ(find_joint_tracks(clip, -1), nullptr);
    EXPECT_EQ(find_joint_tracks(clip, n), nullptr);
}

// ---------------------------------------------------------------- conversion from clips

TEST(TrackFromClip, ToleranceZeroReproducesLinearSampling) {
    Clip clip = synthetic_clip(6, 50, 30.0f, 301);
    for (int f = 0; f < clip.frames; ++f) {
        clip.pos(f, 1) = clip.pos(0, 1);  // constant channels keep a single key
        clip.scl(f, 2) = clip.scl(0, 2);
        clip.rot(f, 3) = clip.rot(0, 3);
    }
    // A loop (last frame == first): op_sample_linear's Wrap::Loop reads frame 0 for the last one.
    for (int j = 0; j < clip.joints(); ++j) {
        clip.pos(clip.frames - 1, j) = clip.pos(0, j);
        clip.rot(clip.frames - 1, j) = clip.rot(0, j);
        clip.scl(clip.frames - 1, j) = clip.scl(0, j);
    }
    const TrackClip tc = tracks_from_clip(clip);
    ASSERT_EQ(tc.channels.size(), size_t(clip.joints()));
    EXPECT_DOUBLE_EQ(tc.duration, double(clip.frames - 1) * double(clip.frame_dt));
    for (int j = 0; j < clip.joints(); ++j) {
        const JointTracks& jt = tc.channels[size_t(j)];
        EXPECT_EQ(jt.joint, j);
        EXPECT_EQ(jt.pos.times.size(), j == 1 ? 1u : size_t(clip.frames));
        EXPECT_EQ(jt.scl.times.size(), j == 2 ? 1u : size_t(clip.frames));
        EXPECT_EQ(jt.rot.times.size(), j == 3 ? 1u : size_t(clip.frames));
    }
    const int n = clip.joints();
    Pose a(n), b(n);
    Rng rng(302);
    for (auto [wrap, end] : {std::pair{Wrap::Clamp, TrackEnd::Clamp}, std::pair{Wrap::Loop, TrackEnd::Loop}}) {
        TrackClipCursor cursor = make_track_cursor(tc);
        std::vector<double> ts;
        for (int i = 0; i < 300; ++i) ts.push_back(urand(rng, -0.3, tc.duration + 0.3));
        for (int i = 0; i < 300; ++i) ts.push_back(double(i) * tc.duration / 299.0);  // forward sweep
        for (double t : ts) {
            op_sample_linear(a, clip, t, wrap);
            sample_tracks(b, tc, cursor, t, end);
            // Right on a frame the two may pick neighbouring intervals (velocity jumps there).
            const double ft = (wrap == Wrap::Loop ? wrap_time(t, tc.duration) : t) / double(clip.frame_dt);
            const bool on_frame = std::fabs(ft - std::round(ft)) < 1e-6;
            for (size_t j = 0; j < size_t(n); ++j) {
                ASSERT_LT(length(a.pos[j] - b.pos[j]), 1e-5f) << "t " << t;
                ASSERT_LT(angle_between(a.rot[j], b.rot[j]), 1e-5f) << "t " << t;
                ASSERT_LT(length(a.scl[j] - b.scl[j]), 1e-5f) << "t " << t;
                if (on_frame) continue;
                ASSERT_LT(length(a.vel[j] - b.vel[j]), 1e-4f * (1 + length(a.vel[j]))) << "t " << t;
                ASSERT_LT(length(a.ang[j] - b.ang[j]), 1e-4f * (1 + length(a.ang[j]))) << "t " << t;
                ASSERT_LT(length(a.svl[j] - b.svl[j]), 1e-4f * (1 + length(a.svl[j]))) << "t " << t;
            }
        }
    }
}

namespace {

struct ReductionStats {
    size_t keys = 0, frames = 0;
    double worst_pos = 0, worst_rot = 0, worst_scl = 0;
    bool non_uniform = false;
};

// Samples the reduced tracks at every original frame and measures the error per channel kind.
ReductionStats check_reduction(const Clip& clip, const TrackClip& tc) {
    ReductionStats s;
    const int n = clip.joints();
    for (const JointTracks& jt : tc.channels) {
        s.keys += jt.pos.times.size() + jt.rot.times.size() + jt.scl.times.size();
        s.frames += 3 * size_t(clip.frames);
        for (const auto* times : {&jt.pos.times, &jt.rot.times, &jt.scl.times})
            for (size_t k = 2; k < times->size(); ++k)
                if (std::fabs(((*times)[k] - (*times)[k - 1]) - ((*times)[1] - (*times)[0])) > 1e-6) s.non_uniform = true;
    }
    TrackClipCursor cursor = make_track_cursor(tc);
    Pose p(n);
    for (int f = 0; f < clip.frames; ++f) {
        sample_tracks(p, tc, cursor, double(f) * double(clip.frame_dt), TrackEnd::Clamp);
        for (int j = 0; j < n; ++j) {
            const size_t i = size_t(j);
            s.worst_pos = std::max(s.worst_pos, double(length(p.pos[i] - clip.pos(f, j))));
            s.worst_rot = std::max(s.worst_rot, double(angle_between(p.rot[i], clip.rot(f, j))));
            s.worst_scl = std::max(s.worst_scl, double(length(log(p.scl[i]) - log(clip.scl(f, j)))));
        }
    }
    return s;
}

}  // namespace

TEST(TrackFromClip, ReductionStaysWithinToleranceAtEveryFrame) {
    const Clip clip = synthetic_clip(8, 240, 60.0f, 303);
    const ReductionStats full = check_reduction(clip, tracks_from_clip(clip, 0.0f));
    EXPECT_EQ(full.keys, full.frames);
    EXPECT_LT(full.worst_pos, 1e-6);
    size_t previous_keys = full.keys;
    for (float tol : {0.002f, 0.01f, 0.05f}) {
        const TrackClip tc = tracks_from_clip(clip, tol);
        const ReductionStats s = check_reduction(clip, tc);
        const double slack = tol * 1e-3 + 2e-6;  // float rounding of the re-evaluation
        EXPECT_LE(s.worst_pos, tol + slack) << "tol " << tol;
        EXPECT_LE(s.worst_rot, tol + slack) << "tol " << tol;
        EXPECT_LE(s.worst_scl, tol + slack) << "tol " << tol;
        // Fewer keys the larger the tolerance (measured: 48 %, 22 %, 9 % of the frames).
        EXPECT_LT(s.keys, previous_keys) << "tol " << tol;
        EXPECT_LT(double(s.keys), (tol < 0.005f ? 0.7 : tol < 0.03f ? 0.35 : 0.15) * double(s.frames)) << "tol " << tol;
        previous_keys = s.keys;
        EXPECT_TRUE(s.non_uniform);
        // The reduction uses most of its budget (it is not trivially keeping every frame).
        EXPECT_GT(std::max({s.worst_pos, s.worst_rot, s.worst_scl}), 0.3 * tol);
        // Reduced tracks are still sampled with exact velocities.
        const int n = clip.joints();
        TrackClipCursor cursor = make_track_cursor(tc);
        Rng rng(304);
        for (int i = 0; i < 10; ++i) {
            // Kept keys sit on frames: mid-frame times are clear of every key.
            const int f = 1 + int(rng.gen() % unsigned(clip.frames - 3));
            const double t0 = (double(f) + urand(rng, 0.3, 0.7)) * double(clip.frame_dt);
            ASSERT_GT(key_clearance(tc, t0, TrackEnd::Clamp), 3e-3);
            expect_velocities_match_fd(
                "tracks reduced", [&](float t, Pose& out) { sample_tracks(out, tc, cursor, t0 + t, TrackEnd::Clamp); }, n);
        }
    }
}

TEST(TrackFromClip, SharedWalkClipKeepsFewerKeysWithinTolerance) {
    KS_REQUIRE_MOCAP();
    const Clip& clip = shared_clip("cmu_02_01_walk.bvh");
    const TrackClip full = tracks_from_clip(clip, 0.0f);
    const ReductionStats fs = check_reduction(clip, full);
    EXPECT_LT(fs.worst_pos, 1e-4);
    EXPECT_LT(fs.worst_rot, 1e-5);
    for (float tol : {0.002f, 0.01f}) {
        const TrackClip tc = tracks_from_clip(clip, tol);
        const ReductionStats s = check_reduction(clip, tc);
        const double slack = tol * 1e-3 + 5e-6;
        EXPECT_LE(s.worst_pos, tol + slack) << "tol " << tol;
        EXPECT_LE(s.worst_rot, tol + slack) << "tol " << tol;
        EXPECT_LE(s.worst_scl, tol + slack) << "tol " << tol;
        EXPECT_LT(s.keys, fs.keys);
        EXPECT_LT(s.keys, s.frames / 2);
        EXPECT_TRUE(s.non_uniform);
        const double ratio = double(s.keys) / double(s.frames);
        record_figure(std::string("tracks walk keys kept / frames, tolerance ") + std::to_string(tol).substr(0, 5), ratio);
    }
}

// ---------------------------------------------------------------- transitions

namespace {

// `from` lacks joint 5, `to` lacks joint 6; partial joints differ; joint 7 animated by neither.
const std::vector<std::string> kFromMasks = {"prs", "prs", "rs", "prs", "pr", "", "prs", ""};
const std::vector<std::string> kToMasks = {"prs", "rs", "prs", "ps", "prs", "prs", "", ""};

bool has(const TrackClip& c, int j, char ch) {
    const JointTracks* jt = find_joint_tracks(c, j);
    if (!jt) return false;
    return ch == 'p' ? !jt->pos.times.empty() : ch == 'r' ? !jt->rot.times.empty() : !jt->scl.times.empty();
}

// Largest angle between the two clips' rotations on shared channels (slerp switches sides at pi).
float max_shared_angle(const TrackClip& from, const TrackClip& to, const Pose& a, const Pose& b) {
    float worst = 0;
    for (int j = 0; j < a.size(); ++j)
        if (has(from, j, 'r') && has(to, j, 'r')) worst = std::max(worst, angle_between(a.rot[size_t(j)], b.rot[size_t(j)]));
    return worst;
}

}  // namespace

TEST(TrackTransition, EndpointsAndChannelOwnership) {
    const TrackClip from = random_track_clip(kFromMasks, 2.0, 401);
    TrackClip to = random_track_clip(kToMasks, 2.0, 402);
    std::reverse(to.channels.begin(), to.channels.end());  // not in joint order: exercises the search
    const int n = int(kFromMasks.size());
    Rng rng(403);
    const Pose rest = random_pose(n, rng);
    Pose out(n), sa(n), sb(n), pa(n), pb(n), blended(n);
    TrackClipCursor cf = make_track_cursor(from), ct = make_track_cursor(to);
    TrackClipCursor rf = make_track_cursor(from), rt = make_track_cursor(to);
    int shared = 0, from_only = 0, to_only = 0, neither = 0;
    for (int i = 0; i < 40; ++i) {
        const double tf = urand(rng, -0.2, 2.2), tt = urand(rng, -0.2, 2.2);
        pa = rest;
        pb = rest;
        sample_tracks(pa, from, rf, tf, TrackEnd::Clamp);
        sample_tracks(pb, to, rt, tt, TrackEnd::Clamp);
        for (float w : {0.0f, 1.0f, 0.37f}) {
            const float wv = w == 0.37f ? 1.3f : 0.0f;
            out = rest;
            sample_transition(out, sa, sb, from, cf, tf, to, ct, tt, w, wv, TrackEnd::Clamp);
            op_blend(blended, pa, pb, w, wv);
            for (int j = 0; j < n; ++j) {
                const size_t i2 = size_t(j);
                for (char ch : {'p', 'r', 's'}) {
                    const bool in_f = has(from, j, ch), in_t = has(to, j, ch);
                    // What the channel must equal: the blend when shared, else the owner, else rest.
                    const Pose& want = in_f && in_t ? (w == 0.0f ? pa : w == 1.0f ? pb : blended)
                                       : in_f       ? pa
                                       : in_t      ? pb
                                                   : rest;
                    if (w == 0.37f) {
                        shared += in_f && in_t;
                        from_only += in_f && !in_t;
                        to_only += !in_f && in_t;
                        neither += !in_f && !in_t;
                    }
                    const float tol = 2e-5f;
                    if (ch == 'p') {
                        EXPECT_LT(length(out.pos[i2] - want.pos[i2]), tol) << "joint " << j << " w " << w;
                        EXPECT_LT(length(out.vel[i2] - want.vel[i2]), tol * (1 + length(want.vel[i2]))) << j;
                    } else if (ch == 'r') {
                        EXPECT_LT(angle_between(out.rot[i2], want.rot[i2]), tol) << "joint " << j << " w " << w;
                        EXPECT_LT(length(out.ang[i2] - want.ang[i2]), tol * (1 + length(want.ang[i2]))) << j;
                    } else {
                        EXPECT_LT(length(out.scl[i2] - want.scl[i2]), tol * (1 + length(want.scl[i2]))) << j;
                        EXPECT_LT(length(out.svl[i2] - want.svl[i2]), tol * (1 + length(want.svl[i2]))) << j;
                    }
                }
            }
        }
    }
    EXPECT_GT(shared, 0);
    EXPECT_GT(from_only, 0);
    EXPECT_GT(to_only, 0);
    EXPECT_GT(neither, 0);
}

TEST(TrackTransition, VelocitiesMatchFiniteDifferenceWhileTheWeightMoves) {
    const TrackClip from = random_track_clip(kFromMasks, 2.4, 404);
    const TrackClip to = random_track_clip(kToMasks, 1.9, 405);
    const int n = int(kFromMasks.size());
    const TransitionClock clock{3.0, 0.6};
    const double from_at_start = 1.3, to_at_start = 0.2;  // each clip's own time when the fade starts
    const float h = 1e-3f;
    Rng rng(406);
    Pose sa(n), sb(n), pa(n), pb(n);
    for (TrackEnd end : {TrackEnd::Clamp, TrackEnd::Loop}) {
        TrackClipCursor cf = make_track_cursor(from), ct = make_track_cursor(to);
        int checked = 0;
        float worst_wv = 0;
        for (int tries = 0; checked < 25 && tries < 20000; ++tries) {
            const double T = clock.start + urand(rng, 0.02, 0.98) * clock.duration;
            const double tf = from_at_start + (T - clock.start), tt = to_at_start + (T - clock.start);
            if (key_clearance(from, tf, end) < 3 * h || key_clearance(to, tt, end) < 3 * h) continue;
            sample_tracks(pa, from, cf, tf, end);
            sample_tracks(pb, to, ct, tt, end);
            ASSERT_LT(max_shared_angle(from, to, pa, pb), 2.8f);
            ++checked;
            worst_wv = std::max(worst_wv, clock.weight_vel(T));
            expect_velocities_match_fd(
                end == TrackEnd::Loop ? "tracks transition loop" : "tracks transition",
                [&](float t, Pose& out) {
                    sample_transition(out, sa, sb, from, cf, tf + t, to, ct, tt + t, clock.weight(T + t),
                                      clock.weight_vel(T + t), end);
                },
                n, h);
        }
        EXPECT_EQ(checked, 25);
        EXPECT_GT(worst_wv, 1.5f);  // the weight really moves (peak rate 1.5 / 0.6 s = 2.5 per second)
    }
}

TEST(TrackTransition, ContinuousInValueAndVelocityThroughTheWholeFade) {
    const TrackClip from = random_track_clip(kFromMasks, 2.4, 407);
    const TrackClip to = random_track_clip(kToMasks, 1.9, 408);
    const int n = int(kFromMasks.size());
    Pose out(n), sa(n), sb(n), prev(n), a(n), b(n);
    TrackClipCursor cf = make_track_cursor(from), ct = make_track_cursor(to);
    // Choose each clip's time at the fade's start so that neither clip has a key near the start
    // or the end of the fade (velocities jump at keys).
    const double duration = 0.5, start = 5.0, e = 2e-4;
    double from_at_start = -1, to_at_start = -1;
    for (double s = 0.0; s < 1.0; s += 0.001) {
        const double fa = 0.9 + s, ta = 0.15 + 0.7 * s;
        if (key_clearance(from, fa, TrackEnd::Loop) > e && key_clearance(to, ta, TrackEnd::Loop) > e &&
            key_clearance(from, fa + duration, TrackEnd::Loop) > e && key_clearance(to, ta + duration, TrackEnd::Loop) > e) {
            from_at_start = fa;
            to_at_start = ta;
            break;
        }
    }
    ASSERT_GE(from_at_start, 0.0) << "no clear start found";
    const TransitionClock clock{start, duration};
    EXPECT_EQ(clock.weight(start - 1), 0.0f);
    EXPECT_EQ(clock.weight(start + duration + 1), 1.0f);
    EXPECT_FALSE(clock.finished(start + 0.5 * duration));
    EXPECT_TRUE(clock.finished(start + duration));
    auto eval = [&](double T, Pose& o) {
        sample_transition(o, sa, sb, from, cf, from_at_start + (T - start), to, ct, to_at_start + (T - start),
                          clock.weight(T), clock.weight_vel(T), TrackEnd::Loop);
    };
    // Velocity does not jump when the fade begins or ends (the weight's rate is zero there).
    for (double edge : {start, start + duration}) {
        eval(edge - 1e-5, a);
        eval(edge + 1e-5, b);
        for (size_t j = 0; j < size_t(n); ++j) {
            EXPECT_LT(length(a.vel[j] - b.vel[j]), 2e-3f * (1 + length(a.vel[j]))) << "joint " << j << " at " << edge;
            EXPECT_LT(length(a.ang[j] - b.ang[j]), 2e-3f * (1 + length(a.ang[j]))) << "joint " << j << " at " << edge;
            EXPECT_LT(length(a.svl[j] - b.svl[j]), 2e-3f * (1 + length(a.svl[j]))) << "joint " << j << " at " << edge;
        }
    }
    // Value continuity: a dense sweep from before to after the fade; no step moves a channel
    // further than its velocity allows.
    const double dt = 5e-4;
    eval(start - 0.2, prev);
    for (double T = start - 0.2 + dt; T < start + duration + 0.2; T += dt) {
        eval(T, out);
        ASSERT_LT(max_shared_angle(from, to, sa, sb), 2.8f);  // never near slerp's side switch at pi
        for (size_t j = 0; j < size_t(n); ++j) {
            const double lp = std::max(length(prev.vel[j]), length(out.vel[j])) * dt * 1.05 + 2e-5;
            const double lr = std::max(length(prev.ang[j]), length(out.ang[j])) * dt * 1.05 + 2e-5;
            const double ls = std::max(length(prev.svl[j]), length(out.svl[j])) * dt * 1.05 + 2e-5;
            ASSERT_LE(length(out.pos[j] - prev.pos[j]), lp) << "joint " << j << " T " << T;
            ASSERT_LE(angle_between(out.rot[j], prev.rot[j]), lr) << "joint " << j << " T " << T;
            ASSERT_LE(length(log(out.scl[j]) - log(prev.scl[j])), ls) << "joint " << j << " T " << T;
        }
        std::swap(prev, out);
    }
}
