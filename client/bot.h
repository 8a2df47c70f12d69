#pragma once
// One test client ("bot") over a real UDP socket, optionally through the network simulator in both
// directions: a ClientSession, per-character reconstruction with one strategy, rendering at 60 Hz,
// automatic reconnection. kinesync-client runs several in one process.

#include <asio.hpp>
#include <map>
#include <memory>
#include <optional>

#include "client/reconstruct.h"
#include "client/render_clock.h"
#include "client/session.h"
#include "common/netsim/netsim.h"

namespace ks {

struct BotConfig {
    std::string host = "127.0.0.1";
    uint16_t port = 40000;
    ReconstructConfig reconstruct;
    std::optional<NetProfile> profile;  // none: the socket directly
    uint64_t seed = 1;
    double render_hz = 60.0;
    double reconnect_after_s = 1.0;
};

struct BotReport {
    uint64_t snapshots_received = 0, snapshots_lost = 0;
    double bytes_per_s = 0, rtt_ms = 0, time_sync_err_ms = 0, reconstruct_ns_per_character = 0;
    uint64_t reconnects = 0, malformed = 0;
    std::string state;
};

class Bot {
public:
    Bot(asio::io_context& io, const BotConfig& cfg);
    // Says goodbye: a Disconnect straight to the server (not through the simulated link), so the
    // server frees the slot at once instead of timing the session out.
    ~Bot();
    Bot(const Bot&) = delete;
    Bot& operator=(const Bot&) = delete;
    void start(double now_s);
    void stop(double now_s);  // the same goodbye, explicitly; poll() does nothing after
    // Moves datagrams, runs timers, renders when due. Call often (e.g. every millisecond).
    void poll(double now_s);
    BotReport report(double now_s) const;
    const ClientSession& session() const { return session_; }
    // The displayed local pose of a character (joint 0 in the world), if any.
    const Pose* displayed(uint16_t character) const;

private:
    void on_state_change(double now_s);
    BotConfig cfg_;
    asio::ip::udp::socket socket_;
    asio::ip::udp::endpoint server_;
    ClientSession session_;
    std::unique_ptr<NetLink> link_;
    std::map<uint16_t, std::unique_ptr<CharacterReconstructor>> recon_;
    std::map<uint16_t, Skeleton> skeletons_;
    RenderClock render_clock_;
    bool stopped_ = false;
    double last_poll_ = 0;
    double started_ = 0, last_render_ = -1e9, disconnected_at_ = -1, last_est_ = -1e300;
    uint64_t reconnects_ = 0;
    double sync_err_sum_ = 0;
    uint64_t sync_err_n_ = 0;
    double recon_ns_ = 0;
    uint64_t recon_n_ = 0;
};

}  // namespace ks
