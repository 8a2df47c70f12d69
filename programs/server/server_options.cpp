#include "programs/server/server_options.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <spdlog/spdlog.h>

#include <kinesync/common/net/tokens.h>

namespace ks {

namespace {

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

void add_motion_options(CLI::App& app, ServerOptions& o) {
    WorldConfig& wc = o.wc;
    app.add_option("--characters", wc.characters, "number of characters")->capture_default_str()->check(CLI::Range(1, 4096));
    app.add_option("--tick-hz", wc.tick_hz, "simulation ticks per second")->capture_default_str()->check(CLI::Range(1.0f, 1000.0f));
    app.add_option("--clips", o.clips, "BVH files or folders to play (default: the built-in procedural motion)");
    app.add_flag("--keep-first-frame", o.lo.keep_first_frame,
                 "keep a leading T-pose/rest frame (by default it is dropped when frame 0 differs from frame 1 by more than 0.5 rad and 5x the clip's usual frame-to-frame change)");
    app.add_option("--rig", o.lo.rig, "grow every clip's body into a test rig: game (about 250 joints: fingers, twists, a face) or stress (1,000 joints)")
        ->check(CLI::IsMember({"game", "stress"}));
    app.add_option("--units", o.lo.metres_per_unit, "metres per BVH unit for every clip (default: detected per file)");
    app.add_option("--transition", o.transition, "how clip switches blend: deadblend or inertialize")
        ->capture_default_str()->check(CLI::IsMember({"deadblend", "inertialize"}));
    app.add_option("--blend-time", wc.controller.blend_time, "transition duration, seconds")->capture_default_str();
    app.add_option("--decisions", o.decisions,
                   "how often each character decides (a new clip and speed): standard (every 3 to 8 s), decisive (every 1 to 2 s: "
                   "the recording that tests a look-ahead where it is often wrong) or none")
        ->capture_default_str()
        ->check(CLI::IsMember({"standard", "decisive", "none"}));
    app.add_option("--look-ahead", o.look_ahead_s,
                   "seconds of look-ahead computed per character on every snapshot tick, sent to clients and recorded: the pose "
                   "that far ahead if nothing were decided meanwhile (with clients connected the horizon follows their round "
                   "trips, 0.1 to 0.5 s; this is the horizon without them); 0: none")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 2.0));
    app.add_option("--decision-restart", o.decision_restart_s,
                   "after a character decides (a clip switch), restart its look-ahead horizon at S seconds and let it grow "
                   "back a tick per tick: the new plan comes due sooner, at some cost in smoothness (docs/FIDELITY.md, "
                   "\"Look-ahead\"); negative: off (the horizon stays whole)")
        ->capture_default_str()
        ->check(CLI::Range(-1.0, 2.0));
    app.add_option("--teleport-every", wc.controller.teleport_every_s, "teleport each character about every S seconds (0: never)")->capture_default_str();
    app.add_option("--reset-every", wc.controller.reset_every_s, "reset each character into another clip about every S seconds (0: never)")->capture_default_str();
    app.add_option("--seed", wc.seed, "seed for every random choice")->capture_default_str();
}

