#pragma once
// Turning late, lossy snapshots into the pose to show now: the client's reconstruction strategies
// (definitions: ../shared/EVALUATION.md).
//
//   snap           the newest snapshot as it arrived
//   interp         buffered linear/slerp interpolation `interp_delay_s` in the past (Source: 100 ms)
//   hermite        the same delay, cubic Hermite interpolation using the snapshots' velocities
//   extrap         dead reckoning from the newest snapshot with its velocities; corrections at once
//   deadblend      the displayed pose, extrapolated with decaying velocities, dead-blended
//                  (slerp_via) into each newer snapshot's extrapolation
//   deadblend+sod  deadblend, plus second-order dynamics (f, zeta, r) smoothing the root
//
// Extrapolation runs with constant velocities up to `extrap_cap_s` past a snapshot and with
// velocities decaying (half-life `extrap_decay_halflife_s`) beyond, so long loss degrades into a
// gentle stop rather than a flight. Teleports and resets: a snapshot with a new epoch is never
// interpolated or blended across; the display jumps to it, and the root filter is reset to the new
// state with the snapshot's velocity.
//
// Joint 0 is the root in the world (as on the wire); other joints are local. Times are on the
// server's clock, in seconds.

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/anim/pose.h"
#include "common/anim/skeleton.h"
#include "common/dynamics/second_order.h"

namespace ks {

enum class Strategy { Snap, Interp, Hermite, Extrap, DeadBlend, DeadBlendSod };
const char* strategy_name(Strategy s);
bool strategy_from_name(const std::string& name, Strategy& out);
const std::vector<Strategy>& all_strategies();

struct ReconstructConfig {
    Strategy strategy = Strategy::DeadBlendSod;
    double interp_delay_s = 0.1;
    double extrap_cap_s = 0.25;
    float extrap_decay_halflife_s = 0.1f;
    // Velocity half-life of the extrapolated displayed pose. Blends chain (a new one every
    // snapshot), so any decay compounds into lag: 5 s costs ~3 mm on steady motion and still
    // tames a fast joint's overshoot when snapshots stop.
    float deadblend_halflife_s = 5.0f;
    float deadblend_blend_s = 0.05f;     // cross-fade into each newer snapshot's extrapolation (blends restart at
                                         // every snapshot: longer ones leave most of each correction
                                         // undone when the next arrives, and lag)
    SodParams root_sod{6.0f, 1.0f, 2.0f};  // f (Hz), zeta, r: r = 2 with zeta = 1 tracks ramps without lag
    SodStability root_sod_mode = SodStability::PoleZero;
};

// One character.
class CharacterReconstructor {
public:
    CharacterReconstructor(const Skeleton& skeleton, const ReconstructConfig& cfg);
    // A snapshot of the character (joint 0 in the world) at server time t (its tick / tick rate).
    // Snapshots may arrive out of order; older than the newest are kept for interpolation only.
    void add_snapshot(double t, const Pose& pose, uint16_t epoch);
    // The pose to show at server time `now` (render frames in order; dt since the last one).
    const Pose& render(double now, double dt);
    const Pose& displayed() const { return out_; }
    bool ready() const { return !snaps_.empty(); }
    // The delay this strategy shows the motion with (0 for the extrapolating ones).
    double display_delay() const;

private:
    struct Snap {
        double t;
        uint16_t epoch;
        Pose pose;
    };
    void extrapolate(Pose& out, const Snap& s, double now);  // uses scratch_
    void interpolate(Pose& out, double when, bool hermite);  // uses target_ and transition_

    const Skeleton& skeleton_;
    ReconstructConfig cfg_;
    std::deque<Snap> snaps_;  // by time, newest last
    Pose out_, target_, transition_, scratch_, motion_;  // motion_: velocities of the shown pose without the blend's own
    std::vector<quat> dirs_, motion_dirs_;
    bool motion_valid_ = false;
    double blend_clock_ = 0.0;
    bool blending_ = false;
    bool have_display_ = false;
    double newest_seen_t_ = -1e300;
    uint16_t shown_epoch_ = 0;
    SecondOrder<vec3> root_pos_;
    SecondOrderQuat root_rot_;
    bool sod_ready_ = false;
};

}  // namespace ks
