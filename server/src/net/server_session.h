#pragma once
// struct Server::Session: one client's session state (acks, reliable queue, snapshot builder, keys),
// private to server.cpp, server_handshake.cpp and server_reliable.cpp, with the helpers they share.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/src/net/rate_control.h"
#include "server/src/net/server.h"

namespace ks::net {

// Tags of sent packets (SentPacketLog): a snapshot or a reliable message, and its sequence or id.
constexpr uint64_t kTagSnapshot = 1ull << 60, kTagReliable = 2ull << 60, kTagMask = 0xFFFFFFFFFFFFFFull;

inline std::string endpoint_text(const asio::ip::udp::endpoint& ep) { return ep.address().to_string() + ":" + std::to_string(ep.port()); }

struct Server::Session {
    asio::ip::udp::endpoint ep;
    std::string key;
    uint32_t id = 0;
    uint64_t salt = 0;
    AckTracker received;
    SentPacketLog sent;
    uint16_t next_sequence = 0;
    SnapshotBuilder builder;
    RateControl rate;  // what its path carries: the builder's and the reliable messages' budget
    std::array<uint64_t, kRateChanges> rate_counted{};  // its changes already in ServerStats
    struct SnapshotMeta {
        uint32_t tick = 0;
        double sent_s = 0;
        std::vector<UnitKey> units;
    };
    std::array<SnapshotMeta, SentPacketLog::kWindow> snapshot_meta;
    struct Reliable {
        uint32_t message_id;
        std::function<std::vector<uint8_t>(const PacketHeader&)> build;
        double last_sent = -1e9, first_sent = -1;
        int sends = 0;
        bool acked = false;
        std::vector<uint16_t> defines;  // characters this message defines
        size_t bytes = 0;               // datagram size (before sealing)
        std::vector<uint16_t> skeletons;  // skeletons (or pieces of them) this message carries
    };
    std::vector<Reliable> reliable;
    std::vector<SkeletonHash> client_skeletons;  // skeletons the client holds (its handshake said)
    // A character's snapshots go out once its definition and every piece of its skeleton were sent
    // (known), right behind them: waiting for their acknowledgement cost a joining client a round
    // trip. They become baselines only once the client acknowledged the definition (confirmed),
    // and only those sent after the latest sending of the definition and its skeletons (the value):
    // the client had those before them, whichever sending it received.
    std::set<uint16_t> known;
    std::map<uint16_t, double> confirmed;
    std::map<uint16_t, double> def_sent_s, skeleton_sent_s;  // acknowledged: their latest sending
    std::set<uint16_t> defined;  // characters acknowledged, waiting for the rest of their skeleton
    std::map<uint16_t, uint16_t> skeleton_base;  // a skeleton sent coded against another: that one
    std::optional<vec3> viewpoint;  // where the client watches from (metres), once it said
    double last_heard = 0;
    bool heard_since_accept = false;  // a packet of the session arrived: the client has our Accept
    double last_accept_s = -1e9;
    double rtt_ms = 0;
    uint64_t bytes_sent = 0, snapshots_sent = 0;
    double bytes_window_start = 0;
    uint64_t bytes_window = 0;
    double bytes_per_s = 0;
    std::optional<PacketSealer> sealer;  // connect tokens: our packets, sealed
    std::optional<PacketOpener> opener;  // and the client's, opened and checked for replays
    uint64_t user_id = 0;                // the token's client id (the backend's player id)
    RateBucket rx;                       // incoming datagram rate
    double reliable_allowance = 0, allowance_last = 0;  // bytes reliable messages may still send now
    std::array<uint64_t, kUnsentReasons> unsent_counted{};  // the builder's counts already in ServerStats
    std::array<uint64_t, 3> needless_counted{};  // the builder's at-rest, held and late counts already in ServerStats
};

}  // namespace ks::net
