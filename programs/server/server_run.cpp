#include "programs/server/server_run.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "programs/testbench/stats_line.h"

namespace ks {

std::atomic<int> g_server_signal{0};

namespace {

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* signal_name() { return g_server_signal == SIGINT ? "SIGINT" : "SIGTERM"; }

std::chrono::steady_clock::duration seconds(double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

std::optional<int> learn_agones_address(ServerOptions& o, uint16_t agones_port, spdlog::logger& log) {
    // Under Agones the address clients are sent to (and connect tokens name) is the node's and a
    // port allocated for the GameServer: the SDK knows it once the pod is scheduled.
    ops::AgonesConfig ac;
    ac.port = agones_port;
    const double wait_s = 10.0;
    log.info("agones: asking the SDK on {}:{} for the GameServer's address (at most {:.0f} s)", ac.host, ac.port, wait_s);
    std::string why;
    const std::optional<std::string> address = ops::fetch_agones_public_address(ac, wait_s, &why, [] { return g_server_signal != 0; });
    if (!address && g_server_signal) {
        log.info("{} before serving: exiting", signal_name());
        return 0;
    }
    if (!address) {
        log.error("cannot learn the public address connect tokens must name from the Agones SDK within {:.0f} s ({}); "
                  "set --public-address ADDRESS:PORT (KINESYNC_PUBLIC_ADDRESS)", wait_s, why);
        return 1;
    }
    o.sc.public_address = *address;
    log.info("agones: public address {} (the GameServer's status.address and port)", o.sc.public_address);
    return std::nullopt;
}

ServerRun::ServerRun(ServerOptions& o, std::shared_ptr<spdlog::logger> log, std::optional<uint16_t> agones_port)
    : o_(o), log_(std::move(log)), agones_port_(agones_port) {
    probes_.unhealthy = [this] { return unhealthy(); };
    probes_.unready = [this] { return unready(); };
    probes_.metrics = [this] { return metrics(); };
    asio::error_code ec;
    const asio::ip::address bind_address = asio::ip::make_address(o_.sc.bind, ec);
    insecure_public_ = o_.sc.network && !o_.sc.private_key && o_.sc.insecure_dev && o_.sc.insecure_dev_public &&
                       !(!ec && bind_address.is_loopback());
}

std::optional<int> ServerRun::open() {
    try {
        lib_ = std::make_unique<ClipLibrary>(o_.clips.empty() ? builtin_clip_library(o_.lo.rig) : load_clip_library(o_.clips, o_.lo));
    } catch (const std::exception& e) {
        log_->error("cannot load clips: {}", e.what());
        return 1;
    }
    for (const LoadedClip& c : lib_->clips)
        log_->info("clip {}: {} joints, {} frames at {:.0f} Hz{}", c.clip.name, c.clip.joints(), c.clip.frames, 1.0 / c.clip.frame_dt,
                   c.dropped_first_frame ? " (leading reference frame dropped)" : "");
    world_ = std::make_unique<World>(*lib_, o_.wc);
    // The product: a stream server (kinesync/server/stream_server.h) that the simulated world
    // drives like a game would, with its network I/O on a thread of its own.
    try {
        server_ = std::make_unique<StreamServer>(o_.sc);
    } catch (const std::exception& e) {
        log_->error("{}", e.what());
        return 1;
    }
    streamer_ = std::make_unique<WorldStreamer>(*world_, *server_);
    streamer_->set_look_ahead(o_.look_ahead_s, std::max(1, int(std::lround(o_.wc.tick_hz / o_.sc.snapshot_hz))), !o_.no_network);
    streamer_->set_decision_restart(o_.decision_restart_s);
    return std::nullopt;
}

int ServerRun::run_offline() {
    if (o_.http_port) log_->warn("--http-port is ignored with --no-network");
    const auto wall0 = std::chrono::steady_clock::now();
    const uint64_t ticks = uint64_t(double(o_.duration) * double(o_.wc.tick_hz));
    uint64_t i = 0;
    for (; i < ticks && !g_server_signal; ++i) streamer_->step();
    const int rc = i < ticks ? drain(signal_name(), std::chrono::steady_clock::now()) : finish();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    log_->info("offline: {} ticks ({:.1f} s simulated) of {} characters in {:.2f} s ({:.0f}x real time){}", ticks, o_.duration,
               o_.wc.characters, wall, o_.duration / std::max(wall, 1e-9), o_.record.empty() ? "" : ", recorded to " + o_.record);
    return rc;
}

// Health: ticking, the last tick recent, and the network thread keeping up with the ticks.
std::string ServerRun::unhealthy() const {
    const double stall_s = std::max(1.0, 2.0 / double(o_.wc.tick_hz));
    if (state_.draining) return "draining";
    if (!state_.ticking) return "not ticking yet";
    const double since = double(steady_ns() - state_.last_step_ns) * 1e-9;
    if (since > stall_s) return fmt::format("tick loop stalled: last tick {:.1f} s ago", since);
    const uint32_t published = server_->stats().tick, stepped = state_.stepped;  // published first: it trails
    const double behind = double(stepped) - double(published);
    if (behind > std::max(2.0, stall_s * double(o_.wc.tick_hz)))
        return fmt::format("network thread stalled: {:.0f} ticks behind the tick loop", behind);
    return {};
}

std::string ServerRun::unready() const {
    if (state_.draining) return "draining";
    return state_.ticking ? std::string() : std::string("starting");
}

ops::MetricsSnapshot ServerRun::metrics() const {
    const StreamServerStats st = server_->stats();
    ops::MetricsSnapshot m;
    m.net = st.net;
    m.ticks = st.tick;
    m.missed_ticks = state_.missed;
    m.recording_frames_dropped = st.recording_frames_dropped;
    m.recording_queue_bytes = st.recording_queue_bytes;
    m.ticks_not_published = st.ticks_not_published;
    m.clients = st.clients.size();
    m.client_reports = st.clients;
    m.characters = st.characters;
    m.tick_p50_s = state_.tick_p50_s;
    m.tick_p99_s = state_.tick_p99_s;
    m.healthy = unhealthy().empty();
    m.ready = unready().empty();
    m.draining = state_.draining;
    m.version = KS_VERSION;
    return m;
}

std::optional<int> ServerRun::start_ops() {
    if (o_.http_port) {
        ops::HttpEndpointConfig hc;
        hc.bind = o_.http_bind;
        hc.port = uint16_t(o_.http_port);
        try {
            http_ = std::make_unique<ops::HttpEndpoint>(
                hc, [this](std::string_view m, std::string_view p) { return ops::ops_response(m, p, probes_); });
        } catch (const std::exception& e) {
            log_->error("{}", e.what());
            return 1;
        }
        log_->info("http: /healthz /readyz /metrics on {}:{}", o_.http_bind, http_->port());
    }
    state_.last_step_ns = steady_ns();
    state_.ticking = true;
    if (agones_port_) {
        ops::AgonesConfig ac;
        ac.port = *agones_port_;
        agones_ = std::make_unique<ops::AgonesSdk>(ac, [this] { return unhealthy().empty(); });
        log_->info("agones: SDK on 127.0.0.1:{} (ready now, health every {:.0f} s)", ac.port, ac.health_every_s);
    }
    return std::nullopt;
}

void ServerRun::stats_line(const char* when) {
    double p50 = 0, p99 = 0;
    server_->take_tick_times(p50, p99);
    state_.tick_p50_s = p50 * 1e-6;
    state_.tick_p99_s = p99 * 1e-6;
    const StreamServerStats st = server_->stats();
    ServerStatsFigures f{st.tick, st.characters, p50, p99, missed_, st.net.malformed, st.net.refused};
    f.malformed_by_reason = st.net.malformed_by_reason;
    f.tokens_refused = st.net.tokens_refused;
    f.unauthenticated = st.net.unauthenticated;
    f.forged = st.net.forged;
    f.replayed = st.net.replayed;
    f.rate_limited = st.net.rate_limited;
    for (uint64_t n : st.net.admission_limited) f.admission_limited += n;
    if (insecure_public_)
        log_->warn("{} | INSECURE: dev mode on {}, anyone can connect, spoof and read", stats_summary_line(when, f, st.clients), o_.sc.bind);
    else
        log_->info("{}", stats_summary_line(when, f, st.clients));
    if (log_->should_log(spdlog::level::debug))
        for (const net::ClientReport& c : st.clients) log_->debug("{}: {}", when, client_stats_line(c));
}

int ServerRun::serve() {
    log_->info("serving {} characters on {}:{} ({})", o_.wc.characters, o_.sc.bind, server_->port(),
               o_.sc.private_key ? "connect tokens required, sessions sealed" : "dev mode: no authentication");
    if (const auto rc = start_ops()) return *rc;
    const uint64_t ticks = o_.duration > 0 ? uint64_t(double(o_.duration) * double(o_.wc.tick_hz)) : UINT64_MAX;
    // A drift-free clock: tick n is due at start + n / tick_hz, whatever the previous ones cost.
    const auto period = std::chrono::duration<double>(1.0 / double(o_.wc.tick_hz));
    const auto start = std::chrono::steady_clock::now();
    auto next_stats = start + seconds(o_.stats_every);
    const char* why = "duration reached";
    for (uint64_t n = 1; n <= ticks; ++n) {
        const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * double(n));
        // In steps of at most 50 ms, so a signal is seen at once whatever the tick rate.
        for (auto now = std::chrono::steady_clock::now(); now < due && !g_server_signal; now = std::chrono::steady_clock::now())
            std::this_thread::sleep_until(std::min(due, now + std::chrono::milliseconds(50)));
        if (g_server_signal) {
            why = signal_name();
            break;
        }
        // Late by more than a tick: this one is counted once as missed (it still runs).
        if (std::chrono::steady_clock::now() - due > period) state_.missed = ++missed_;
        streamer_->step();
        state_.stepped = uint32_t(n);
        state_.last_step_ns = steady_ns();
        if (std::chrono::steady_clock::now() >= next_stats) {
            stats_line("stats");
            next_stats += seconds(o_.stats_every);
        }
    }
    const auto drain_start = std::chrono::steady_clock::now();
    state_.draining = true;
    log_->info("shutting down ({}): draining, at most {} s", why, o_.drain_grace);
    stats_line("final");
    return drain(why, drain_start);
}

int ServerRun::finish() {
    try {
        server_->close();
    } catch (const std::exception& e) {
        log_->error("{}", e.what());
        return 1;
    }
    return 0;
}

// The shutdown: readiness off, the Agones sidecar told, then close() (goodbye to every client,
// recording finalised) on a thread of its own, so a close that hangs (a stuck disk, a stuck
// network thread) cannot keep the process past the grace time.
int ServerRun::drain(const char* why, std::chrono::steady_clock::time_point since) {
    state_.draining = true;
    const auto deadline = since + seconds(o_.drain_grace);
    std::promise<int> closed;
    std::future<int> closed_f = closed.get_future();
    std::thread closer([&] { closed.set_value(finish()); });
    if (agones_) agones_->shutdown();  // at most its request timeout (1 s)
    if (closed_f.wait_until(deadline) != std::future_status::ready) {
        log_->error("drain ({}) did not finish within --drain-grace {} s (the network thread or the recording is stuck); exiting", why,
                    o_.drain_grace);
        log_->flush();
        std::fflush(stdout);
        std::_Exit(1);
    }
    closer.join();
    const int rc = closed_f.get();
    http_.reset();  // before the probes it calls go away
    agones_.reset();
    log_->info("drained in {:.0f} ms ({}): {} ticks, exit {}",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count(), why, server_->tick(), rc);
    return rc;
}

}  // namespace ks
