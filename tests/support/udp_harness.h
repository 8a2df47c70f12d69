#pragma once
// Test harness: a real kinesync stream server on loopback (its own I/O thread, any free port)
// and a real ClientSession over a non-blocking UDP socket.

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <functional>
#include <thread>

#include "client/src/session.h"
#include "programs/server/sim/world_streamer.h"
#include <kinesync/server/stream_server.h>

#include "server/src/net/server.h"
#include "tests/support/wait.h"

namespace ks::test {

// Registers the server's logger with no sinks (silent in tests), once (udp_harness.cpp: spdlog is
// parsed there only).
void quiet_server_logger();

// The demo's world streamed by a StreamServer (its own I/O thread) on a real-time tick thread.
struct ServerHarness {
    ClipLibrary lib;
    std::unique_ptr<World> world;
    std::unique_ptr<StreamServer> server;
    std::unique_ptr<WorldStreamer> streamer;
    std::thread ticker;
    std::atomic<bool> stopping{false};
    net::ServerStats final_stats;

    // rig: "" (the built-in body), "game" or "stress" (kinesync/offline/game_rig.h).
    ServerHarness(WorldConfig wc, StreamServerConfig sc, const std::string& record_path = {}, uint16_t port = 0,
                  const std::string& rig = {})
        : lib(builtin_clip_library(rig)) {
        quiet_server_logger();
        world = std::make_unique<World>(lib, wc);
        sc.port = port;
        sc.bind = "127.0.0.1";
        sc.tick_hz = wc.tick_hz;
        sc.record_path = record_path;
        server = std::make_unique<StreamServer>(sc);
        streamer = std::make_unique<WorldStreamer>(*world, *server);
        ticker = std::thread([this, hz = double(wc.tick_hz)] {
            const auto start = std::chrono::steady_clock::now();
            for (uint64_t n = 1; !stopping; ++n) {
                std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(double(n) / hz)));
                streamer->step();
            }
        });
    }
    uint16_t port() const { return server->port(); }
    // Clients the server held at its last tick.
    size_t client_count() const { return server->stats().clients.size(); }
    // The server's counters as of its last tick (stats() once stopped).
    net::ServerStats live_stats() const { return server->stats().net; }
    // Stops ticking and closes the server (goodbyes sent, recording closed); stats() is final then.
    void stop() {
        if (!ticker.joinable()) return;
        stopping = true;
        ticker.join();
        server->close();
        final_stats = server->stats().net;
    }
    const net::ServerStats& stats() const { return final_stats; }
    ~ServerHarness() { stop(); }
};

struct UdpClient {
    asio::io_context io;
    asio::ip::udp::socket socket{io};
    asio::ip::udp::endpoint server;
    ClientSession session;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    // Optional: sees each arriving datagram first; may change it, or return false to lose it.
    std::function<bool(std::vector<uint8_t>&)> inbound;

    explicit UdpClient(uint16_t port, ClientSessionConfig cfg = {}) : session(cfg) {
        socket.open(asio::ip::udp::v4());
        socket.bind({asio::ip::make_address("127.0.0.1"), 0});
        socket.non_blocking(true);
        server = {asio::ip::make_address("127.0.0.1"), port};
    }
    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    // Moves the client's clock (its session's time) `seconds` ahead, e.g. past a timeout.
    void skip(double seconds) { t0 -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds)); }
    void send_raw(std::span<const uint8_t> bytes) {
        asio::error_code ec;
        socket.send_to(asio::buffer(bytes.data(), bytes.size()), server, 0, ec);
    }
    // One iteration: send what the session wants, read whatever arrived, run timers.
    void pump(std::vector<std::vector<uint8_t>>* sent_log = nullptr) {
        for (auto& d : session.take_outgoing()) {
            send_raw(d);
            if (sent_log) sent_log->push_back(d);
        }
        std::array<uint8_t, 2048> buf;
        for (;;) {
            asio::ip::udp::endpoint from;
            asio::error_code ec;
            const size_t n = socket.receive_from(asio::buffer(buf), from, 0, ec);
            if (ec) break;
            if (inbound) {
                std::vector<uint8_t> d(buf.begin(), buf.begin() + std::ptrdiff_t(n));
                if (inbound(d)) session.on_datagram(d, now());
                continue;
            }
            session.on_datagram(std::span<const uint8_t>(buf.data(), n), now());
        }
        session.update(now());
    }
    // Pumps until pred() or timeout (seconds).
    template <class Pred>
    bool run_until(Pred pred, double timeout_s = kDeadlineS, std::vector<std::vector<uint8_t>>* sent_log = nullptr) {
        return wait_until(pred, [&] { pump(sent_log); }, timeout_s);
    }
};

}  // namespace ks::test
