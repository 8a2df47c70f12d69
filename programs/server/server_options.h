#pragma once
// kinesync-server's command line: every option, the environment names (KINESYNC_<OPTION>), and
// the checks and conversions that turn them into the world's and the stream server's settings.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "programs/server/sim/world.h"
#include "programs/server/sim/world_streamer.h"
#include <kinesync/server/stream_server.h>

namespace ks {

struct ServerOptions {
    WorldConfig wc;
    StreamServerConfig sc;
    std::vector<std::string> clips;
    ClipLoadOptions lo;
    std::string transition = "deadblend", record, log_level = "info", decisions = "standard";
    std::string key_file, http_bind = "127.0.0.1";
    float bandwidth_kbps = 256.0f, min_bandwidth_kbps = 32.0f, duration = 0.0f, stats_every = 5.0f;
    bool fixed_rate = false;
    bool no_network = false;
    int record_queue_mb = 64;
    double look_ahead_s = 0.25, drain_grace = 2.0;
    double decision_restart_s = WorldStreamer::kDecisionRestartS;  // --decision-restart
    int port = 40000;  // an int, so 99999 or -1 is refused by the range check with its value named
    int http_port = 0;
    uint64_t recv_buffer = 0;
};

// Declares every option on `app` (bound to `o`).
void add_server_options(CLI::App& app, ServerOptions& o);
// Every option declared so far (but --help and --version) also comes from KINESYNC_<OPTION>.
void name_environment_variables(CLI::App& app);

// After parsing: checks what the parser cannot, fills o.wc and o.sc (the key included) and the
// recording's scenario. Returns the exit code to stop with (2, after logging why on the default
// logger), or nothing.
std::optional<int> finish_server_options(ServerOptions& o, const CLI::App& app, int argc, char** argv);

}  // namespace ks
