// kinesync-server: the headless authoritative server (or, with --no-network, an offline run that
// only records).
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/sim/world_streamer.h"
#include "server/stream_server.h"
#include "server/tool/stats_line.h"
#include "common/cli/cli_common.h"

using namespace ks;

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal = sig; }

std::string join_args(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
    return s;
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
    int port = sc.port;  // an int, so 99999 or -1 is refused by the range check with its value named
    app.add_option("--characters", wc.characters, "number of characters")->capture_default_str()->check(CLI::Range(1, 4096));
    app.add_option("--tick-hz", wc.tick_hz, "simulation ticks per second")->capture_default_str()->check(CLI::Range(1.0f, 1000.0f));
    app.add_option("--clips", clips, "BVH files or folders to play (default: the built-in procedural motion)");
    app.add_flag("--keep-first-frame", lo.keep_first_frame,
                 "keep a leading T-pose/rest frame (by default it is dropped when frame 0 differs from frame 1 by more than 0.5 rad and 5x the clip's usual frame-to-frame change)");
    app.add_option("--units", lo.metres_per_unit, "metres per BVH unit for every clip (default: detected per file)");
    app.add_option("--transition", transition, "how clip switches blend: deadblend or inertialize")
        ->capture_default_str()->check(CLI::IsMember({"deadblend", "inertialize"}));
    app.add_option("--blend-time", wc.controller.blend_time, "transition duration, seconds")->capture_default_str();
    app.add_option("--teleport-every", wc.controller.teleport_every_s, "teleport each character about every S seconds (0: never)")->capture_default_str();
    app.add_option("--reset-every", wc.controller.reset_every_s, "reset each character into another clip about every S seconds (0: never)")->capture_default_str();
    app.add_option("--seed", wc.seed, "seed for every random choice")->capture_default_str();
    app.add_option("--bind", sc.bind, "address to bind (a non-loopback address needs --key-file or --insecure-dev)")->capture_default_str();
    std::string key_file;
    app.add_option("--key-file", key_file,
                   "the private key shared with the game's backend (kinesync-token keygen): only clients with a connect token get in, "
                   "every session packet is sealed; the key may also come as 64 hex digits in KINESYNC_PRIVATE_KEY");
    app.add_option("--public-address", sc.public_address,
                   "ADDRESS:PORT connect tokens must name (default: --bind and the port; needed when binding 0.0.0.0)");
    app.add_flag("--insecure-dev", sc.insecure_dev,
                 "serve without connect tokens or encryption even on a non-loopback address (anyone can connect or spoof)");
    app.add_option("--port", port, "UDP port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
    app.add_option("--snapshot-hz", sc.snapshot_hz, "snapshots per second to each client")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--bandwidth", bandwidth_kbps, "per-client budget, kbit/s of UDP payload")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--max-clients", sc.max_clients, "most clients at once")->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_option("--timeout", sc.timeout_s, "drop a client silent for this many seconds")->capture_default_str();
    app.add_option("--record", record, "record the session to this file (zstd chunks; a crash keeps all complete chunks)");
    app.add_flag("--no-network", no_network, "offline: run the simulation as fast as possible, no sockets (needs --duration)");
    app.add_option("--duration", duration, "stop after this many seconds of simulated time (0: run until SIGINT/SIGTERM)")->capture_default_str();
    app.add_option("--stats-every", stats_every, "seconds between stats lines")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str()
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    cli::add_version_flag(app, "kinesync-server", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;
    sc.port = uint16_t(port);

    auto log = spdlog::stdout_color_mt("server");
    spdlog::set_level(spdlog::level::from_str(log_level));
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
    sc.bandwidth_bps = bandwidth_kbps * 1000.0f;
    sc.network = !no_network;
    sc.tick_hz = wc.tick_hz;
    sc.record_path = record;
    sc.record_scenario = join_args(argc, argv);
    sc.record_seed = wc.seed;
    try {
        if (!key_file.empty()) sc.private_key = net::read_key_file(key_file);
        else if (const char* hex = std::getenv("KINESYNC_PRIVATE_KEY"); hex && *hex) {
            sc.private_key = net::key_from_hex(hex);
            if (!sc.private_key) throw std::runtime_error("KINESYNC_PRIVATE_KEY: not a key (expected 64 hex digits)");
        }
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 2;
    }

    std::unique_ptr<ClipLibrary> lib;
    try {
        lib = std::make_unique<ClipLibrary>(clips.empty() ? builtin_clip_library() : load_clip_library(clips, lo));
    } catch (const std::exception& e) {
        log->error("cannot load clips: {}", e.what());
        return 1;
    }
    for (const LoadedClip& c : lib->clips)
        log->info("clip {}: {} joints, {} frames at {:.0f} Hz{}", c.clip.name, c.clip.joints(), c.clip.frames, 1.0 / c.clip.frame_dt,
                  c.dropped_first_frame ? " (leading reference frame dropped)" : "");
    World world(*lib, wc);

    // The product: a stream server (server/stream_server.h) that the simulated world drives like a
    // game would, with its network I/O on a thread of its own.
    std::unique_ptr<StreamServer> server;
    try {
        server = std::make_unique<StreamServer>(sc);
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 1;
    }
    WorldStreamer streamer(world, *server);
    auto finish = [&]() -> int {
        try {
            server->close();
        } catch (const std::exception& e) {
            log->error("{}", e.what());
            return 1;
        }
        return 0;
    };
    const auto wall0 = std::chrono::steady_clock::now();
    const uint64_t ticks = duration > 0 ? uint64_t(double(duration) * double(wc.tick_hz)) : UINT64_MAX;

    if (no_network) {
        for (uint64_t i = 0; i < ticks; ++i) streamer.step();
        const int rc = finish();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        log->info("offline: {} ticks ({:.1f} s simulated) of {} characters in {:.2f} s ({:.0f}x real time){}", ticks, duration,
                  wc.characters, wall, duration / std::max(wall, 1e-9), record.empty() ? "" : ", recorded to " + record);
        return rc;
    }

    log->info("serving {} characters on {}:{} ({})", wc.characters, sc.bind, server->port(),
              sc.private_key ? "connect tokens required, sessions sealed" : "dev mode: no authentication");
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    uint64_t missed = 0;
    auto stats_line = [&](const char* when) {
        double p50 = 0, p99 = 0;
        server->take_tick_times(p50, p99);
        const StreamServerStats st = server->stats();
        ServerStatsFigures f{st.tick, st.characters, p50, p99, missed, st.net.malformed, st.net.refused};
        f.malformed_by_reason = st.net.malformed_by_reason;
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
        std::this_thread::sleep_until(due);
        if (g_signal) {
            why = g_signal == SIGINT ? "SIGINT" : "SIGTERM";
            break;
        }
        // Late by more than a tick: this one is counted once as missed (it still runs).
        if (std::chrono::steady_clock::now() - due > period) ++missed;
        streamer.step();
        if (std::chrono::steady_clock::now() >= next_stats) {
            stats_line("stats");
            next_stats += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(stats_every));
        }
    }
    log->info("shutting down ({})", why);
    stats_line("final");
    return finish();
}
