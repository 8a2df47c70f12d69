#include "programs/testbench/bot.h"

#include <cmath>

#include <algorithm>

namespace ks {

StreamClientConfig Bot::client_config(const BotConfig& cfg) {
    StreamClientConfig c;
    c.host = cfg.host;
    c.port = cfg.port;
    c.reconstruct = cfg.reconstruct;
    c.io = IoMode::Pumped;
    c.reconnect_after_s = cfg.reconnect_after_s;
    c.simulate = cfg.profile;
    c.simulate_up = cfg.up_profile;
    c.seed = cfg.seed;
    c.viewpoint = cfg.viewpoint;
    c.connect_token = cfg.connect_token;
    c.skeleton_cache_dir = cfg.skeleton_cache_dir;
    if (cfg.token_key)
        c.fetch_token = [key = *cfg.token_key, server = cfg.host + ":" + std::to_string(cfg.port), id = cfg.player_id] {
            net::TokenRequest r;
            r.client_id = id;
            r.servers = {server};
            return net::issue_connect_token(key, r, net::unix_now_s());
        };
    return c;
}

Bot::Bot(const BotConfig& cfg) : cfg_(cfg), client_(client_config(cfg)) {}

void Bot::start(double now_s) {
    started_ = now_s;
    client_.connect();
}

void Bot::stop() { client_.disconnect(); }

const Pose* Bot::displayed(uint16_t character) const {
    const RemoteCharacter* c = client_.character(character);
    return c && c->ready ? &c->local : nullptr;
}

void Bot::poll(double now_s) {
    if (now_s - last_render_ >= 1.0 / cfg_.render_hz) {
        last_render_ = now_s;
        client_.update();  // network first, then every character rendered
        client_.take_events();
    } else {
        client_.poll();
    }
}

BotReport Bot::report(double now_s) const {
    const StreamClientStats s = client_.stats();
    BotReport r;
    r.snapshots_received = s.session.snapshots_received;
    r.snapshots_lost = s.session.snapshots_lost;
    r.datagrams_lost = s.session.datagrams_lost;
    r.bytes_per_s = double(s.session.bytes_in + 28 * s.session.datagrams_in) / std::max(1e-9, now_s - started_);
    r.rtt_ms = s.rtt_ms;
    r.rate_given_bps = s.session.server_rate_bps;
    r.time_sync_err_ms = s.time_sync_error_ms;
    r.reconstruct_ns_per_character = s.render_ns_per_character;
    r.reconstruct_ns_per_character_median = s.render_ns_per_character_median;
    r.reconnects = s.reconnects;
    r.malformed = s.session.malformed;
    r.entries_refused = s.session.entries_refused;
    r.entries_early = s.session.entries_early;
    r.resyncs_sent = s.session.resyncs_sent;
    r.connect_requests = s.session.connect_requests;
    r.challenges = s.session.challenges;
    r.challenges_forged = s.session.challenges_forged;
    r.challenges_own = s.session.challenges_own;
    r.skeletons_by_reference = s.session.skeletons_by_reference;
    r.skeletons_in_full = s.session.skeletons_in_full;
    r.skeleton_errors = s.session.skeleton_errors;
    r.skeleton_cache_refused = s.skeleton_cache_refused + s.skeleton_cache_save_failures;
    r.problem = !s.skeleton_error.empty() ? s.skeleton_error : s.skeleton_cache_problem;
    for (const RemoteCharacter* c : client_.characters()) {
        if (!c->ready) continue;
        ++r.characters_shown;
        for (const vec3& p : c->global.pos) r.joints_shown += std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z);
    }
    r.characters_arriving = client_.arriving().size();
    r.state = client_.state_name();
    return r;
}

}  // namespace ks
