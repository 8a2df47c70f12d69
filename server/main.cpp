// kinesync-server: the headless authoritative server (or, with --no-network, an offline run that
// only records).
#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/record/recording.h"
#include "server/net/server.h"
#include "server/sim/record_world.h"
#include "server/stats_line.h"
#include "server/tool/cli_common.h"

using namespace ks;

namespace {

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
    net::ServerConfig sc;
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
    app.add_option("--bind", sc.bind, "address to bind")->capture_default_str();
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
    wc.controller.transition = transition == "inertialize" ? TransitionKind::Inertialization : TransitionKind::DeadBlending;
    sc.bandwidth_bps = bandwidth_kbps * 1000.0f;

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

    std::unique_ptr<RecordingWriter> recorder;
    if (!record.empty()) {
        try {
            recorder = std::make_unique<RecordingWriter>(record, make_recording_header(world, sc.snapshot_hz, join_args(argc, argv)));
        } catch (const std::exception& e) {
            log->error("cannot record: {}", e.what());
            return 1;
        }
    }
    const auto wall0 = std::chrono::steady_clock::now();

    if (no_network) {
        const uint32_t ticks = uint32_t(double(duration) * double(wc.tick_hz));
        for (uint32_t i = 0; i < ticks; ++i) {
            world.step();
            if (recorder) recorder->write(capture_frame(world));
        }
        if (recorder) recorder->close();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        log->info("offline: {} ticks ({:.1f} s simulated) of {} characters in {:.2f} s ({:.0f}x real time){}", ticks, duration,
                  wc.characters, wall, duration / std::max(wall, 1e-9), record.empty() ? "" : ", recorded to " + record);
        return 0;
    }

    asio::io_context io;
    net::Server server(io, world, sc, [&](const World& w) {
        if (recorder) recorder->write(capture_frame(w));
    });
    try {
        server.start();
    } catch (const std::exception& e) {
        log->error("cannot listen on {}:{}: {}", sc.bind, sc.port, e.what());
        return 1;
    }
    auto stats_line = [&](const char* when) {
        double p50 = 0, p99 = 0;
        server.take_tick_times(p50, p99);
        const net::ServerStats& st = server.stats();
        const std::vector<net::ClientReport> clients = server.clients();
        log->info("{}", stats_summary_line(when, {world.tick(), world.characters().size(), p50, p99, st.missed_ticks, st.malformed,
                                                  st.refused},
                                           clients));
        if (log->should_log(spdlog::level::debug))
            for (const net::ClientReport& c : clients) log->debug("{}: {}", when, client_stats_line(c));
    };
    asio::steady_timer stats_timer(io);
    std::function<void()> arm_stats = [&] {
        stats_timer.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(stats_every)));
        stats_timer.async_wait([&](const asio::error_code& ec) {
            if (ec) return;
            stats_line("stats");
            arm_stats();
        });
    };
    arm_stats();
    asio::steady_timer end_timer(io);
    auto shutdown = [&](const char* why) {
        log->info("shutting down ({})", why);
        stats_line("final");
        server.stop();
        stats_timer.cancel();
        end_timer.cancel();
        if (recorder) recorder->close();
    };
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const asio::error_code& ec, int sig) {
        if (!ec) shutdown(sig == SIGINT ? "SIGINT" : "SIGTERM");
    });
    if (duration > 0) {
        end_timer.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(duration)));
        end_timer.async_wait([&](const asio::error_code& ec) {
            if (!ec) {
                shutdown("duration reached");
                signals.cancel();
            }
        });
    }
    io.run();
    return 0;
}
