#pragma once
// One simulated character: a small seeded controller over the clip library. It plays a clip at a
// varying speed, switches clips at varied times with dead blending or inertialization,
// accumulates root motion, turns its head toward a moving target (look-at with velocities), and
// is teleported / reset now and then, each bumping its epoch. Velocities all come out of the
// animation ops (sampling, blends, kform products, look-at): never from past poses, so they are
// right on the first tick after a teleport or reset.

#include <cstdint>
#include <random>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include "programs/server/sim/clip_library.h"

namespace ks {

enum class TransitionKind { DeadBlending, Inertialization };

struct ControllerConfig {
    TransitionKind transition = TransitionKind::DeadBlending;
    float blend_time = 0.3f;               // seconds
    float extrapolation_halflife = 0.15f;  // dead blending
    float switch_min_s = 3.0f, switch_max_s = 8.0f;
    float speed_min = 0.8f, speed_max = 1.2f;
    float teleport_every_s = 0.0f;  // 0: never
    float reset_every_s = 0.0f;     // 0: never
    float lookat_weight = 0.7f;
};

struct CharacterEvent {
    enum class Kind : uint8_t { Teleport, Reset };
    Kind kind;
    uint32_t tick;
    uint16_t epoch;  // the epoch that starts with this event
};

// A decision: what changes a character's future, taken at a tick by its controller (from its
// random source) or scheduled by a scenario or a test (Character::schedule). A scheduled one is
// applied in its tick's step where the controller's own are (after the clocks advance, before the
// pose), after them. A switch or speed change always starts a new plan, even one that changes
// nothing (a switch to the clip and time playing, the speed already aimed at).
struct Decision {
    enum class Kind : uint8_t { Teleport, Reset, Switch, Speed };
    Kind kind = Kind::Switch;
    uint32_t tick = 0;
    vec3 position{};         // Teleport: where the character's ground root goes (skeleton units; y ignored)
    float yaw = 0.0f;        // Teleport: its heading, radians
    int clip = 0;            // Reset, Switch: a clip of the character's skeleton
    double clip_time = 0.0;  // Reset, Switch: where in it, seconds (wrapped into the clip)
    float speed = 1.0f;      // Speed: the playback speed the character eases to, (0, kMaxSpeed]
    static constexpr float kMaxSpeed = 10.0f;
};
const char* decision_kind_name(Decision::Kind kind);

class Character {
public:
    Character(const ClipLibrary& lib, int skeleton, uint64_t seed, vec3 start, float start_yaw, const ControllerConfig& cfg);
    // Advances by dt seconds to `tick`; events raised on this tick are in events().
    void step(double dt, uint32_t tick);
    // The look-ahead (docs/FIDELITY.md, "Look-ahead"): `out` becomes this character as it would be
    // `ticks` steps of tick_dt from now if nothing were decided meanwhile (no clip switch or speed
    // change, no teleport or reset): clip, speed easing, transition in progress and look-at target
    // carried on, from the present state alone. One animation evaluation, whatever the horizon;
    // out.pose() is the result. `out` is scratch space (its buffers are reused).
    void look_ahead(int ticks, double tick_dt, Character& out) const;
    // Joint 0 (the hips) in the world, other joints local; velocities included.
    const Pose& pose() const { return out_; }
    uint16_t epoch() const { return epoch_; }
    int skeleton() const { return skeleton_; }
    const std::vector<CharacterEvent>& events() const { return events_; }
    int clip() const { return clip_; }
    // Clip switches so far (a transition starts at each).
    int switches() const { return switches_; }
    // The plan: bumped on every tick with a clip switch or a speed change (what a look-ahead
    // assumed of the future no longer holds; teleports and resets bump the epoch instead).
    int plan() const { return plan_; }

    // Decisions to apply at their ticks (after the present one); throws std::invalid_argument
    // naming the field for a tick not in the future, a clip not of this skeleton (Reset, Switch;
    // ignored otherwise), a value not finite or a speed outside (0, Decision::kMaxSpeed]. Pending
    // ones are kept in tick order.
    void schedule(const Decision& d);
    const std::vector<Decision>& scheduled() const { return scheduled_; }
    void clear_schedule() { scheduled_.clear(); }
    // No more decisions from the random source (a scripted scenario's, or a test's, alone).
    void stop_random_decisions();

    // Controls (also used by the scenario): teleport by a rigid move, reset into a clip and time.
    void teleport(vec3 position, float yaw, uint32_t tick);
    void reset(int clip, double clip_time, uint32_t tick);

private:
    static constexpr float kSpeedHalflife = 0.5f;  // playback speed easing towards its target
    void advance(double dt, double clip_dt);  // clocks, clip time (wrapping), blend clock
    void decide(double dt, uint32_t tick);    // teleports, resets, clip switches and speed changes now due
    void apply(const Decision& d, double dt);  // a scheduled decision
    void animate();                           // the pose of the present state
    void copy_state_to(Character& out) const;  // what the look-ahead needs, reusing out's buffers
    void sample_input(Pose& out, int clip, double clip_time, float speed, const kform& anchor) const;
    void start_transition(int next_clip, double next_time, double dt);
    kform current_ground() const;  // the character root under the displayed hips
    double period(int clip) const;

    const ClipLibrary* lib_;
    int skeleton_;
    ControllerConfig cfg_;
    std::mt19937_64 rng_;
    int clip_ = 0;
    double time_ = 0.0;       // clip time, unwrapped within [0, period)
    float speed_ = 1.0f, speed_target_ = 1.0f;
    kform anchor_;            // world = anchor * ground(time)
    double next_switch_ = 0.0, next_teleport_ = 0.0, next_reset_ = 0.0, clock_ = 0.0;
    // Transition state.
    bool blending_ = false;
    double blend_clock_ = 0.0;
    Pose transition_, offset_, scratch_, input_, global_;
    std::vector<quat> dirs_;
    uint16_t epoch_ = 0;
    int switches_ = 0, plan_ = 0;
    std::vector<Decision> scheduled_;  // pending, by tick
    uint32_t tick_ = 0;                // of the last step
    std::vector<CharacterEvent> events_;
    Pose out_;
    int head_ = -1;
    vec3 head_forward_{0, 0, 1};
    vec3 target_phase_;
};

// Seeded uniform helpers used across the simulation (independent of the standard library's
// distribution implementations, so a seed means the same run everywhere).
inline double rng_uniform(std::mt19937_64& rng, double lo, double hi) {
    return lo + (hi - lo) * double(rng() >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace ks
