// kinesync-replay RECORDING: how close is each strategy to the truth, under a network profile?
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "client/replay.h"
#include "common/io/svg.h"
#include "common/metrics/report.h"

using namespace ks;

int main(int argc, char** argv) {
    CLI::App app{"kinesync-replay: re-streams a recording through the real snapshot builder and encoder, a simulated\n"
                 "network (both directions), the decoder and every client reconstruction strategy, rendering at 60 Hz,\n"
                 "and prints the fidelity metrics of ../shared/EVALUATION.md."};
    std::string recording, profile = "broadband", strategy = "all", json, svg;
    ReplayConfig cfg;
    float bandwidth_kbps = 256.0f;
    bool quiet = false;
    app.add_option("RECORDING", recording, "a recording made with kinesync-server --record")->required();
    app.add_option("--profile", profile, "lan, broadband, mobile, hostile, or all")->capture_default_str()
        ->check(CLI::IsMember({"lan", "broadband", "mobile", "hostile", "all"}));
    app.add_option("--snapshot-hz", cfg.snapshot_hz, "snapshots per second")->capture_default_str()->check(CLI::Range(1.0f, 240.0f));
    app.add_option("--strategy", strategy, "snap, interp, hermite, extrap, deadblend, deadblend+sod, or all")->capture_default_str()
        ->check(CLI::IsMember({"snap", "interp", "hermite", "extrap", "deadblend", "deadblend+sod", "all"}));
    app.add_option("--seed", cfg.seed, "network simulator seed")->capture_default_str();
    app.add_option("--bandwidth", bandwidth_kbps, "per-client budget, kbit/s")->capture_default_str();
    app.add_option("--json", json, "write the results as JSON (an array of objects when several profiles run)");
    app.add_option("--svg", svg, "plot error over time per strategy (one panel per profile)");
    app.add_flag("--quiet", quiet, "no progress on stderr");
    ReconstructConfig& rc = cfg.reconstruct;
    app.add_option("--interp-delay", rc.interp_delay_s, "interp/hermite display delay, s")->capture_default_str();
    app.add_option("--extrap-cap", rc.extrap_cap_s, "constant-velocity extrapolation limit, s")->capture_default_str();
    app.add_option("--blend-time", rc.deadblend_blend_s, "deadblend cross-fade time, s")->capture_default_str();
    app.add_option("--halflife", rc.deadblend_halflife_s, "deadblend extrapolation velocity half-life, s")->capture_default_str();
    app.add_option("--sod-f", rc.root_sod.f, "root second-order dynamics frequency, Hz")->capture_default_str();
    app.add_option("--sod-zeta", rc.root_sod.zeta, "root second-order dynamics damping")->capture_default_str();
    app.add_option("--sod-r", rc.root_sod.r, "root second-order dynamics initial response")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    RecordingReadResult rec;
    try {
        rec = read_recording(recording);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return 1;
    }
    if (rec.truncated) std::fprintf(stderr, "kinesync-replay: %s\n", rec.warning.c_str());
    if (rec.frames.empty()) {
        std::fprintf(stderr, "kinesync-replay: %s: no frames\n", recording.c_str());
        return 1;
    }
    cfg.bandwidth_bps = bandwidth_kbps * 1000.0f;
    if (strategy != "all") {
        Strategy s;
        strategy_from_name(strategy, s);
        cfg.strategies = {s};
    }
    const std::vector<std::string> profiles = profile == "all" ? net_profile_names() : std::vector<std::string>{profile};
    std::string json_all = profiles.size() > 1 ? "[\n" : "";
    std::vector<SvgPlot> panels;
    for (size_t pi = 0; pi < profiles.size(); ++pi) {
        cfg.profile = net_profile(profiles[pi]);
        if (!quiet)
            cfg.progress = [&](double f) {
                std::fprintf(stderr, "\r%s: %3.0f %%", profiles[pi].c_str(), 100.0 * f);
                if (f >= 1.0) std::fprintf(stderr, "\n");
            };
        const ReplayResult r = run_replay(rec, cfg);
        ReportHeader hdr;
        hdr.recording = recording;
        hdr.profile = {cfg.profile.name, cfg.profile.latency_ms, cfg.profile.jitter_ms, cfg.profile.loss,
                       cfg.profile.burst ? cfg.profile.burst_length : 0.0, cfg.profile.duplicate};
        hdr.snapshot_hz = cfg.snapshot_hz;
        hdr.render_hz = cfg.render_hz;
        hdr.seed = cfg.seed;
        std::vector<StrategyReport> reports;
        for (const ReplayStrategyResult& s : r.strategies) reports.push_back({strategy_name(s.strategy), s.result, s.series});
        std::printf("%s", fidelity_table(hdr, reports).c_str());
        std::printf("  (clock estimate error %.1f ms mean; %llu snapshot datagrams, %llu lost)\n\n", r.clock_error_ms,
                    (unsigned long long)r.snapshot_datagrams, (unsigned long long)r.datagrams_lost);
        json_all += fidelity_json(hdr, reports);
        if (profiles.size() > 1) json_all += pi + 1 < profiles.size() ? ",\n" : "\n]\n";
        if (!svg.empty()) {
            // One panel per profile: reuse the report's SVG for a single profile, else stack plots.
            if (profiles.size() == 1) {
                write_text_file(svg, fidelity_svg(hdr, reports, r.teleport_times_s));
            } else {
                SvgPlot p{"present error, " + profiles[pi] + " (" + recording + ", " + std::to_string(int(cfg.snapshot_hz)) + " Hz)",
                          "time (s)", "mean joint error (cm)", {}, r.teleport_times_s, "teleport", 1000, 360};
                for (size_t k = 0; k < reports.size(); ++k) {
                    SvgSeries s{reports[k].strategy, svg_palette(int(k)), {}, {}, false};
                    for (const auto& [t, e] : reports[k].error_series) s.x.push_back(t), s.y.push_back(e);
                    p.series.push_back(std::move(s));
                }
                panels.push_back(std::move(p));
            }
        }
    }
    if (!svg.empty() && profiles.size() > 1) write_text_file(svg, render_svg_plots(panels));
    if (!svg.empty()) std::printf("plot: %s\n", svg.c_str());
    if (!json.empty()) {
        std::ofstream f(json);
        if (!f) {
            std::fprintf(stderr, "kinesync-replay: %s: cannot write\n", json.c_str());
            return 1;
        }
        f << json_all;
        std::printf("json: %s\n", json.c_str());
    }
    return 0;
}
