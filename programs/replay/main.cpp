// kinesync-replay RECORDING: how close is each strategy to the truth, under a network profile?
// The protocol and every figure's definition: docs/FIDELITY.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <unistd.h>

#include "programs/testbench/cli_options.h"
#include "programs/testbench/replay.h"
#include "programs/testbench/sweep.h"
#include "programs/testbench/view_meta.h"
#include <kinesync/offline/svg.h>
#include "programs/testbench/metrics/report.h"
#include "programs/testbench/cli_common.h"

using namespace ks;

namespace {

ReportHeader header_of(const std::string& recording, const ReplayConfig& cfg) {
    ReportHeader hdr;
    hdr.recording = recording;
    hdr.profile = {cfg.profile.name, cfg.profile.latency_ms, cfg.profile.jitter_ms, cfg.profile.loss,
                   cfg.profile.burst ? cfg.profile.burst_length : 0.0, cfg.profile.duplicate};
    hdr.snapshot_hz = cfg.snapshot_hz;
    hdr.render_hz = cfg.render_hz;
    hdr.seed = cfg.seed;
    return hdr;
}

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

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-replay: re-streams a recording through the real snapshot builder and encoder, a simulated\n"
                 "network (both directions), the decoder and every client reconstruction strategy, rendering at 60 Hz,\n"
                 "and prints the fidelity metrics of docs/FIDELITY.md."};
    std::string recording, profile = "broadband", strategy = "all", json, svg, sweep;
    ReplayConfig cfg;
    NetworkOptions net;
    float bandwidth_kbps = 256.0f;
    bool quiet = false;
    app.add_option("RECORDING", recording, "a recording made with kinesync-server --record")->required();
    app.add_option("--profile", profile, "lan, broadband, mobile, hostile, or all")->capture_default_str()
        ->check(CLI::IsMember({"lan", "broadband", "mobile", "hostile", "all"}));
    add_network_options(app, net);
    app.add_option("--snapshot-hz", cfg.snapshot_hz, "snapshots per second")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--strategy", strategy,
                   "snap, interp, hermite, extrap, deadblend, deadblend+sod (sod: second-order dynamics, the correction's "
                   "spring), hermite+ahead, deadblend+sod+ahead (these two show the server's look-ahead and need a recording "
                   "with it), or all (with the +ahead ones when the recording has look-ahead)")
        ->capture_default_str()
        ->check(CLI::IsMember({"snap", "interp", "hermite", "extrap", "deadblend", "deadblend+sod", "hermite+ahead",
                               "deadblend+sod+ahead", "all"}));
    app.add_option("--seed", cfg.seed, "network simulator seed")->capture_default_str();
    app.add_option("--bandwidth", bandwidth_kbps, "per-client budget, kbit/s")->capture_default_str();
    app.add_option("--json", json, "write the results as JSON (an array of objects when several profiles run)");
    app.add_option("--svg", svg, "plot error over time per strategy (one panel per profile)");
    app.add_option("--sweep", sweep, "also run each strategy over a grid of its settings and plot the "
                                     "accuracy-smoothness frontier here (SVG; one panel per profile)");
    app.add_flag("--quiet", quiet, "no progress on stderr");
    std::string view_dir;
    double view_from = 0, view_span = 120;
    app.add_option("--view", view_dir,
                   "write a 3D viewer of the replay here (index.html; docs/VIEWER.md): the truth and every strategy per render "
                   "frame, under the first profile");
    app.add_option("--view-from", view_from, "the viewer starts this many seconds into the recording")->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--view-span", view_span, "and holds at most this many seconds (about 40 MB of memory a minute for 6 characters)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    ReconstructConfig& rc = cfg.reconstruct;
    app.add_option("--interp-delay", rc.interp_delay_s, "interp/hermite display delay, s")->capture_default_str();
    app.add_option("--extrap-cap", rc.extrap_cap_s, "constant-velocity extrapolation limit, s")->capture_default_str();
    app.add_option("--blend-time", rc.deadblend_blend_s, "deadblend cross-fade time, s")->capture_default_str();
    app.add_option("--halflife", rc.deadblend_halflife_s, "deadblend extrapolation velocity half-life, s")->capture_default_str();
    add_correction_options(app, rc);
    std::string viewpoint;
    app.add_option("--viewpoint", viewpoint,
                   "crowd mode: the client watches from X,Y,Z (metres); priorities follow distance, and the nearest "
                   "characters are measured apart from the rest")
        ->check([](const std::string& v) {
            float x, y, z;
            char tail;
            return std::sscanf(v.c_str(), "%f,%f,%f%c", &x, &y, &z, &tail) == 3 ? std::string() : "expected X,Y,Z in metres, got '" + v + "'";
        });
    app.add_option("--crowd-near", cfg.crowd_near, "crowd mode: how many nearest characters are measured apart")->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_flag("--only-near", cfg.only_near, "crowd mode: stream only the nearest characters (what they get without the crowd)");
    app.add_option("--far-depth", cfg.far_hold_depth,
                   "crowd mode: joints deeper than this in the hierarchy are not sent for the others (-1: every joint)")
        ->capture_default_str()->check(CLI::Range(-1, 255));
    cli::add_version_flag(app, "kinesync-replay", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;

    // The recording is streamed (a chunk at a time, the frames around the render time kept): this
    // first pass checks it whole and finds what the replays need to know beforehand.
    RecordingScan rec;
    try {
        rec = scan_recording(recording);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return 1;
    }
    if (rec.truncated) std::fprintf(stderr, "kinesync-replay: %s\n", rec.warning.c_str());
    if (!rec.holes.empty()) {
        uint64_t missing = 0;
        for (const auto& [tick, n] : rec.holes) missing += n;
        std::fprintf(stderr, "kinesync-replay: %s: %llu ticks were not recorded (the server's disk fell behind), in %zu holes, the first "
                             "%u ticks before tick %u; those ticks have no truth and are not scored\n",
                     recording.c_str(), (unsigned long long)missing, rec.holes.size(), rec.holes[0].second, rec.holes[0].first);
    }
    if (rec.frames == 0) {
        std::fprintf(stderr, "kinesync-replay: %s: no frames\n", recording.c_str());
        return 1;
    }
    cfg.bandwidth_bps = bandwidth_kbps * 1000.0f;
    if (!viewpoint.empty()) {
        vec3 v;
        std::sscanf(viewpoint.c_str(), "%f,%f,%f", &v.x, &v.y, &v.z);  // checked by the option
        cfg.viewpoint_m = v;
    } else if (cfg.only_near) {
        std::fprintf(stderr, "kinesync-replay: --only-near needs --viewpoint\n");
        return 2;
    }
    if (strategy != "all") {
        Strategy s;
        strategy_from_name(strategy, s);
        cfg.strategies = {s};
        if (uses_look_ahead(s) && !rec.has_look_ahead) {
            std::fprintf(stderr, "kinesync-replay: %s needs a recording with look-ahead (kinesync-server --look-ahead S)\n", strategy.c_str());
            return 2;
        }
    } else if (rec.has_look_ahead) {
        for (Strategy s : ahead_strategies()) cfg.strategies.push_back(s);
    }
    // Progress only to a terminal: in a pipe shared with stdout it would land inside the table.
    const bool progress = !quiet && isatty(STDERR_FILENO);
    const std::vector<std::string> profiles = profile == "all" ? net_profile_names() : std::vector<std::string>{profile};
    std::string json_all = profiles.size() > 1 ? "[\n" : "";
    std::vector<SvgPlot> panels, frontier_panels;
    for (size_t pi = 0; pi < profiles.size(); ++pi) {
        try {
            cfg.profile = resolve_network(app, net, profiles[pi]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
            return 2;
        }
        const std::string name = cfg.profile.name;
        if (progress)
            cfg.progress = [&](double f) {
                std::fprintf(stderr, "\r%s: %3.0f %%", name.c_str(), 100.0 * f);
                if (f >= 1.0) std::fprintf(stderr, "\r\033[K");
            };
        cfg.variants.clear();
        std::unique_ptr<ViewCapture> view;
        if (!view_dir.empty() && pi == 0) {
            std::vector<std::string> streams{"truth"};
            for (bool ahead : {false, true})  // the present strategies' run first, then the +ahead one's
                for (Strategy s : cfg.strategies)
                    if (uses_look_ahead(s) == ahead) streams.push_back(strategy_name(s));
            std::vector<int> joints;
            for (const auto& c : rec.header.characters) joints.push_back(rec.header.skeletons[c.skeleton].size());
            const double start = double(rec.first_tick) / double(rec.header.tick_hz);
            view = std::make_unique<ViewCapture>(streams, joints, start + view_from, view_span);
        }
        cfg.view = view.get();
        ReplayResult r;
        if (!replay_or_report(rec, cfg, r)) return 1;
        cfg.view = nullptr;
        const ReportHeader hdr = header_of(recording, cfg);
        std::vector<StrategyReport> reports;
        for (const ReplayStrategyResult& s : r.strategies) reports.push_back({strategy_name(s.strategy), s.result, s.series});
        std::printf("%s", fidelity_table(hdr, reports).c_str());
        std::printf("(clock estimate error %.1f ms mean; %llu snapshot datagrams, %llu lost)\n", r.clock_error_ms,
                    (unsigned long long)r.snapshot_datagrams, (unsigned long long)r.datagrams_lost);
        if (r.ahead_bytes_per_s > 0)
            std::printf("(+ahead: look-ahead sent instead of poses, %.2f kB/s = %.2fx the present run's %.2f kB/s)\n",
                        r.ahead_bytes_per_s / 1000.0, r.ahead_bytes_per_s / std::max(1.0, r.bytes_per_s), r.bytes_per_s / 1000.0);
        std::printf("(counted: %.1f payload bytes per character sent; envelope %.1f bytes per snapshot datagram)\n",
                    r.payload_bytes_per_character, r.envelope_bytes_per_datagram);
        for (const ReplayStrategyResult& s : r.strategies) {
            if (!s.crowd) continue;
            if (&s == &r.strategies.front()) {
                std::string ids;
                for (uint16_t id : s.crowd->near) ids += (ids.empty() ? "" : " ") + std::to_string(id);
                std::printf("crowd from %s%s: the %zu nearest (%s) | the rest; present mean / p99 cm, accel ratio, pops\n",
                            viewpoint.c_str(), cfg.only_near ? ", nearest only" : "", s.crowd->near.size(), ids.c_str());
            }
            const FidelityResult& n = s.crowd->near_result;
            const FidelityResult& o = s.crowd->rest_result;
            std::printf("  %-14s nearest %7.2f / %7.2f  %5.2f %6lld | rest %7.2f / %7.2f  %5.2f %6lld\n", strategy_name(s.strategy),
                        n.present_err_cm.mean, n.present_err_cm.p99, n.accel_rms_ratio, (long long)n.pops, o.present_err_cm.mean,
                        o.present_err_cm.p99, o.accel_rms_ratio, (long long)o.pops);
        }
        std::printf("\n");
        std::fflush(stdout);
        std::string report = fidelity_json(hdr, reports);
        if (view) {
            report.insert(report.rfind("\n}"), view_roots_json(*view));  // a last member of the report's object
            try {
                ViewFiles files{view_meta_json(rec, cfg, r, *view), default_three_dir()};
                const size_t bytes = write_viewer(view_dir, *view, files);
                const double seconds = double(view->frames()) / cfg.render_hz;
                std::printf("viewer: %s/index.html (%zu frames, %.1f s; replay.ksview %.2f MB, %.2f MB per minute)%s\n"
                            "  open it: xdg-open %s/index.html, or python3 -m http.server -d %s and http://localhost:8000\n",
                            view_dir.c_str(), view->frames(), seconds, double(bytes) / 1e6,
                            seconds > 0 ? double(bytes) / 1e6 * 60.0 / seconds : 0.0,
                            view->clipped() ? " (--view-span reached: later frames left out)" : "", view_dir.c_str(), view_dir.c_str());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
                return 1;
            }
        }
        json_all += report;
        if (profiles.size() > 1) json_all += pi + 1 < profiles.size() ? ",\n" : "\n]\n";
        if (!svg.empty()) {
            TimelineMarks marks{r.epoch_times_s, r.blackout_spans_s, {}, {}};
            // Pops of the default strategy (else the first shown).
            for (const ReplayStrategyResult& s : r.strategies)
                if (marks.pops_of.empty() || s.strategy == Strategy::DeadBlendSod) {
                    marks.pop_times_s = s.pop_times_s;
                    marks.pops_of = strategy_name(s.strategy);
                }
            panels.push_back(fidelity_plot(hdr, reports, marks));
        }
        if (!sweep.empty()) {
            cfg.variants = sweep_variants(cfg.reconstruct, cfg.strategies);
            ReplayResult sw;
            if (!replay_or_report(rec, cfg, sw)) return 1;
            std::vector<FrontierPoint> points;
            std::printf("sweep, %s: present error mean (cm) / accel ratio / pops per setting (* default, + on its front)\n",
                        name.c_str());
            for (Strategy st : cfg.strategies) {
                std::vector<double> err, acc;
                std::vector<const ReplayStrategyResult*> of;
                for (size_t k = 0; k < sw.strategies.size(); ++k) {
                    if (sw.strategies[k].strategy != st) continue;
                    const FidelityResult& f = sw.strategies[k].result;
                    points.push_back({strategy_name(st), variant_label(sw.strategies[k].config), f.present_err_cm.mean,
                                      f.accel_rms_ratio, of.empty()});
                    err.push_back(f.present_err_cm.mean);
                    acc.push_back(f.accel_rms_ratio);
                    of.push_back(&sw.strategies[k]);
                }
                const std::vector<size_t> front = pareto_front(err, acc);
                for (size_t i = 0; i < of.size(); ++i) {
                    const bool on_front = std::find(front.begin(), front.end(), i) != front.end();
                    std::printf("  %-14s %6.3f  %6.3f  %6lld %s%s %s\n", strategy_name(st), err[i], acc[i],
                                (long long)of[i]->result.pops, i == 0 ? "*" : " ", on_front ? "+" : " ",
                                variant_label(of[i]->config).c_str());
                }
            }
            std::printf("\n");
            std::fflush(stdout);
            frontier_panels.push_back(frontier_plot(hdr, points));
        }
    }
    try {
        if (!svg.empty()) {
            write_text_file(svg, render_svg_plots(panels));
            std::printf("plot: %s\n", svg.c_str());
        }
        if (!sweep.empty()) {
            write_text_file(sweep, render_svg_plots(frontier_panels));
            std::printf("frontier: %s\n", sweep.c_str());
        }
        if (!json.empty()) {
            write_text_file(json, json_all);
            std::printf("json: %s\n", json.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return 1;
    }
    return 0;
}
