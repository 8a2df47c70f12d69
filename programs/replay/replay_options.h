#pragma once
// kinesync-replay's command line: the recording, the profiles and strategies, the outputs, the
// reconstruction settings and crowd mode; and the checks that need the recording's scan.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "programs/testbench/cli_options.h"
#include "programs/testbench/replay.h"

namespace ks {

struct ReplayOptions {
    std::string recording, profile = "broadband", strategy = "all", json, svg, sweep, view_dir, viewpoint;
    ReplayConfig cfg;
    NetworkOptions net;
    float bandwidth_kbps = 256.0f;
    float hold_error_cm = -1.0f;  // < 0: the server's default
    float hold_ahead_error_cm = -1.0f;
    bool quiet = false, fixed_rate = false;
    double view_from = 0, view_span = 120;
    std::string honesty_b;  // --honesty: the other recording of the A/B pair
    int64_t decision_tick = -1;
};

void add_replay_options(CLI::App& app, ReplayOptions& o);

// After the scan: the bandwidth, the viewpoint and the strategies to run (the +ahead ones when
// the recording has look-ahead). An exit code (after saying why on stderr), or nothing.
std::optional<int> finish_replay_options(ReplayOptions& o, const RecordingScan& rec);

}  // namespace ks
