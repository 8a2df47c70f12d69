// kinesync-replay RECORDING: how close is each strategy to the truth, under a network profile?
// The protocol and every figure's definition: docs/FIDELITY.md. Options: replay_options.h; what
// is printed and written: replay_output.h.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <unistd.h>

#include "programs/replay/replay_options.h"
#include "programs/replay/replay_output.h"
#include "programs/testbench/cli_common.h"
#include "programs/testbench/honesty.h"
#include "programs/testbench/sweep.h"

using namespace ks;

namespace {

// The file is read again by each replay: an error there (it changed or went away since the scan)
// is reported like one found by the scan.
bool replay_or_report(const RecordingScan& rec, const ReplayConfig& cfg, ReplayResult& out) {
    try {
        out = run_replay(rec, cfg);
        return true;
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return false;
    }
}

// The recording is streamed (a chunk at a time, the frames around the render time kept): this
// first pass checks it whole and finds what the replays need to know beforehand.
bool scan_or_report(const std::string& path, RecordingScan& rec) {
    try {
        rec = scan_recording(path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return false;
    }
    if (rec.truncated) std::fprintf(stderr, "kinesync-replay: %s\n", rec.warning.c_str());
    if (!rec.holes.empty()) {
        uint64_t missing = 0;
        for (const auto& [tick, n] : rec.holes) missing += n;
        std::fprintf(stderr, "kinesync-replay: %s: %llu ticks were not recorded (the server's disk fell behind), in %zu holes, the first "
                             "%u ticks before tick %u; those ticks have no truth and are not scored\n",
                     path.c_str(), (unsigned long long)missing, rec.holes.size(), rec.holes[0].second, rec.holes[0].first);
    }
    if (rec.frames == 0) {
        std::fprintf(stderr, "kinesync-replay: %s: no frames\n", path.c_str());
        return false;
    }
    return true;
}

// What the profiles' runs add up to, written at the end.
struct Outputs {
    std::string json;
    std::vector<SvgPlot> panels, frontier_panels;
};

// One profile: its replay printed, its viewer (first profile only), its JSON, plot and sweep.
bool replay_profile(ReplayOptions& o, const RecordingScan& rec, bool first, Outputs& out) {
    ReplayConfig& cfg = o.cfg;
    const std::string name = cfg.profile.name;
    // Progress only to a terminal: in a pipe shared with stdout it would land inside the table.
    cfg.progress = nullptr;
    if (!o.quiet && isatty(STDERR_FILENO))
        cfg.progress = [name](double f) {
            std::fprintf(stderr, "\r%s: %3.0f %%", name.c_str(), 100.0 * f);
            if (f >= 1.0) std::fprintf(stderr, "\r\033[K");
        };
    cfg.variants.clear();
    std::unique_ptr<ViewCapture> view = !o.view_dir.empty() && first ? make_view(o, rec) : nullptr;
    cfg.view = view.get();
    ReplayResult r;
    const bool ok = replay_or_report(rec, cfg, r);
    cfg.view = nullptr;
    if (!ok) return false;
    const ReportHeader hdr = header_of(o.recording, cfg);
    const std::vector<StrategyReport> reports = reports_of(r);
    print_run(hdr, reports, r, o);
    std::string report = fidelity_json(hdr, reports);
    report.insert(report.rfind("\n}"), path_json(r));  // last members of the report's object
    if (view && !write_view(o, rec, r, *view, report)) return false;
    out.json += report;
    if (!o.svg.empty()) out.panels.push_back(timeline_panel(hdr, reports, r));
    if (!o.sweep.empty()) {
        cfg.variants = sweep_variants(cfg.reconstruct, cfg.strategies);
        ReplayResult sw;
        if (!replay_or_report(rec, cfg, sw)) return false;
        out.frontier_panels.push_back(frontier_plot(hdr, print_sweep(name, cfg.strategies, sw)));
    }
    return true;
}

bool write_outputs(const ReplayOptions& o, const Outputs& out) {
    try {
        if (!o.svg.empty()) {
            write_text_file(o.svg, render_svg_plots(out.panels));
            std::printf("plot: %s\n", o.svg.c_str());
        }
        if (!o.sweep.empty()) {
            write_text_file(o.sweep, render_svg_plots(out.frontier_panels));
            std::printf("frontier: %s\n", o.sweep.c_str());
        }
        if (!o.json.empty()) {
            write_text_file(o.json, out.json);
            std::printf("json: %s\n", o.json.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return false;
    }
    return true;
}

}  // namespace

// --honesty: the A/B check of programs/testbench/honesty.h on two recordings.
static int check_honesty_pair(const ReplayOptions& o) {
    if (o.decision_tick < 0) {
        std::fprintf(stderr, "kinesync-replay: --honesty needs --decision-tick\n");
        return 2;
    }
    try {
        const RecordingReadResult a = read_recording(o.recording), b = read_recording(o.honesty_b);
        HonestyOptions ho;
        ho.profile = o.profile == "all" ? "broadband" : o.profile;
        ho.seed = o.cfg.seed;
        const HonestyReport r = check_honesty(a, b, uint32_t(o.decision_tick), ho);
        std::printf("%s\n", honesty_summary(r).c_str());
        return r.honest() ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return 1;
    }
}

int main(int argc, char** argv) {
    CLI::App app{"kinesync-replay: re-streams a recording through the real snapshot builder and encoder, a simulated\n"
                 "network (both directions), the decoder and every client reconstruction strategy, rendering at 60 Hz,\n"
                 "and prints the fidelity metrics of docs/FIDELITY.md."};
    ReplayOptions o;
    add_replay_options(app, o);
    cli::add_version_flag(app, "kinesync-replay", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;
    if (!o.honesty_b.empty()) return check_honesty_pair(o);
    RecordingScan rec;
    if (!scan_or_report(o.recording, rec)) return 1;
    if (const auto rc = finish_replay_options(o, rec)) return *rc;
    const std::vector<std::string> profiles = o.profile == "all" ? net_profile_names() : std::vector<std::string>{o.profile};
    Outputs out;
    if (profiles.size() > 1) out.json = "[\n";
    for (size_t pi = 0; pi < profiles.size(); ++pi) {
        try {
            o.cfg.profile = resolve_network(app, o.net, profiles[pi]);
            o.cfg.up_profile = resolve_uplink(app, o.net, o.cfg.profile, net_profile(profiles[pi]));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
            return 2;
        }
        if (!replay_profile(o, rec, pi == 0, out)) return 1;
        if (profiles.size() > 1) out.json += pi + 1 < profiles.size() ? ",\n" : "\n]\n";
    }
    return write_outputs(o, out) ? 0 : 1;
}
