#include "programs/testbench/metrics/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <kinesync/offline/svg.h>
#include "offline/src/text.h"

namespace ks {

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    if (v == 0) return "0";  // also -0
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
    return std::string(buf, r.ptr);
}

namespace {

std::string json_int(int64_t v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string percent(double fraction) { return json_number(fraction * 100.0) + "%"; }

// Printable in XML 1.0: control characters other than tab/newline become '?'.
std::string printable(const std::string& s) {
    std::string o = s;
    for (char& c : o)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return o;
}

}  // namespace

std::string profile_text(const ReportProfile& p) {
    std::string s = p.name + " (" + json_number(p.latency_ms) + " ms +- " + json_number(p.jitter_ms) + " ms, loss " +
                    percent(p.loss);
    if (p.burst > 0) s += " in bursts of " + json_number(p.burst);
    s += ", dup " + percent(p.duplicate) + ")";
    return s;
}

std::string fidelity_json(const ReportHeader& h, const std::vector<StrategyReport>& results) {
    const ReportProfile& p = h.profile;
    std::string o = "{\n";
    o += "  \"recording\": " + json_string(h.recording) + ",\n";
    o += "  \"profile\": {\"name\": " + json_string(p.name) + ", \"latency_ms\": " + json_number(p.latency_ms) +
         ", \"jitter_ms\": " + json_number(p.jitter_ms) + ", \"loss\": " + json_number(p.loss) +
         ", \"burst\": " + json_number(p.burst) + ", \"duplicate\": " + json_number(p.duplicate) + "},\n";
    o += "  \"snapshot_hz\": " + json_number(h.snapshot_hz) + ",\n";
    o += "  \"render_hz\": " + json_number(h.render_hz) + ",\n";
    o += "  \"seed\": " + std::to_string(h.seed) + ",\n";
    o += "  \"results\": [";
    for (size_t i = 0; i < results.size(); ++i) {
        const FidelityResult& r = results[i].result;
        auto stat3 = [](const Stat3& s) {
            return "{\"mean\": " + json_number(s.mean) + ", \"p95\": " + json_number(s.p95) + ", \"max\": " + json_number(s.max) +
                   "}";
        };
        o += i ? ",\n    {" : "\n    {";
        o += "\"strategy\": " + json_string(results[i].strategy);
        o += ",\n      \"present_err_cm\": {\"mean\": " + json_number(r.present_err_cm.mean) +
             ", \"p50\": " + json_number(r.present_err_cm.p50) + ", \"p95\": " + json_number(r.present_err_cm.p95) +
             ", \"p99\": " + json_number(r.present_err_cm.p99) + ", \"max\": " + json_number(r.present_err_cm.max) + "}";
        o += ",\n      \"shape_err_cm\": " + stat3(r.shape_err_cm);
        o += ",\n      \"rot_err_deg\": {\"mean\": " + json_number(r.rot_err_deg_mean) + ", \"p95\": " +
             json_number(r.rot_err_deg_p95) + "}";
        o += ",\n      \"display_delay_ms\": " + json_number(r.display_delay_ms);
        o += ",\n      \"accel_rms_ratio\": " + json_number(r.accel_rms_ratio);
        o += ",\n      \"pops\": " + json_int(r.pops);
        o += ",\n      \"teleport_smear_frames\": " + json_int(r.teleport_smear_frames);
        o += ",\n      \"teleport_settle_ms\": {\"mean\": " + json_number(r.teleport_settle_ms_mean) + ", \"max\": " +
             json_number(r.teleport_settle_ms_max) + "}";
        o += ",\n      \"bytes_per_s\": " + json_number(r.bytes_per_s);
        o += ",\n      \"bits_per_joint\": " + json_number(r.bits_per_joint);
        o += ",\n      \"blackout_frames\": " + json_int(r.blackout_frames);
        o += ",\n      \"blackout_ms\": {\"mean\": " + json_number(r.blackout_ms_mean) + ", \"max\": " +
             json_number(r.blackout_ms_max) + "}}";
    }
    o += results.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return o;
}

SvgPlot fidelity_plot(const ReportHeader& h, const std::vector<StrategyReport>& results, const TimelineMarks& marks) {
    constexpr size_t kBuckets = 2000;  // at most 2 points each
    SvgPlot plot;
    const size_t slash = h.recording.find_last_of('/');
    const std::string file = slash == std::string::npos ? h.recording : h.recording.substr(slash + 1);
    plot.title = "Present error: " + printable(file) + " | " + printable(profile_text(h.profile)) + " | snapshots " +
                 json_number(h.snapshot_hz) + " Hz, render " + json_number(h.render_hz) + " Hz, seed " +
                 std::to_string(h.seed);
    plot.xlabel = "server time (s)";
    plot.ylabel = "mean present error (cm, log)";
    plot.width = 1200;
    plot.height = 460;
    plot.log_y = true;
    for (size_t i = 0; i < results.size(); ++i) {
        const auto& s = results[i].error_series;
        SvgSeries series;
        series.name = printable(results[i].strategy);
        series.color = svg_palette(int(i));
        if (s.size() <= 2 * kBuckets) {
            for (const auto& [t, e] : s) {
                series.x.push_back(t);
                series.y.push_back(e);
            }
        } else {
            for (size_t b = 0; b < kBuckets; ++b) {
                const size_t begin = s.size() * b / kBuckets, end = s.size() * (b + 1) / kBuckets;
                size_t lo = begin, hi = begin;
                for (size_t k = begin; k < end; ++k) {
                    if (s[k].second < s[lo].second) lo = k;
                    if (s[k].second > s[hi].second) hi = k;
                }
                for (size_t k : {std::min(lo, hi), std::max(lo, hi)}) {
                    series.x.push_back(s[k].first);
                    series.y.push_back(s[k].second);
                    if (lo == hi) break;
                }
            }
        }
        plot.series.push_back(std::move(series));
    }
    plot.markers = marks.epoch_times_s;
    plot.marker_label = "teleport / reset";
    plot.shaded = marks.blackouts_s;
    plot.shaded_label = "blackout (no news yet)";
    plot.ticks = marks.pop_times_s;
    plot.ticks_label = "pops" + (marks.pops_of.empty() ? std::string() : " (" + printable(marks.pops_of) + ")");
    return plot;
}

std::string fidelity_svg(const ReportHeader& h, const std::vector<StrategyReport>& results, const TimelineMarks& marks) {
    return render_svg_plots({fidelity_plot(h, results, marks)});
}

SvgPlot frontier_plot(const ReportHeader& h, const std::vector<FrontierPoint>& points) {
    SvgPlot plot;
    const size_t slash = h.recording.find_last_of('/');
    const std::string file = slash == std::string::npos ? h.recording : h.recording.substr(slash + 1);
    plot.title = "Accuracy-smoothness frontier: " + printable(file) + " | " + printable(profile_text(h.profile)) +
                 " | snapshots " + json_number(h.snapshot_hz) + " Hz";
    plot.xlabel = "present error mean (cm, log)";
    plot.ylabel = "accel RMS ratio (1 = as smooth as the truth)";
    plot.width = 1200;
    plot.height = 560;
    plot.log_x = true;
    std::vector<std::string> names;
    for (const FrontierPoint& p : points)
        if (std::find(names.begin(), names.end(), p.strategy) == names.end()) names.push_back(p.strategy);
    for (size_t k = 0; k < names.size(); ++k) {
        SvgSeries pts;
        pts.name = printable(names[k]);
        pts.color = svg_palette(int(k));
        pts.points = true;
        std::vector<double> err, acc;
        for (const FrontierPoint& p : points) {
            if (p.strategy != names[k]) continue;
            if (p.is_default) pts.highlight.push_back(pts.x.size());
            pts.x.push_back(p.present_err_cm);
            pts.y.push_back(p.accel_rms_ratio);
        }
        SvgSeries front;
        front.name = printable(names[k]) + " front";
        front.color = pts.color;
        for (size_t i : pareto_front(pts.x, pts.y)) {
            front.x.push_back(pts.x[i]);
            front.y.push_back(pts.y[i]);
        }
        plot.series.push_back(std::move(pts));
        if (front.x.size() > 1) plot.series.push_back(std::move(front));
    }
    return plot;
}

std::vector<size_t> pareto_front(const std::vector<double>& error, const std::vector<double>& accel) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < error.size() && i < accel.size(); ++i)
        if (std::isfinite(error[i]) && std::isfinite(accel[i])) idx.push_back(i);
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
        return error[a] != error[b] ? error[a] < error[b] : accel[a] < accel[b];
    });
    std::vector<size_t> front;
    double best = INFINITY;
    for (size_t i : idx)
        if (accel[i] < best) {
            front.push_back(i);
            best = accel[i];
        }
    return front;
}

}  // namespace ks
