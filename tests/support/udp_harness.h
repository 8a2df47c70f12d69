#pragma once
// Test harness: a real kinesync server on loopback (its own io_context thread, any free port)
// and a real ClientSession over a non-blocking UDP socket.

#include <asio.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <spdlog/spdlog.h>

#include "client/session.h"
#include "server/net/server.h"
#include "server/sim/record_world.h"

namespace ks::test {

inline std::shared_ptr<spdlog::logger> quiet_server_logger() {
    auto log = spdlog::get("server");
    if (!log) {
        log = std::make_shared<spdlog::logger>("server");  // no sinks: silent in tests
        spdlog::register_logger(log);
    }
    return log;
}

struct ServerHarness {
    ClipLibrary lib;
    std::unique_ptr<World> world;
    asio::io_context io;
    std::unique_ptr<net::Server> server;
    std::thread thread;
    std::mutex frames_mutex;
    std::map<uint32_t, RecordedFrame> frames;  // every tick the server stepped
    std::unique_ptr<RecordingWriter> recorder;

    ServerHarness(WorldConfig wc, net::ServerConfig sc, const std::string& record_path = {}, uint16_t port = 0)
        : lib(builtin_clip_library()) {
        quiet_server_logger();
        world = std::make_unique<World>(lib, wc);
        if (!record_path.empty()) recorder = std::make_unique<RecordingWriter>(record_path, make_recording_header(*world, sc.snapshot_hz, "test"));
        sc.port = port;
        sc.bind = "127.0.0.1";
        server = std::make_unique<net::Server>(io, *world, sc, [this](const World& w) {
            RecordedFrame f = capture_frame(w);
            if (recorder) recorder->write(f);
            std::lock_guard<std::mutex> lock(frames_mutex);
            frames[f.tick] = std::move(f);
        });
        server->start();
        thread = std::thread([this] { io.run(); });
    }
    uint16_t port() const { return server->port(); }
    // Clients the server holds now (asked on the server's own thread).
    size_t client_count() {
        std::promise<size_t> p;
        std::future<size_t> f = p.get_future();
        asio::post(io, [&] { p.set_value(server->clients().size()); });
        return f.get();
    }
    // Stops the server on its own thread and joins; stats are safe to read afterwards.
    void stop() {
        if (!thread.joinable()) return;
        asio::post(io, [this] { server->stop(); });
        thread.join();
        if (recorder) recorder->close();
    }
    ~ServerHarness() { stop(); }
};

struct UdpClient {
    asio::io_context io;
    asio::ip::udp::socket socket{io};
    asio::ip::udp::endpoint server;
    ClientSession session;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

    explicit UdpClient(uint16_t port, ClientSessionConfig cfg = {}) : session(cfg) {
        socket.open(asio::ip::udp::v4());
        socket.bind({asio::ip::make_address("127.0.0.1"), 0});
        socket.non_blocking(true);
        server = {asio::ip::make_address("127.0.0.1"), port};
    }
    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
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
            session.on_datagram(std::span<const uint8_t>(buf.data(), n), now());
        }
        session.update(now());
    }
    // Pumps until pred() or timeout (seconds).
    template <class Pred>
    bool run_until(Pred pred, double timeout_s, std::vector<std::vector<uint8_t>>* sent_log = nullptr) {
        const double end = now() + timeout_s;
        while (now() < end) {
            pump(sent_log);
            if (pred()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return pred();
    }
};

}  // namespace ks::test
