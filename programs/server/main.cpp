// kinesync-server: the headless authoritative server (or, with --no-network, an offline run that
// only records).
//
// For an orchestrator: every option also comes from KINESYNC_<OPTION> (flags win); --http-port
// serves /healthz, /readyz and /metrics (programs/server/ops/); with AGONES_SDK_HTTP_PORT set it
// tells the Agones sidecar ready, healthy and shutdown (and, with a key and no --public-address,
// asks it for the GameServer's address and port, which connect tokens name); SIGTERM/SIGINT
// drains (stop ticking, goodbye to every client, recording finalised) and exits 0 within
// --drain-grace seconds, or 1 if it cannot. Options: server_options.h; the run: server_run.h.
#include <CLI/CLI.hpp>
#include <csignal>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "programs/server/server_options.h"
#include "programs/server/server_run.h"
#include "programs/testbench/cli_common.h"

using namespace ks;

namespace {
extern "C" void on_signal(int sig) { g_server_signal = sig; }
}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-server: the headless authoritative animation server.\n"
                 "Plays character animation with velocities propagated through every op and streams delta-compressed\n"
                 "kform snapshots over UDP; optionally records the session."};
    ServerOptions o;
    add_server_options(app, o);
    cli::add_version_flag(app, "kinesync-server", KS_VERSION);
    name_environment_variables(app);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;

    auto log = spdlog::stdout_color_mt("server");
    spdlog::set_default_logger(log);
    spdlog::set_level(spdlog::level::from_str(o.log_level));
    // From here on a signal drains (clip loading included: the loop sees it at once).
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::optional<uint16_t> agones_port;
    try {
        agones_port = ops::AgonesSdk::port_from_env();
    } catch (const std::exception& e) {
        log->error("{}", e.what());
        return 2;
    }
    if (const auto rc = finish_server_options(o, app, argc, argv)) return *rc;
    if (o.sc.private_key && agones_port && o.sc.public_address.empty() && !o.no_network)
        if (const auto rc = learn_agones_address(o, *agones_port, *log)) return *rc;
    ServerRun run(o, log, agones_port);
    if (const auto rc = run.open()) return *rc;
    return o.no_network ? run.run_offline() : run.serve();
}
