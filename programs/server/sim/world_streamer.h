#pragma once
// The demo's driver of a StreamServer: registers a simulated World's skeletons and characters
// (ids equal to their indexes in the world) and, per tick, steps the world and hands the server
// every character's pose and teleports/resets. kinesync-server is this plus a clock.

#include <cstdint>
#include <functional>
#include <utility>

#include "programs/server/sim/world.h"
#include <kinesync/server/stream_server.h>

namespace ks {

class WorldStreamer {
public:
    // Registers everything now (before the first tick, so a recording holds every character).
    // Characters step on `workers` extra threads (-1: one per other core).
    WorldStreamer(World& world, StreamServer& server, int workers = -1);
    // One tick: world.step(), poses and events to the server, server.end_tick(). Returns the tick.
    uint32_t step();
    // Also hand the server each character's look-ahead (StreamServer::set_look_ahead) `seconds`
    // ahead, on every `every_ticks`-th tick (the snapshot ticks: no other is sent). Within the
    // horizon after a teleport or reset it is the time since it (0 at the event), so no
    // look-ahead reaches back across an epoch change. 0 seconds: none. With `follow_clients` the
    // horizon follows the connected clients' round trips (horizon_for_clients, checked every
    // second, moved by slew_horizon); `seconds` is the horizon without clients.
    void set_look_ahead(double seconds, int every_ticks, bool follow_clients = false);
    double look_ahead_s() const { return ahead_s_; }  // the horizon now
    // After a new plan (a clip switch or speed change: a decision the earlier look-aheads could not
    // know; Character::plan), restart the horizon
    // at `seconds` (at least a tick, at most 2 s) and let it grow back a tick per tick, so the new
    // plan's first entries come due sooner (docs/FIDELITY.md, "Look-ahead"). Negative: off (the
    // default here; kinesync-server uses kDecisionRestartS), the horizon stays whole and the first
    // entry of the new plan is a horizon away.
    static constexpr double kDecisionRestartS = 0.15;
    void set_decision_restart(double seconds);
    // What computes a character's look-ahead `ticks` ahead of tick `now` into `out`:
    // Character::look_ahead unless set. Tests set dishonest ones (which know a decision to come, or
    // peek a tick or two ahead) to show that their checks catch them.
    using LookAheadFn = std::function<void(const Character& ch, int ticks, double tick_dt, uint32_t now, Character& out)>;
    void set_look_ahead_function(LookAheadFn f) { look_ahead_fn_ = std::move(f); }

private:
    World& world_;
    StreamServer& server_;
    WorkerPool pool_;
    int ahead_every_ = 1;
    double ahead_s_ = 0.0, ahead_target_s_ = 0.0, ahead_fallback_s_ = 0.0;
    bool follow_clients_ = false;
    double decision_restart_s_ = -1.0;
    std::vector<uint32_t> epoch_tick_;    // per character: the tick of its last teleport or reset
    std::vector<uint32_t> plan_tick_;     // per character: the tick of its last new plan
    std::vector<int> plan_seen_;          // per character: its plan() then
    std::vector<Character> ahead_;        // per character: scratch for its look-ahead
    std::vector<int> horizon_;            // per character: this snapshot's horizon, ticks
    LookAheadFn look_ahead_fn_;

    void send_look_ahead(uint32_t now, double hz);  // each character's look-ahead to the server
};

}  // namespace ks
