// kinesync-server: the headless authoritative server (or, with --no-network, an offline run that
// only records).
//
// For an orchestrator: every option also comes from KINESYNC_<OPTION> (flags win); --http-port
// serves /healthz, /readyz and /metrics (programs/server/ops/); with AGONES_SDK_HTTP_PORT set it tells the
// Agones sidecar ready, healthy and shutdown (and, with a key and no --public-address, asks it for
// the GameServer's address and port, which connect tokens name); SIGTERM/SIGINT drains (stop ticking, goodbye to every
// client, recording finalised) and exits 0 within --drain-grace seconds, or 1 if it cannot.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "programs/server/ops/agones_sdk.h"
#include "programs/server/ops/http_endpoint.h"
#include "programs/server/ops/ops_http.h"
#include "programs/server/sim/world_streamer.h"
#include <kinesync/server/stream_server.h>
#include "programs/testbench/stats_line.h"
#include "programs/testbench/cli_common.h"

using namespace ks;

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal = sig; }

std::string join_args(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
    return s;
}

// Every option (but --help and --version) also comes from the environment: --max-clients from
// KINESYNC_MAX_CLIENTS. The command line wins.
void add_env_names(CLI::App& app) {
    for (CLI::Option* opt : app.get_options()) {
        if (opt == app.get_help_ptr() || opt == app.get_help_all_ptr() || opt == app.get_version_ptr() || opt->get_lnames().empty())
            continue;
        std::string name = "KINESYNC_";
        for (char c : opt->get_lnames().front()) name += c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
        opt->envname(name);
    }
}

// The KINESYNC_* settings in effect, "NAME=VALUE ..." (for the recording's scenario, next to the
// command line).
std::string env_settings(const CLI::App& app) {
    std::string s;
    for (const CLI::Option* opt : app.get_options())
        if (const std::string name = opt->get_envname(); !name.empty())
            if (const char* v = std::getenv(name.c_str()); v && *v) s += (s.empty() ? "" : " ") + name + "=" + v;
    return s;
}

