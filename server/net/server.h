#pragma once
// kinesync-server's network side: one io_context, one UDP socket, a drift-free tick timer.
//
// Per tick the world steps, the recorder (if any) takes the frame, and on snapshot ticks every
// character is quantized once and each connected client gets its own delta-compressed snapshot
// from its SnapshotBuilder. Handshake: ConnectRequest (padded to a full datagram) -> Challenge
// (a stateless cookie) -> ChallengeResponse -> Accept; skeleton definitions and events are sent
// reliably (resent until acknowledged). Malformed or unexpected datagrams are counted and dropped;
// they never reach another client's state.

#include <array>
#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/codec/snapshot_codec.h"
#include "common/net/protocol.h"
#include "server/net/cookie.h"
#include "server/sim/world.h"

namespace ks::net {

struct ServerConfig {
    std::string bind = "0.0.0.0";
    uint16_t port = 40000;  // 0: any free port
    int max_clients = 32;
    float snapshot_hz = 30.0f;
    float bandwidth_bps = 256000.0f;
    double timeout_s = 5.0;
    double stats_interval_s = 5.0;
    double reliable_resend_s = 0.25;
    uint64_t secret_seed = 0;  // cookie key seed (0: from the random device)
};

struct ServerStats {
    uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0;
    uint64_t malformed = 0;  // failed decode_packet
    std::array<uint64_t, size_t(DecodeError::Count)> malformed_by_reason{};
    uint64_t unexpected = 0;  // well formed but not acceptable from that peer in its state
    uint64_t refused = 0;     // bad cookies, server full
    uint64_t connects = 0, disconnects = 0, timeouts = 0;
    uint64_t ticks = 0, missed_ticks = 0;
};

struct ClientReport {
    uint32_t id;
    std::string endpoint;
    double bytes_per_s;
    double rtt_ms;
    uint64_t snapshots_sent;
};

// Called each tick with the world after it stepped (the recorder hooks in here).
using TickHook = std::function<void(const World&)>;

class Server {
public:
    Server(asio::io_context& io, World& world, const ServerConfig& cfg, TickHook on_tick = {});
    ~Server();
    void start();
    // Stops timers and the socket; the io_context then runs out of work.
    void stop();
    uint16_t port() const;
    const ServerStats& stats() const { return stats_; }
    std::vector<ClientReport> clients() const;
    // Tick time percentiles (microseconds) since the last call.
    void take_tick_times(double& p50_us, double& p99_us);

private:
    struct Session;
    void receive();
    void on_datagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes);
    void on_session_packet(Session& s, const DecodedPacket& p);
    void schedule_tick();
    void on_tick();
    void send_snapshots(uint32_t tick);
    void send_reliable(Session& s, bool force);
    void send(Session& s, const std::function<std::vector<uint8_t>(const PacketHeader&)>& build, uint64_t tag);
    void send_raw(const asio::ip::udp::endpoint& to, std::vector<uint8_t> bytes);
    void drop(uint32_t id, const char* why);
    double now_s() const;
    uint64_t now_us() const;

    asio::io_context& io_;
    World& world_;
    ServerConfig cfg_;
    TickHook on_tick_;
    asio::ip::udp::socket socket_;
    asio::steady_timer tick_timer_;
    std::chrono::steady_clock::time_point start_;
    uint64_t tick_index_ = 0;
    CookieJar cookies_;
    std::array<uint8_t, 2048> rx_{};
    asio::ip::udp::endpoint rx_from_;
    std::map<std::string, std::unique_ptr<Session>> sessions_;  // by endpoint text
    uint32_t next_client_id_ = 1;
    uint32_t next_message_id_ = 1;
    ServerStats stats_;
    SnapshotHistory history_;
    std::vector<SkeletonPrecision> precisions_;
    std::vector<CharacterSnapshot> now_;
    std::vector<EventInfo> pending_events_;
    std::vector<double> tick_times_us_;
    bool running_ = false;
};

}  // namespace ks::net
