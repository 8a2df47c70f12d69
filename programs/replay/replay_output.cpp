#include "programs/replay/replay_output.h"

#include <algorithm>
#include <cstdio>

#include "programs/testbench/metrics/text_table.h"
#include "programs/testbench/sweep.h"
#include "programs/testbench/view_meta.h"

namespace ks {

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

std::vector<StrategyReport> reports_of(const ReplayResult& r) {
    std::vector<StrategyReport> reports;
    for (const ReplayStrategyResult& s : r.strategies) reports.push_back({strategy_name(s.strategy), s.result, s.series});
    return reports;
}

namespace {

void print_crowd(const ReplayResult& r, const ReplayOptions& o) {
    std::vector<std::vector<std::string>> rows;
    std::string ids;
    size_t nearest = 0;
    for (const ReplayStrategyResult& s : r.strategies) {
        if (!s.crowd) continue;
        nearest = s.crowd->near.size();
        if (rows.empty())
            for (uint16_t id : s.crowd->near) ids += (ids.empty() ? "" : " ") + std::to_string(id);
        const FidelityResult& n = s.crowd->near_result;
        const FidelityResult& f = s.crowd->rest_result;
        rows.push_back({strategy_name(s.strategy), compact_text(n.present_err_cm.mean), compact_text(n.present_err_cm.p99),
                        compact_text(n.accel_rms_ratio), std::to_string(n.pops), compact_text(f.present_err_cm.mean),
                        compact_text(f.present_err_cm.p99), compact_text(f.accel_rms_ratio), std::to_string(f.pops)});
    }
    if (rows.empty()) return;
    std::printf("%s", wrap_words("crowd from " + o.viewpoint + (o.cfg.only_near ? ", nearest only" : "") + ": near_* = the " + std::to_string(nearest) +
                                     " nearest (" + ids + "), rest_* = the others; *_err = present error mean, cm; *_p99 = its 99th "
                                     "percentile; *_accel = RMS second difference / the truth's; *_pops = frames kinking 2 cm more "
                                     "than the truth",
                                 "", "  ", 120).c_str());
    std::printf("%s", render_text_table({{"strategy", true}, {"near_err"}, {"near_p99"}, {"near_accel"}, {"near_pops"}, {"rest_err"},
                                         {"rest_p99"}, {"rest_accel"}, {"rest_pops"}},
                                        rows, "  ").c_str());
}

// What the path did with what the server sent, and the rate the server kept (lines of at most
// 120 columns, as every line the replay prints).
void print_path(const char* which, const PathReport& p, const ReplayOptions& o) {
    if (o.cfg.profile.bottlenecked())
        std::printf("(path%s: %.2f kB/s delivered, %llu dropped at its queue; delay mean %.0f, p95 %.0f ms; queued mean %.0f, "
                    "p95 %.0f ms)\n",
                    which, p.delivered_bytes_per_s / 1000.0, (unsigned long long)p.queue_dropped, p.delay_mean_ms, p.delay_p95_ms,
                    p.queue_wait_mean_ms, p.queue_wait_p95_ms);
    if (!o.cfg.adapt_rate) return;
    std::printf("(rate%s: mean %.0f of %.0f kbit/s, last %.0f; lowered %llu x for delay, %llu for loss; %llu silences, %llu restored)\n",
                which, p.rate_mean_bps / 1000.0, o.cfg.bandwidth_bps / 1000.0, p.rate_last_bps / 1000.0,
                (unsigned long long)p.rate_lowered_delay, (unsigned long long)p.rate_lowered_loss, (unsigned long long)p.rate_silences,
                (unsigned long long)p.rate_recovered);
}

std::string path_members(const PathReport& p) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "{\"delivered_bytes_per_s\": %.1f, \"queue_dropped\": %llu, \"delay_mean_ms\": %.1f, \"delay_p95_ms\": %.1f, "
                  "\"queue_wait_mean_ms\": %.1f, \"queue_wait_p95_ms\": %.1f, \"rate_mean_bps\": %.0f, \"rate_last_bps\": %.0f, "
                  "\"rate_lowered_delay\": %llu, \"rate_lowered_loss\": %llu, \"rate_silences\": %llu, \"rate_recovered\": %llu}",
                  p.delivered_bytes_per_s, (unsigned long long)p.queue_dropped, p.delay_mean_ms, p.delay_p95_ms, p.queue_wait_mean_ms,
                  p.queue_wait_p95_ms, p.rate_mean_bps, p.rate_last_bps, (unsigned long long)p.rate_lowered_delay,
                  (unsigned long long)p.rate_lowered_loss, (unsigned long long)p.rate_silences, (unsigned long long)p.rate_recovered);
    return buf;
}

}  // namespace

std::string path_json(const ReplayResult& r) {
    std::string s = ",\n  \"path\": " + path_members(r.path);
    if (r.ahead_bytes_per_s > 0) s += ",\n  \"ahead_path\": " + path_members(r.ahead_path);
    return s;
}

