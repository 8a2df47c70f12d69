#include "programs/server/sim/world_streamer.h"

#include <algorithm>
#include <cmath>

#include "programs/server/sim/look_ahead_horizon.h"
#include <stdexcept>
#include <string>

namespace ks {

WorldStreamer::WorldStreamer(World& world, StreamServer& server, int workers) : world_(world), server_(server), pool_(workers) {
    const ClipLibrary& lib = world.library();
    for (size_t s = 0; s < lib.skeletons.size(); ++s)
        if (server.add_skeleton(lib.skeleton_names[s], lib.skeletons[s], lib.metres_per_unit[s]) != s)
            throw std::logic_error("WorldStreamer needs a server with no skeletons of its own");
    for (size_t c = 0; c < world.characters().size(); ++c) {
        const Character& ch = world.characters()[c];
        if (server.add_character(uint16_t(ch.skeleton()), "character " + std::to_string(c)) != c)
            throw std::logic_error("WorldStreamer needs a server with no characters of its own");
        server.set_pose(uint16_t(c), ch.pose());
    }
}

void WorldStreamer::set_look_ahead(double seconds, int every_ticks, bool follow_clients) {
    if (!(seconds >= 0.0 && seconds <= 2.0)) throw std::invalid_argument("look-ahead of " + std::to_string(seconds) + " s: 0..2 s");
    if (every_ticks < 1) throw std::invalid_argument("look-ahead every " + std::to_string(every_ticks) + " ticks: at least 1");
    ahead_s_ = ahead_target_s_ = ahead_fallback_s_ = seconds;
    follow_clients_ = follow_clients && seconds > 0.0;
    ahead_every_ = every_ticks;
    epoch_tick_.assign(world_.characters().size(), 0);
    plan_tick_.assign(world_.characters().size(), 0);
    plan_seen_.assign(world_.characters().size(), 0);
    for (size_t c = 0; c < plan_seen_.size(); ++c) plan_seen_[c] = world_.characters()[c].plan();
    ahead_ = world_.characters();
}

void WorldStreamer::set_decision_restart(double seconds) {
    if (!(seconds <= 2.0))
        throw std::invalid_argument("decision restart of " + std::to_string(seconds) + " s: at most 2 s (negative: off)");
    decision_restart_s_ = seconds;
}

void WorldStreamer::send_look_ahead(uint32_t now, double hz) {
    ahead_s_ = slew_horizon(ahead_s_, ahead_target_s_, hz / double(ahead_every_));
    const int64_t ahead_ticks = std::lround(ahead_s_ * hz);
    const int64_t restart = decision_restart_s_ < 0.0 ? ahead_ticks : std::max<int64_t>(1, std::lround(decision_restart_s_ * hz));
    std::vector<Character>& chars = world_.characters();
    horizon_.resize(chars.size());
    for (size_t c = 0; c < chars.size(); ++c) {
        const int64_t since_decision = restart + int64_t(now) - int64_t(plan_tick_[c]);
        horizon_[c] = int(std::min({ahead_ticks, int64_t(now) - int64_t(epoch_tick_[c]), since_decision}));
    }
    const double dt = 1.0 / hz;
    pool_.parallel_for(chars.size(), [&](size_t c) {
        if (look_ahead_fn_) look_ahead_fn_(chars[c], horizon_[c], dt, now, ahead_[c]);
        else chars[c].look_ahead(horizon_[c], dt, ahead_[c]);
    });
    for (size_t c = 0; c < chars.size(); ++c)
        if (horizon_[c] > 0)
            server_.set_look_ahead(uint16_t(c), ahead_[c].pose(), float(double(horizon_[c]) * dt), uint16_t(chars[c].plan()));
}

uint32_t WorldStreamer::step() {
    world_.step(&pool_);
    const uint32_t now = world_.tick();
    std::vector<Character>& chars = world_.characters();
    for (size_t c = 0; c < chars.size(); ++c) {
        const Character& ch = chars[c];
        const uint16_t id = uint16_t(c);
        for (const CharacterEvent& e : ch.events()) {
            if (e.kind == CharacterEvent::Kind::Teleport) server_.teleport(id);
            else server_.reset(id);
            if (!epoch_tick_.empty()) epoch_tick_[c] = e.tick;
        }
        server_.set_pose(id, ch.pose());
        if (!plan_seen_.empty() && plan_seen_[c] != ch.plan()) {
            plan_seen_[c] = ch.plan();
            plan_tick_[c] = now;
        }
    }
    const double hz = double(world_.config().tick_hz);
    if (follow_clients_ && now % uint32_t(std::max(1.0, std::round(hz))) == 0) {
        std::vector<double> rtts;
        for (const net::ClientReport& r : server_.stats().clients) rtts.push_back(r.rtt_ms);
        ahead_target_s_ = horizon_for_clients(rtts, hz / double(ahead_every_), ahead_fallback_s_);
    }
    if (ahead_s_ > 0.0 && now % uint32_t(ahead_every_) == 0) send_look_ahead(now, hz);
    const uint32_t tick = server_.end_tick();
    if (tick != world_.tick()) throw std::logic_error("WorldStreamer: the server's tick is not the world's");
    return tick;
}

}  // namespace ks
