#pragma once
// Keyframe tracks: per-joint channels with their own, non-uniform key times (what an exporter's
// key reduction or an authoring tool produces), sampled with velocities through a cached forward
// cursor, and transitions (cross-fades) between two track clips over their shared channels.
//
// Interpolation is the derivative-friendly one used everywhere else: lerp for positions,
// slerp_shortest (Exp(x Log(abs(q1 q0^-1))) q0) for rotations, eerp for scales. Velocities are the
// exact derivatives of that piecewise interpolant: constant within a key interval, jumping at keys.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <kinesync/common/anim/clip.h>
#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/skeleton.h>

namespace ks {

// Keys at strictly increasing times (seconds). A track with no keys is "not animated".
struct Vec3Track {
    std::vector<double> times;
    std::vector<vec3> values;
};
struct QuatTrack {
    std::vector<double> times;
    std::vector<quat> values;
};

// The channels of one joint. Scale tracks are Vec3Tracks interpolated with eerp. An empty track
// leaves the caller's value (rest pose, or another layer) in place.
struct JointTracks {
    int joint = 0;
    Vec3Track pos;
    QuatTrack rot;
    Vec3Track scl;
};

struct TrackClip {
    std::string name;
    Skeleton skeleton;
    double duration = 0.0;              // loop period; keys should lie in [0, duration]
    std::vector<JointTracks> channels;  // any subset of joints, each joint at most once
};

enum class TrackEnd {
    Clamp,  // before the first / after the last key: hold that key, zero velocity
    Loop,   // time wraps modulo duration; the last key interpolates to the first key one period
            // later (so with the first key at 0 it reaches it at `duration`). For a seamless loop
            // whose keys span [0, duration], make the last key equal the first. A clip with
            // duration <= 0 is sampled as Clamp.
};

// Cached position in one track: forward playback advances it key by key (O(1) amortised, the
// article's "forward query"); a query before the cursor's key (time went backwards, or a loop
// wrapped) restarts from the beginning, and a jump far ahead gallops + binary searches, so any
// access pattern costs at most O(log keys). The cursor never trusts stale state: it checks the
// key's own time, so one cursor is always correct whatever the query sequence.
struct TrackCursor {
    int key = 0;  // last key with time <= the last query (-1: before the first key)
    double last_time = -std::numeric_limits<double>::infinity();  // the last query (local time)
    std::int64_t steps = 0;  // key advances + search probes so far (to check the O(1) claim)
};

// One cursor per channel of a TrackClip, indexed like TrackClip::channels.
struct TrackClipCursor {
    std::vector<TrackCursor> pos, rot, scl;
};
// A cursor sized for `clip` (allocates; do it once per playing clip).
TrackClipCursor make_track_cursor(const TrackClip& clip);

// Stateless: index of the last key with times[k] <= t, or -1 when t is before the first key
// (binary search). times must be strictly increasing.
int find_segment(const std::vector<double>& times, double t);
// The same answer through a cursor, updating it.
int track_cursor_seek(TrackCursor& cursor, const std::vector<double>& times, double t);

// Samples one track at clip time `time` (duration = the clip's loop period). Return false, and
// leave value/velocity untouched, when the track is empty.
bool sample_position_track(const Vec3Track& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                           vec3& value, vec3& vel);
bool sample_rotation_track(const QuatTrack& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                           quat& value, vec3& ang);
bool sample_scale_track(const Vec3Track& track, TrackCursor& cursor, double time, double duration, TrackEnd end,
                        vec3& value, vec3& svl);

// Writes pos/rot/scl and vel/ang/svl of every animated channel of `clip` at `time`. Joints and
// channels the clip does not animate are left untouched: pre-fill `out` with the rest pose (and
// zero velocities). Never allocates. `cursor` should come from make_track_cursor(clip); if it
// is too small, the missing channels fall back to a stateless search.
void sample_tracks(Pose& out, const TrackClip& clip, TrackClipCursor& cursor, double time, TrackEnd end);

// The channels of `joint` in `clip`, or nullptr. O(1) when channels are stored in joint order
// (what tracks_from_clip makes), a linear search otherwise.
const JointTracks* find_joint_tracks(const TrackClip& clip, int joint);

// Keys from a uniformly sampled clip, key f at time f * frame_dt, duration (frames-1) * frame_dt.
// tolerance == 0: one key per frame. tolerance > 0: greedy key reduction: each key interval is
// extended while linear/slerp/eerp interpolation of its end keys reproduces every frame inside
// it within tolerance (position: distance in clip units; rotation: angle in radians; scale:
// |log scale| difference), so the result is within tolerance at every original frame. In both
// cases a channel constant (within tolerance) over the clip keeps a single key.
TrackClip tracks_from_clip(const Clip& clip, float tolerance = 0.0f);

// A transition from one animation to another (the article's cross-fade): both clips are sampled
// (with their own cursors and times) into the scratch poses, then
//  - channels both clips animate are blended with op_blend semantics, weight 0 = `from`,
//    weight 1 = `to`, including the weight's rate `weight_vel` (exact slerp derivative);
//  - channels only one clip animates take that clip's value and velocity (note: a channel only
//    `to` animates therefore switches from the caller's value to `to`'s when the transition
//    starts: pre-fill `out` from the previous animation's last pose to avoid that pop);
//  - channels neither animates are left untouched.
// scratch_a and scratch_b must be sized like `out`; their contents are overwritten.
void sample_transition(Pose& out, Pose& scratch_a, Pose& scratch_b, const TrackClip& from, TrackClipCursor& cf,
                       double t_from, const TrackClip& to, TrackClipCursor& ct, double t_to, float weight,
                       float weight_vel, TrackEnd end);

// The transition's smoothstep weight: 0 before start, 1 after start + duration; its rate is zero
// at both ends, so the blend adds no velocity jump when it begins or ends.
struct TransitionClock {
    double start = 0.0, duration = 0.0;
    float weight(double t) const { return smoothstep_blend_alpha(float(t - start), float(duration)); }
    float weight_vel(double t) const { return smoothstep_blend_alpha_vel(float(t - start), float(duration)); }
    bool finished(double t) const { return t - start >= duration; }
};

}  // namespace ks