void print_run(const ReportHeader& hdr, const std::vector<StrategyReport>& reports, const ReplayResult& r, const ReplayOptions& o) {
    std::printf("%s", fidelity_table(hdr, reports).c_str());
    std::printf("(clock estimate error %.1f ms mean; %llu snapshot datagrams, %llu lost)\n", r.clock_error_ms,
                (unsigned long long)r.snapshot_datagrams, (unsigned long long)r.datagrams_lost);
    if (r.ahead_bytes_per_s > 0)
        std::printf("(+ahead: look-ahead sent instead of poses, %.2f kB/s = %.2fx the present run's %.2f kB/s)\n",
                    r.ahead_bytes_per_s / 1000.0, r.ahead_bytes_per_s / std::max(1.0, r.bytes_per_s), r.bytes_per_s / 1000.0);
    std::printf("(counted: %.1f payload bytes per character sent; envelope %.1f bytes per snapshot datagram, unsealed: a sealed\n"
                " session adds 18-20 bytes to each datagram)\n",
                r.payload_bytes_per_character, r.envelope_bytes_per_datagram);
    print_crowd(r, o);
    print_path("", r.path, o);
    if (r.ahead_bytes_per_s > 0) print_path(" of +ahead", r.ahead_path, o);
    std::printf("\n");
    std::fflush(stdout);
}

std::unique_ptr<ViewCapture> make_view(const ReplayOptions& o, const RecordingScan& rec) {
    std::vector<std::string> streams{"truth"};
    for (bool ahead : {false, true})  // the present strategies' run first, then the +ahead one's
        for (Strategy s : o.cfg.strategies)
            if (uses_look_ahead(s) == ahead) streams.push_back(strategy_name(s));
    std::vector<int> joints;
    for (const auto& c : rec.header.characters) joints.push_back(rec.header.skeletons[c.skeleton].size());
    const double start = double(rec.first_tick) / double(rec.header.tick_hz);
    return std::make_unique<ViewCapture>(streams, joints, start + o.view_from, o.view_span);
}

bool write_view(const ReplayOptions& o, const RecordingScan& rec, const ReplayResult& r, const ViewCapture& view, std::string& report) {
    report.insert(report.rfind("\n}"), view_roots_json(view));  // a last member of the report's object
    try {
        ViewFiles files{view_meta_json(rec, o.cfg, r, view), default_three_dir()};
        const size_t bytes = write_viewer(o.view_dir, view, files);
        const double seconds = double(view.frames()) / o.cfg.render_hz;
        std::printf("viewer: %s/index.html (%zu frames, %.1f s; replay.ksview %.2f MB, %.2f MB per minute)%s\n"
                    "  open it: xdg-open %s/index.html, or python3 -m http.server -d %s and http://localhost:8000\n",
                    o.view_dir.c_str(), view.frames(), seconds, double(bytes) / 1e6,
                    seconds > 0 ? double(bytes) / 1e6 * 60.0 / seconds : 0.0,
                    view.clipped() ? " (--view-span reached: later frames left out)" : "", o.view_dir.c_str(), o.view_dir.c_str());
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-replay: %s\n", e.what());
        return false;
    }
}

SvgPlot timeline_panel(const ReportHeader& hdr, const std::vector<StrategyReport>& reports, const ReplayResult& r) {
    TimelineMarks marks{r.epoch_times_s, r.blackout_spans_s, {}, {}};
    for (const ReplayStrategyResult& s : r.strategies)
        if (marks.pops_of.empty() || s.strategy == Strategy::DeadBlendSod) {
            marks.pop_times_s = s.pop_times_s;
            marks.pops_of = strategy_name(s.strategy);
        }
    return fidelity_plot(hdr, reports, marks);
}

std::vector<FrontierPoint> print_sweep(const std::string& profile, const std::vector<Strategy>& strategies, const ReplayResult& sw) {
    std::vector<FrontierPoint> points;
    std::vector<std::vector<std::string>> rows;
    for (Strategy st : strategies) {
        std::vector<double> err, acc;
        std::vector<const ReplayStrategyResult*> of;
        for (const ReplayStrategyResult& s : sw.strategies) {
            if (s.strategy != st) continue;
            points.push_back({strategy_name(st), variant_label(s.config), s.result.present_err_cm.mean, s.result.accel_rms_ratio, of.empty()});
            err.push_back(s.result.present_err_cm.mean);
            acc.push_back(s.result.accel_rms_ratio);
            of.push_back(&s);
        }
        const std::vector<size_t> front = pareto_front(err, acc);
        for (size_t i = 0; i < of.size(); ++i) {
            const bool on_front = std::find(front.begin(), front.end(), i) != front.end();
            rows.push_back({strategy_name(st), compact_text(err[i]), compact_text(acc[i]), std::to_string(of[i]->result.pops),
                            std::string(i == 0 ? "*" : "") + (on_front ? "+" : ""), variant_label(of[i]->config)});
        }
    }
    std::printf("%s", wrap_words("sweep, " + profile + ": every strategy at each of its settings; err = present error mean, cm; accel = "
                                 "RMS second difference / the truth's; pops = frames kinking 2 cm more than the truth; mark = * its "
                                 "default, + on its Pareto front",
                                 "", "  ", 120).c_str());
    std::printf("%s\n", render_text_table({{"strategy", true}, {"err"}, {"accel"}, {"pops"}, {"mark", true}, {"setting", true}}, rows, "  ")
                             .c_str());
    std::fflush(stdout);
    return points;
}

}  // namespace ks
