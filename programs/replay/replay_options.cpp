#include "programs/replay/replay_options.h"

#include <cstdint>
#include <cstdio>

namespace ks {

namespace {

void add_run_options(CLI::App& app, ReplayOptions& o) {
    app.add_option("RECORDING", o.recording, "a recording made with kinesync-server --record")->required();
    app.add_option("--profile", o.profile,
                   "lan, broadband, mobile, hostile, all (those four), or one behind a bottleneck: broadband-128k, broadband-64k, "
                   "mobile-128k")->capture_default_str()
        ->check(CLI::IsMember({"lan", "broadband", "mobile", "hostile", "all", "broadband-128k", "broadband-64k", "mobile-128k"}));
    add_network_options(app, o.net);
    app.add_option("--snapshot-hz", o.cfg.snapshot_hz, "snapshots per second")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--strategy", o.strategy,
                   "snap, interp, hermite, extrap, deadblend, deadblend+sod (sod: second-order dynamics, the correction's "
                   "spring), hermite+ahead, deadblend+sod+ahead (these two show the server's look-ahead and need a recording "
                   "with it), or all (with the +ahead ones when the recording has look-ahead)")
        ->capture_default_str()
        ->check(CLI::IsMember({"snap", "interp", "hermite", "extrap", "deadblend", "deadblend+sod", "hermite+ahead",
                               "deadblend+sod+ahead", "all"}));
    app.add_option("--seed", o.cfg.seed, "network simulator seed")->capture_default_str();
    app.add_option("--bandwidth", o.bandwidth_kbps, "per-client budget, kbit/s: the most the server's rate reaches")->capture_default_str();
    app.add_flag("--fixed-rate", o.fixed_rate, "the server sends at the budget whatever the path carries (the rate does not follow it)");
    app.add_option("--hold-error", o.hold_error_cm,
                   "the server sends nothing of a character while the client's prediction stays within this many cm "
                   "(default: the server's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--hold-ahead-error", o.hold_ahead_error_cm,
                   "with look-ahead: the server sends no entry while the client's curve through the entries it holds passes "
                   "within this many cm of the ones skipped (default: the server's)")
        ->check(CLI::NonNegativeNumber);
}

void add_output_options(CLI::App& app, ReplayOptions& o) {
    app.add_option("--json", o.json, "write the results as JSON (an array of objects when several profiles run)");
    app.add_option("--svg", o.svg, "plot error over time per strategy (one panel per profile)");
    app.add_option("--sweep", o.sweep, "also run each strategy over a grid of its settings and plot the "
                                       "accuracy-smoothness frontier here (SVG; one panel per profile)");
    app.add_flag("--quiet", o.quiet, "no progress on stderr");
    app.add_option("--view", o.view_dir,
                   "write a 3D viewer of the replay here (index.html; docs/VIEWER.md): the truth and every strategy per render "
                   "frame, under the first profile");
    app.add_option("--view-from", o.view_from, "the viewer starts this many seconds into the recording")->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--honesty", o.honesty_b,
                   "check the look-ahead's honesty instead (docs/FIDELITY.md, \"Honesty\"): RECORDING and this one are two runs "
                   "of one server, identical up to a decision at --decision-tick; exit 0 when no look-ahead computed before it "
                   "and nothing any strategy shows before its snapshot arrives differs between them, 3 when something does");
    app.add_option("--decision-tick", o.decision_tick, "the tick of the decision the --honesty pair parts at (replayed under --profile, "
                                                       "broadband for all, and --seed; the other options do not apply)")
        ->check(CLI::Range(int64_t(0), int64_t(UINT32_MAX)));
    app.add_option("--view-span", o.view_span, "and holds at most this many seconds (about 40 MB of memory a minute for 6 characters)")
        ->capture_default_str()->check(CLI::PositiveNumber);
}

void add_crowd_options(CLI::App& app, ReplayOptions& o) {
    app.add_option("--viewpoint", o.viewpoint,
                   "crowd mode: the client watches from X,Y,Z (metres); priorities follow distance, and the nearest "
                   "characters are measured apart from the rest")
        ->check([](const std::string& v) {
            float x, y, z;
            char tail;
            return std::sscanf(v.c_str(), "%f,%f,%f%c", &x, &y, &z, &tail) == 3 ? std::string() : "expected X,Y,Z in metres, got '" + v + "'";
        });
    app.add_option("--crowd-near", o.cfg.crowd_near, "crowd mode: how many nearest characters are measured apart")->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_flag("--only-near", o.cfg.only_near, "crowd mode: stream only the nearest characters (what they get without the crowd)");
    app.add_option("--far-depth", o.cfg.far_hold_depth,
                   "crowd mode: joints deeper than this in the hierarchy are not sent for the others (-1: every joint)")
        ->capture_default_str()->check(CLI::Range(-1, 255));
}

}  // namespace

void add_replay_options(CLI::App& app, ReplayOptions& o) {
    add_run_options(app, o);
    add_output_options(app, o);
    add_reconstruct_options(app, o.cfg.reconstruct);
    add_crowd_options(app, o);
}

std::optional<int> finish_replay_options(ReplayOptions& o, const RecordingScan& rec) {
    ReplayConfig& cfg = o.cfg;
    cfg.bandwidth_bps = o.bandwidth_kbps * 1000.0f;
    cfg.adapt_rate = !o.fixed_rate;
    if (o.hold_error_cm >= 0.0f) cfg.hold_error_m = o.hold_error_cm / 100.0f;
    if (o.hold_ahead_error_cm >= 0.0f) cfg.hold_ahead_error_m = o.hold_ahead_error_cm / 100.0f;
    if (!o.viewpoint.empty()) {
        vec3 v;
        std::sscanf(o.viewpoint.c_str(), "%f,%f,%f", &v.x, &v.y, &v.z);  // checked by the option
        cfg.viewpoint_m = v;
    } else if (cfg.only_near) {
        std::fprintf(stderr, "kinesync-replay: --only-near needs --viewpoint\n");
        return 2;
    }
    if (o.strategy != "all") {
        Strategy s;
        strategy_from_name(o.strategy, s);
        cfg.strategies = {s};
        if (uses_look_ahead(s) && !rec.has_look_ahead) {
            std::fprintf(stderr, "kinesync-replay: %s needs a recording with look-ahead (kinesync-server --look-ahead S)\n", o.strategy.c_str());
            return 2;
        }
    } else if (rec.has_look_ahead) {
        for (Strategy s : ahead_strategies()) cfg.strategies.push_back(s);
    }
    return std::nullopt;
}

}  // namespace ks
