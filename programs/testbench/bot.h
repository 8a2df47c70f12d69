#pragma once
// One test client ("bot"): a StreamClient rendering at a fixed rate, reconnecting when the server
// goes away, reporting what it measured. kinesync-client runs several in one process.

#include <cstdint>
#include <optional>
#include <string>

#include <kinesync/client/stream_client.h>
#include "common/src/net/connect_token.h"

namespace ks {

struct BotConfig {
    std::string host = "127.0.0.1";
    uint16_t port = 40000;
    ReconstructConfig reconstruct;
    std::optional<NetProfile> profile;     // none: the socket directly
    std::optional<NetProfile> up_profile;  // the client -> server direction's, when it differs
    uint64_t seed = 1;
    double render_hz = 60.0;
    double reconnect_after_s = 1.0;
    std::optional<vec3> viewpoint;  // metres: reported to the server (relevance)
    // The servers' private key, standing in for a game's backend: each connection attempt gets a
    // fresh connect token for host:port (a test bench convenience; a game client never holds it).
    std::optional<net::Key> token_key;
    uint64_t player_id = 1;              // the client id of the tokens it mints (one live session per player)
    std::vector<uint8_t> connect_token;  // or one token (one session)
    std::string skeleton_cache_dir;      // StreamClientConfig::skeleton_cache_dir ("": none)
};

struct BotReport {
    uint64_t snapshots_received = 0, snapshots_lost = 0;
    uint64_t datagrams_lost = 0;  // the server's, lost on the way (gaps in their sequence)
    double bytes_per_s = 0, rtt_ms = 0, time_sync_err_ms = 0, reconstruct_ns_per_character = 0, reconstruct_ns_per_character_median = 0;
    double rate_given_bps = 0;  // the rate the server says it sends at (0: not said yet)
    uint64_t reconnects = 0, malformed = 0;
    uint64_t entries_refused = 0, resyncs_sent = 0;  // snapshot entries refused alone, and full updates asked for
    uint64_t entries_early = 0;  // entries of characters whose skeleton had not arrived yet
    size_t characters_shown = 0, joints_shown = 0;   // characters displayed now, and their joints (finite poses)
    size_t characters_arriving = 0;                  // announced but not yet whole (StreamClient::arriving)
    // The handshakes, every attempt: ConnectRequests sent, Challenges taken, forged ones refused,
    // taken ones that named the client's own address (answered first; none behind a NAT).
    uint64_t connect_requests = 0, challenges = 0, challenges_forged = 0, challenges_own = 0;
    // Skeletons taken by reference from the cache, received in full, and refused; cache files refused.
    uint64_t skeletons_by_reference = 0, skeletons_in_full = 0, skeleton_errors = 0, skeleton_cache_refused = 0;
    std::string problem;  // the first skeleton error or cache problem ("" while none)
    std::string state;
};

class Bot {
public:
    // Throws std::runtime_error when the host does not resolve.
    explicit Bot(const BotConfig& cfg);
    void start(double now_s);
    // Says goodbye: the StreamClient sends a Disconnect straight to the server (not through the
    // simulated link), so the server frees the slot at once. The destructor does the same.
    void stop();
    // Moves datagrams, renders when due. Call often (e.g. every millisecond).
    void poll(double now_s);
    BotReport report(double now_s) const;
    ConnectionState state() const { return client_.state(); }
    std::string disconnect_reason() const { return client_.disconnect_reason(); }
    ClientSessionStats session_stats() const { return client_.stats().session; }
    // The displayed local pose of a character (joint 0 in the world), if any.
    const Pose* displayed(uint16_t character) const;

private:
    static StreamClientConfig client_config(const BotConfig& cfg);
    BotConfig cfg_;
    StreamClient client_;
    double started_ = 0, last_render_ = -1e9;
};

}  // namespace ks