// What the health, readiness and metrics probes read, written by the tick loop.
struct OpsState {
    std::atomic<bool> ticking{false}, draining{false};
    std::atomic<int64_t> last_step_ns{0};  // steady_clock
    std::atomic<uint32_t> stepped{0};      // ticks handed to the server
    std::atomic<uint64_t> missed{0};
    std::atomic<double> tick_p50_s{0}, tick_p99_s{0};  // over the last stats interval
};

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-server: the headless authoritative animation server.\n"
                 "Plays character animation with velocities propagated through every op and streams delta-compressed\n"
                 "kform snapshots over UDP; optionally records the session."};
    WorldConfig wc;
    StreamServerConfig sc;
    std::vector<std::string> clips;
    ClipLoadOptions lo;
    std::string transition = "deadblend", record, log_level = "info";
    float bandwidth_kbps = 256.0f, duration = 0.0f, stats_every = 5.0f;
    bool no_network = false;
    int record_queue_mb = 64;
    double look_ahead_s = 0.25;
    std::string decisions = "standard";
    int port = sc.port;  // an int, so 99999 or -1 is refused by the range check with its value named
    int http_port = 0;
    std::string http_bind = "127.0.0.1";
    double drain_grace = 2.0;
    uint64_t recv_buffer = sc.receive_buffer_bytes;
    app.add_option("--characters", wc.characters, "number of characters")->capture_default_str()->check(CLI::Range(1, 4096));
    app.add_option("--tick-hz", wc.tick_hz, "simulation ticks per second")->capture_default_str()->check(CLI::Range(1.0f, 1000.0f));
    app.add_option("--clips", clips, "BVH files or folders to play (default: the built-in procedural motion)");
    app.add_flag("--keep-first-frame", lo.keep_first_frame,
                 "keep a leading T-pose/rest frame (by default it is dropped when frame 0 differs from frame 1 by more than 0.5 rad and 5x the clip's usual frame-to-frame change)");
    app.add_option("--rig", lo.rig, "grow every clip's body into a test rig: game (about 250 joints: fingers, twists, a face) or stress (1,000 joints)")
        ->check(CLI::IsMember({"game", "stress"}));
    app.add_option("--units", lo.metres_per_unit, "metres per BVH unit for every clip (default: detected per file)");
    app.add_option("--transition", transition, "how clip switches blend: deadblend or inertialize")
        ->capture_default_str()->check(CLI::IsMember({"deadblend", "inertialize"}));
    app.add_option("--blend-time", wc.controller.blend_time, "transition duration, seconds")->capture_default_str();
    app.add_option("--decisions", decisions,
                   "how often each character decides (a new clip and speed): standard (every 3 to 8 s), decisive (every 1 to 2 s: "
                   "the recording that tests a look-ahead where it is often wrong) or none")
        ->capture_default_str()
        ->check(CLI::IsMember({"standard", "decisive", "none"}));
    app.add_option("--look-ahead", look_ahead_s,
                   "seconds of look-ahead computed per character on every snapshot tick, sent to clients and recorded: the pose "
                   "that far ahead if nothing were decided meanwhile (with clients connected the horizon follows their round "
                   "trips, 0.1 to 0.5 s; this is the horizon without them); 0: none")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 2.0));
    app.add_option("--teleport-every", wc.controller.teleport_every_s, "teleport each character about every S seconds (0: never)")->capture_default_str();
    app.add_option("--reset-every", wc.controller.reset_every_s, "reset each character into another clip about every S seconds (0: never)")->capture_default_str();
    app.add_option("--seed", wc.seed, "seed for every random choice")->capture_default_str();
    app.add_option("--bind", sc.bind, "address to bind (a non-loopback address needs --key-file, or --insecure-dev --insecure-dev-public)")->capture_default_str();
    std::string key_file;
    app.add_option("--key-file", key_file,
                   "the private key shared with the game's backend (kinesync-token keygen): only clients with a connect token get in, "
                   "every session packet is sealed; the key may also come as 64 hex digits in KINESYNC_PRIVATE_KEY");
    app.add_option("--public-address", sc.public_address,
                   "ADDRESS:PORT connect tokens must name (default: under Agones, the GameServer's address and port from the SDK; "
                   "else --bind and the port; needed when binding 0.0.0.0)");
    app.add_flag("--insecure-dev", sc.insecure_dev,
                 "serve without connect tokens or encryption even on a non-loopback address (anyone can connect or spoof); "
                 "needs --insecure-dev-public as well");
    app.add_flag("--insecure-dev-public", sc.insecure_dev_public,
                 "yes, really: serve unauthenticated on a non-loopback address (every stats line then warns)");
    app.add_option("--port", port, "UDP port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
    app.add_option("--snapshot-hz", sc.snapshot_hz, "snapshots per second to each client")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--bandwidth", bandwidth_kbps, "per-client budget, kbit/s of UDP payload")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--max-clients", sc.max_clients, "most clients at once")->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_option("--timeout", sc.timeout_s, "drop a client silent for this many seconds")->capture_default_str();
    app.add_option("--record", record, "record the session to this file (zstd chunks; a crash keeps all complete chunks)");
    app.add_option("--record-queue-mb", record_queue_mb,
                   "MiB of ticks that may wait for the recording's disk; beyond, ticks are left out of the recording (counted, "
                   "logged, marked in the file), never stalling the stream")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_flag("--no-network", no_network, "offline: run the simulation as fast as possible, no sockets (needs --duration)");
    app.add_option("--duration", duration, "stop after this many seconds of simulated time (0: run until SIGINT/SIGTERM)")->capture_default_str();
    app.add_option("--stats-every", stats_every, "seconds between stats lines")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str()
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    app.add_option("--recv-buffer", recv_buffer, "UDP receive buffer, bytes (4MiB, 512KiB, ...; 0: the kernel's default; Linux caps it at net.core.rmem_max)")
        ->capture_default_str()->transform(CLI::AsSizeValue(false));
    app.add_option("--http-port", http_port, "TCP port of /healthz, /readyz and /metrics (0: none)")->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("--http-bind", http_bind, "address the HTTP port binds")->capture_default_str();
    app.add_option("--drain-grace", drain_grace, "on SIGTERM/SIGINT, seconds to say goodbye to clients and finalise the recording before giving up (exit 1)")
        ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
    cli::add_version_flag(app, "kinesync-server", KS_VERSION);
    add_env_names(app);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;
    sc.port = uint16_t(port);
    sc.receive_buffer_bytes = size_t(recv_buffer);

    auto log = spdlog::stdout_color_mt("server");
    spdlog::set_level(spdlog::level::from_str(log_level));
    // From here on a signal drains (clip loading included: the loop below sees it at once).
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::optional<uint16_t> agones_port;
    try {
        agones_port = ops::AgonesSdk::port_from_env();
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 2;
    }
    if (no_network && duration <= 0.0f) {
        log->error("--no-network needs --duration S");
        return 2;
    }
    // Rates travel as whole numbers on the wire (and snapshots go out every n-th tick).
    if (wc.tick_hz != std::floor(wc.tick_hz) || sc.snapshot_hz != std::floor(sc.snapshot_hz) ||
        std::fmod(wc.tick_hz, sc.snapshot_hz) != 0.0f) {
        log->error("--tick-hz {} and --snapshot-hz {}: both must be whole numbers, the snapshot rate dividing the tick rate",
                   wc.tick_hz, sc.snapshot_hz);
        return 2;
    }
    wc.controller.transition = transition == "inertialize" ? TransitionKind::Inertialization : TransitionKind::DeadBlending;
    if (decisions == "decisive") wc.controller.switch_min_s = 1.0f, wc.controller.switch_max_s = 2.0f;
    if (decisions == "none") wc.controller.switch_min_s = wc.controller.switch_max_s = 1e9f;
    sc.bandwidth_bps = bandwidth_kbps * 1000.0f;
    sc.network = !no_network;
    sc.tick_hz = wc.tick_hz;
    sc.record_path = record;
    sc.record_queue_bytes = size_t(record_queue_mb) << 20;
    sc.record_scenario = join_args(argc, argv);
    if (const std::string env = env_settings(app); !env.empty()) sc.record_scenario += " (environment: " + env + ")";
    sc.record_seed = wc.seed;
    try {
        if (!key_file.empty()) sc.private_key = net::read_key_file(key_file);
        else if (const char* hex = std::getenv("KINESYNC_PRIVATE_KEY"); hex && *hex) {
            std::string_view text(hex);  // a Secret made from a key file keeps its newline
            while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
            while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
            sc.private_key = net::key_from_hex(text);
            if (!sc.private_key) throw std::runtime_error("KINESYNC_PRIVATE_KEY: not a key (expected 64 hex digits)");
        }
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 2;
    }
    // Under Agones the address clients are sent to (and connect tokens name) is the node's and a
    // port allocated for the GameServer: the SDK knows it once the pod is scheduled.
    if (sc.private_key && agones_port && sc.public_address.empty() && !no_network) {
        ops::AgonesConfig ac;
        ac.port = *agones_port;
        const double wait_s = 10.0;
        log->info("agones: asking the SDK on {}:{} for the GameServer's address (at most {:.0f} s)", ac.host, ac.port, wait_s);
        std::string why;
        const std::optional<std::string> address =
            ops::fetch_agones_public_address(ac, wait_s, &why, [] { return g_signal != 0; });
        if (!address && g_signal) {
            log->info("{} before serving: exiting", g_signal == SIGINT ? "SIGINT" : "SIGTERM");
            return 0;
        }
        if (!address) {
            log->error("cannot learn the public address connect tokens must name from the Agones SDK within {:.0f} s ({}); "
                       "set --public-address ADDRESS:PORT (KINESYNC_PUBLIC_ADDRESS)", wait_s, why);
            return 1;
        }
        sc.public_address = *address;
        log->info("agones: public address {} (the GameServer's status.address and port)", sc.public_address);
    }

    std::unique_ptr<ClipLibrary> lib;
    try {
        lib = std::make_unique<ClipLibrary>(clips.empty() ? builtin_clip_library(lo.rig) : load_clip_library(clips, lo));
    } catch (const std::exception& e) {
        log->error("cannot load clips: {}", e.what());
        return 1;
    }
    for (const LoadedClip& c : lib->clips)
        log->info("clip {}: {} joints, {} frames at {:.0f} Hz{}", c.clip.name, c.clip.joints(), c.clip.frames, 1.0 / c.clip.frame_dt,
                  c.dropped_first_frame ? " (leading reference frame dropped)" : "");
    World world(*lib, wc);

    // The product: a stream server (kinesync/server/stream_server.h) that the simulated world drives like a
    // game would, with its network I/O on a thread of its own.
    std::unique_ptr<StreamServer> server;
    try {
        server = std::make_unique<StreamServer>(sc);
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 1;
    }
    WorldStreamer streamer(world, *server);
    streamer.set_look_ahead(look_ahead_s, std::max(1, int(std::lround(wc.tick_hz / sc.snapshot_hz))), !no_network);
    OpsState state;
    std::unique_ptr<ops::HttpEndpoint> http;
    std::unique_ptr<ops::AgonesSdk> agones;
    auto finish = [&]() -> int {
        try {
            server->close();
        } catch (const std::exception& e) {
            log->error("{}", e.what());
            return 1;
        }
        return 0;
    };
    // The shutdown: readiness off, the Agones sidecar told, then close() (goodbye to every
    // client, recording finalised) on a thread of its own, so a close that hangs (a stuck disk,
    // a stuck network thread) cannot keep the process past the grace time.
    auto drain = [&](const char* why, std::chrono::steady_clock::time_point since) -> int {
        state.draining = true;
        const auto deadline = since + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(drain_grace));
        std::promise<int> closed;
        std::future<int> closed_f = closed.get_future();
        std::thread closer([&] { closed.set_value(finish()); });
        if (agones) agones->shutdown();  // at most its request timeout (1 s)
        if (closed_f.wait_until(deadline) != std::future_status::ready) {
            log->error("drain ({}) did not finish within --drain-grace {} s (the network thread or the recording is stuck); exiting", why,
                       drain_grace);
            log->flush();
            std::fflush(stdout);
            std::_Exit(1);
        }
        closer.join();
        const int rc = closed_f.get();
        http.reset();  // before the probes it calls go out of scope
        agones.reset();
        log->info("drained in {:.0f} ms ({}): {} ticks, exit {}",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count(), why, server->tick(), rc);
        return rc;
    };
    const auto wall0 = std::chrono::steady_clock::now();
    const uint64_t ticks = duration > 0 ? uint64_t(double(duration) * double(wc.tick_hz)) : UINT64_MAX;

    if (no_network) {
        if (http_port) log->warn("--http-port is ignored with --no-network");
        uint64_t i = 0;
        for (; i < ticks && !g_signal; ++i) streamer.step();
        const int rc = i < ticks ? drain(g_signal == SIGINT ? "SIGINT" : "SIGTERM", std::chrono::steady_clock::now()) : finish();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        log->info("offline: {} ticks ({:.1f} s simulated) of {} characters in {:.2f} s ({:.0f}x real time){}", ticks, duration,
                  wc.characters, wall, duration / std::max(wall, 1e-9), record.empty() ? "" : ", recorded to " + record);
        return rc;
    }

    log->info("serving {} characters on {}:{} ({})", wc.characters, sc.bind, server->port(),
              sc.private_key ? "connect tokens required, sessions sealed" : "dev mode: no authentication");

    // Health: ticking, the last tick recent, and the network thread keeping up with the ticks.
    const double stall_s = std::max(1.0, 2.0 / double(wc.tick_hz));
    auto unhealthy = [&]() -> std::string {
        if (state.draining) return "draining";
        if (!state.ticking) return "not ticking yet";
        const double since = double(steady_ns() - state.last_step_ns) * 1e-9;
        if (since > stall_s) return fmt::format("tick loop stalled: last tick {:.1f} s ago", since);
        const uint32_t published = server->stats().tick, stepped = state.stepped;  // published first: it trails
        const double behind = double(stepped) - double(published);
        if (behind > std::max(2.0, stall_s * double(wc.tick_hz)))
            return fmt::format("network thread stalled: {:.0f} ticks behind the tick loop", behind);
        return {};
    };
    auto unready = [&]() -> std::string {
        if (state.draining) return "draining";
        return state.ticking ? std::string() : std::string("starting");
    };
    ops::OpsProbes probes;
    probes.unhealthy = unhealthy;
    probes.unready = unready;
    probes.metrics = [&] {
        const StreamServerStats st = server->stats();
        ops::MetricsSnapshot m;
        m.net = st.net;
        m.ticks = st.tick;
        m.missed_ticks = state.missed;
        m.recording_frames_dropped = st.recording_frames_dropped;
        m.recording_queue_bytes = st.recording_queue_bytes;
        m.ticks_not_published = st.ticks_not_published;
        m.clients = st.clients.size();
        m.characters = st.characters;
        m.tick_p50_s = state.tick_p50_s;
        m.tick_p99_s = state.tick_p99_s;
        m.healthy = unhealthy().empty();
        m.ready = unready().empty();
        m.draining = state.draining;
        m.version = KS_VERSION;
        return m;
    };
    if (http_port) {
        ops::HttpEndpointConfig hc;
        hc.bind = http_bind;
        hc.port = uint16_t(http_port);
        try {
            http = std::make_unique<ops::HttpEndpoint>(hc, [&probes](std::string_view m, std::string_view p) { return ops::ops_response(m, p, probes); });
        } catch (const std::exception& e) {
            log->error("{}", e.what());
            return 1;
        }
        log->info("http: /healthz /readyz /metrics on {}:{}", http_bind, http->port());
    }
    state.last_step_ns = steady_ns();
    state.ticking = true;
    if (agones_port) {
        ops::AgonesConfig ac;
        ac.port = *agones_port;
        agones = std::make_unique<ops::AgonesSdk>(ac, [&unhealthy] { return unhealthy().empty(); });
        log->info("agones: SDK on 127.0.0.1:{} (ready now, health every {:.0f} s)", ac.port, ac.health_every_s);
    }

    uint64_t missed = 0;
    asio::error_code bind_ec;
    const asio::ip::address bind_address = asio::ip::make_address(sc.bind, bind_ec);
    const bool insecure_public = sc.network && !sc.private_key && sc.insecure_dev && sc.insecure_dev_public &&
                                 !(!bind_ec && bind_address.is_loopback());
    auto stats_line = [&](const char* when) {
        double p50 = 0, p99 = 0;
        server->take_tick_times(p50, p99);
        state.tick_p50_s = p50 * 1e-6;
        state.tick_p99_s = p99 * 1e-6;
        const StreamServerStats st = server->stats();
        ServerStatsFigures f{st.tick, st.characters, p50, p99, missed, st.net.malformed, st.net.refused};
        f.malformed_by_reason = st.net.malformed_by_reason;
        f.tokens_refused = st.net.tokens_refused;
        f.unauthenticated = st.net.unauthenticated;
        f.forged = st.net.forged;
        f.replayed = st.net.replayed;
        f.rate_limited = st.net.rate_limited;
        for (uint64_t n : st.net.admission_limited) f.admission_limited += n;
        if (insecure_public)
            log->warn("{} | INSECURE: dev mode on {}, anyone can connect, spoof and read", stats_summary_line(when, f, st.clients), sc.bind);
        else
            log->info("{}", stats_summary_line(when, f, st.clients));
        if (log->should_log(spdlog::level::debug))
            for (const net::ClientReport& c : st.clients) log->debug("{}: {}", when, client_stats_line(c));
    };
    // A drift-free clock: tick n is due at start + n / tick_hz, whatever the previous ones cost.
    const auto period = std::chrono::duration<double>(1.0 / double(wc.tick_hz));
    const auto start = std::chrono::steady_clock::now();
    auto next_stats = start + std::chrono::duration<double>(stats_every);
    const char* why = "duration reached";
    for (uint64_t n = 1; n <= ticks; ++n) {
        const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * double(n));
        // In steps of at most 50 ms, so a signal is seen at once whatever the tick rate.
        for (auto now = std::chrono::steady_clock::now(); now < due && !g_signal; now = std::chrono::steady_clock::now())
            std::this_thread::sleep_until(std::min(due, now + std::chrono::milliseconds(50)));
        if (g_signal) {
            why = g_signal == SIGINT ? "SIGINT" : "SIGTERM";
            break;
        }
        // Late by more than a tick: this one is counted once as missed (it still runs).
        if (std::chrono::steady_clock::now() - due > period) state.missed = ++missed;
        streamer.step();
        state.stepped = uint32_t(n);
        state.last_step_ns = steady_ns();
        if (std::chrono::steady_clock::now() >= next_stats) {
            stats_line("stats");
            next_stats += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(stats_every));
        }
    }
    const auto drain_start = std::chrono::steady_clock::now();
    state.draining = true;
    log->info("shutting down ({}): draining, at most {} s", why, drain_grace);
    stats_line("final");
    return drain(why, drain_start);
}
