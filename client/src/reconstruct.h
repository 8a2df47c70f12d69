#pragma once
// CharacterReconstructor: one character's snapshots turned into the pose to show now, by the
// strategy of its ReconstructConfig (the strategies: kinesync/client/reconstruct_config.h).

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/ops_hermite.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/skeleton.h>
#include <kinesync/client/reconstruct_config.h>

namespace ks {

// One character.
class CharacterReconstructor {
public:
    // The skeleton must outlive the reconstructor. metres_per_unit: the skeleton's units (for the
    // correction's acceleration limit).
    CharacterReconstructor(const Skeleton& skeleton, const ReconstructConfig& cfg, float metres_per_unit = 1.0f);
    // A snapshot of the character (joint 0 in the world) at server time t (its tick / tick rate).
    // Snapshots may arrive out of order; older than the newest are kept for interpolation only.
    // A look-ahead snapshot is the pose the server expected at t, computed at `computed_at` under
    // `plan`: a newer plan voids what older ones said of the time after its computed_at, and a
    // newer epoch what older epochs said of the time from its computed_at on (the epoch began by
    // then). Without computed_at, the snapshot was computed at t.
    void add_snapshot(double t, const Pose& pose, uint16_t epoch, uint16_t plan = 0, double computed_at = -1e300);
    // The pose to show at server time `now` (render frames in order; dt since the last one).
    const Pose& render(double now, double dt);
    const Pose& displayed() const { return out_; }
    bool ready() const { return !snaps_.empty(); }
    // The delay this strategy shows the motion with (0 for the extrapolating ones).
    double display_delay() const;
    // The epoch of the motion shown by the last render (interp/hermite switch when their render
    // time reaches the new epoch's first snapshot, hermite+ahead as soon as it has one).
    uint16_t shown_epoch() const { return shown_epoch_; }

private:
    struct Snap {
        double t;
        uint16_t epoch;
        Pose pose;
        uint16_t plan = 0;
        double from = 0;  // when it was computed (t for a present snapshot)
        uint64_t serial = 0;  // which entry (entries are never changed in place, only added and dropped)
    };
    // Uses scratch_ past the cap; joint 0 with root_halflife when it differs (uses root_in_/root_out_).
    void extrapolate(Pose& out, const Snap& s, double now, float halflife, float root_halflife);
    void carry_back(Pose& out, const Snap& s, double when);  // an entry ahead of `when`, back to it
    void limit_correction_frequencies();  // omega_ from offset_
    void render_corrected(const Snap& newest, bool fresh, bool new_epoch, double now, double dt);
    // The snapshots around `when` interpolated; across an epoch the older is held (a delayed display
    // reaches the newer at its time) or, `newer_at_once`, the newer shown, carried back to `when`
    // (the present is past the time it was computed; carry_back). Returns the epoch shown. Uses
    // target_ and transition_.
    uint16_t interpolate(Pose& out, double when, bool hermite, bool newer_at_once = false);
    // What the snapshots say the pose is at `when`: the newest extrapolated; with look-ahead, the
    // two around `when` interpolated (true) when there are two. Uses scratch_ (extrapolate).
    bool predict(Pose& out, const Snap& newest, double when);
    struct HermitePair {
        uint64_t serial0 = 0, serial1 = 0;  // the entries' (0: none)
        HermiteSegment segment;
    };

    const Skeleton& skeleton_;
    ReconstructConfig cfg_;
    std::deque<Snap> snaps_;  // by time, newest last
    Pose out_, target_, transition_, scratch_, motion_, root_in_, root_out_;  // motion_: velocities of the shown pose without the blend's own
    std::vector<quat> dirs_, motion_dirs_;
    bool motion_valid_ = false;
    double blend_clock_ = 0.0;
    bool blending_ = false;
    bool have_display_ = false;
    double newest_seen_t_ = -1e300;
    uint64_t serials_ = 0;  // entries added so far
    uint64_t changes_ = 0, seen_changes_ = 0;  // entries added or dropped: so far, and at the last render
    bool any_plan_ = false;
    uint16_t newest_plan_ = 0;
    double newest_plan_from_ = -1e300;  // when the newest plan was first computed (as far as known)
    uint16_t shown_epoch_ = 0;
    // deadblend+sod: the correction offset, its per-joint frequency, and the last render's time.
    PoseOffset offset_;
    std::vector<float> omega_, omega_pos_;
    Pose spare_pose_;                    // storage of the last snapshot dropped from the history
    HermitePair pairs_[2];               // interpolate's, for the two pairs it last used (latest first)
    std::vector<float> bone_;            // per joint: rest-pose distance to its parent (units)
    std::vector<float> cum_x_, cum_v_;   // scratch: correction sizes accumulated down the chain
    std::vector<float> turn_x_, turn_v_;  // scratch: rotation offsets summed down the chain
    std::vector<float> lengths_;          // scratch: |pos|, |vel|, |rot|, |ang| of the offset, n each
    float metres_per_unit_ = 1.0f;
    double last_now_ = 0.0;
};

}  // namespace ks