void add_network_options(CLI::App& app, ServerOptions& o) {
    StreamServerConfig& sc = o.sc;
    app.add_option("--bind", sc.bind, "address to bind (a non-loopback address needs --key-file, or --insecure-dev --insecure-dev-public)")->capture_default_str();
    app.add_option("--key-file", o.key_file,
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
    app.add_option("--port", o.port, "UDP port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
    app.add_option("--snapshot-hz", sc.snapshot_hz, "snapshots per second to each client")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--bandwidth", o.bandwidth_kbps, "per-client budget, kbit/s on the wire: the most a client's rate reaches")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--min-bandwidth", o.min_bandwidth_kbps, "the least a client's rate falls to when its path queues or loses, kbit/s")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_flag("--fixed-rate", o.fixed_rate, "send every client the budget whatever its path carries (the rate does not follow it)");
    app.add_option("--max-clients", sc.max_clients, "most clients at once")->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_option("--timeout", sc.timeout_s, "drop a client silent for this many seconds")->capture_default_str();
    app.add_option("--recv-buffer", o.recv_buffer, "UDP receive buffer, bytes (4MiB, 512KiB, ...; 0: the kernel's default; Linux caps it at net.core.rmem_max)")
        ->capture_default_str()->transform(CLI::AsSizeValue(false));
}

void add_run_options(CLI::App& app, ServerOptions& o) {
    app.add_option("--record", o.record, "record the session to this file (zstd chunks; a crash keeps all complete chunks)");
    app.add_option("--record-queue-mb", o.record_queue_mb,
                   "MiB of ticks that may wait for the recording's disk; beyond, ticks are left out of the recording (counted, "
                   "logged, marked in the file), never stalling the stream")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_flag("--no-network", o.no_network, "offline: run the simulation as fast as possible, no sockets (needs --duration)");
    app.add_option("--duration", o.duration, "stop after this many seconds of simulated time (0: run until SIGINT/SIGTERM)")->capture_default_str();
    app.add_option("--stats-every", o.stats_every, "seconds between stats lines")->capture_default_str();
    app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")->capture_default_str()
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    app.add_option("--http-port", o.http_port, "TCP port of /healthz, /readyz and /metrics (0: none)")->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("--http-bind", o.http_bind, "address the HTTP port binds")->capture_default_str();
    app.add_option("--drain-grace", o.drain_grace, "on SIGTERM/SIGINT, seconds to say goodbye to clients and finalise the recording before giving up (exit 1)")
        ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
}

// --key-file, or KINESYNC_PRIVATE_KEY (64 hex digits; surrounding whitespace allowed).
void read_key(ServerOptions& o) {
    if (!o.key_file.empty()) {
        o.sc.private_key = net::read_key_file(o.key_file);
    } else if (const char* hex = std::getenv("KINESYNC_PRIVATE_KEY"); hex && *hex) {
        std::string_view text(hex);  // a Secret made from a key file keeps its newline
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
        o.sc.private_key = net::key_from_hex(text);
        if (!o.sc.private_key) throw std::runtime_error("KINESYNC_PRIVATE_KEY: not a key (expected 64 hex digits)");
    }
}

}  // namespace

void add_server_options(CLI::App& app, ServerOptions& o) {
    o.port = o.sc.port;
    o.recv_buffer = o.sc.receive_buffer_bytes;
    add_motion_options(app, o);
    add_network_options(app, o);
    add_run_options(app, o);
}

std::optional<int> finish_server_options(ServerOptions& o, const CLI::App& app, int argc, char** argv) {
    WorldConfig& wc = o.wc;
    StreamServerConfig& sc = o.sc;
    sc.port = uint16_t(o.port);
    sc.receive_buffer_bytes = size_t(o.recv_buffer);
    if (o.no_network && o.duration <= 0.0f) {
        spdlog::error("--no-network needs --duration S");
        return 2;
    }
    // Rates travel as whole numbers on the wire (and snapshots go out every n-th tick).
    if (wc.tick_hz != std::floor(wc.tick_hz) || sc.snapshot_hz != std::floor(sc.snapshot_hz) ||
        std::fmod(wc.tick_hz, sc.snapshot_hz) != 0.0f) {
        spdlog::error("--tick-hz {} and --snapshot-hz {}: both must be whole numbers, the snapshot rate dividing the tick rate",
                      wc.tick_hz, sc.snapshot_hz);
        return 2;
    }
    wc.controller.transition = o.transition == "inertialize" ? TransitionKind::Inertialization : TransitionKind::DeadBlending;
    if (o.decisions == "decisive") wc.controller.switch_min_s = 1.0f, wc.controller.switch_max_s = 2.0f;
    if (o.decisions == "none") wc.controller.switch_min_s = wc.controller.switch_max_s = 1e9f;
    sc.bandwidth_bps = o.bandwidth_kbps * 1000.0f;
    sc.min_bandwidth_bps = std::min(o.min_bandwidth_kbps, o.bandwidth_kbps) * 1000.0f;
    sc.follow_path = !o.fixed_rate;
    sc.network = !o.no_network;
    sc.tick_hz = wc.tick_hz;
    sc.record_path = o.record;
    sc.record_queue_bytes = size_t(o.record_queue_mb) << 20;
    sc.record_scenario = join_args(argc, argv);
    if (const std::string env = env_settings(app); !env.empty()) sc.record_scenario += " (environment: " + env + ")";
    sc.record_seed = wc.seed;
    try {
        read_key(o);
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    return std::nullopt;
}

void name_environment_variables(CLI::App& app) { add_env_names(app); }

}  // namespace ks
