#include "common/metrics/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/io/svg.h"
#include "common/io/text.h"

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

std::string fixed(double v, int decimals) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string percent(double fraction) { return json_number(fraction * 100.0) + "%"; }

std::string profile_text(const ReportProfile& p) {
    std::string s = p.name + " (" + json_number(p.latency_ms) + " ms +- " + json_number(p.jitter_ms) + " ms, loss " +
                    percent(p.loss);
    if (p.burst > 0) s += " in bursts of " + json_number(p.burst);
    s += ", dup " + percent(p.duplicate) + ")";
    return s;
}

// Printable in XML 1.0: control characters other than tab/newline become '?'.
std::string printable(const std::string& s) {
    std::string o = s;
    for (char& c : o)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return o;
}

}  // namespace

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
        o += ",\n      \"present_err_cm\": " + stat3(r.present_err_cm);
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
        o += ",\n      \"bits_per_joint\": " + json_number(r.bits_per_joint) + "}";
    }
    o += results.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return o;
}

std::string fidelity_table(const ReportHeader& h, const std::vector<StrategyReport>& results) {
    struct Col {
        const char* name;
        std::vector<std::string> cells;
    };
    std::vector<Col> cols = {{"strategy", {}},      {"present cm mean", {}}, {"p95", {}},      {"max", {}},
                             {"shape cm mean", {}}, {"p95", {}},             {"max", {}},      {"rot deg mean", {}},
                             {"p95", {}},           {"delay ms", {}},        {"accel", {}},    {"pops", {}},
                             {"smear", {}},         {"settle ms mean", {}},  {"max", {}},      {"bytes/s", {}},
                             {"bits/joint", {}}};
    for (const StrategyReport& s : results) {
        const FidelityResult& r = s.result;
        const std::string cells[] = {s.strategy,
                                     fixed(r.present_err_cm.mean, 3),
                                     fixed(r.present_err_cm.p95, 3),
                                     fixed(r.present_err_cm.max, 3),
                                     fixed(r.shape_err_cm.mean, 3),
                                     fixed(r.shape_err_cm.p95, 3),
                                     fixed(r.shape_err_cm.max, 3),
                                     fixed(r.rot_err_deg_mean, 3),
                                     fixed(r.rot_err_deg_p95, 3),
                                     fixed(r.display_delay_ms, 1),
                                     fixed(r.accel_rms_ratio, 3),
                                     std::to_string(r.pops),
                                     std::to_string(r.teleport_smear_frames),
                                     fixed(r.teleport_settle_ms_mean, 1),
                                     fixed(r.teleport_settle_ms_max, 1),
                                     fixed(r.bytes_per_s, 0),
                                     fixed(r.bits_per_joint, 2)};
        for (size_t c = 0; c < cols.size(); ++c) cols[c].cells.push_back(cells[c]);
    }
    std::vector<size_t> width(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) {
        width[c] = std::string(cols[c].name).size();
        for (const auto& cell : cols[c].cells) width[c] = std::max(width[c], cell.size());
    }
    auto row = [&](auto cell_of) {
        std::string line;
        for (size_t c = 0; c < cols.size(); ++c) {
            const std::string v = cell_of(c);
            const std::string pad(width[c] - std::min(width[c], v.size()), ' ');
            if (c) line += "  ";
            line += c == 0 ? v + pad : pad + v;  // strategy left-aligned, numbers right-aligned
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        return line + "\n";
    };
    std::string o = "recording " + h.recording + "  profile " + profile_text(h.profile) + "  snapshots " +
                    json_number(h.snapshot_hz) + " Hz  render " + json_number(h.render_hz) + " Hz  seed " +
                    std::to_string(h.seed) + "\n";
    o += row([&](size_t c) { return std::string(cols[c].name); });
    for (size_t i = 0; i < results.size(); ++i) o += row([&](size_t c) { return cols[c].cells[i]; });
    return o;
}

std::string fidelity_svg(const ReportHeader& h, const std::vector<StrategyReport>& results,
                         const std::vector<double>& teleport_times_s) {
    constexpr size_t kBuckets = 2000;  // at most 2 points each
    SvgPlot plot;
    const size_t slash = h.recording.find_last_of('/');
    const std::string file = slash == std::string::npos ? h.recording : h.recording.substr(slash + 1);
    plot.title = "Present error: " + printable(file) + " | " + printable(profile_text(h.profile)) + " | snapshots " +
                 json_number(h.snapshot_hz) + " Hz, render " + json_number(h.render_hz) + " Hz, seed " +
                 std::to_string(h.seed);
    plot.xlabel = "server time (s)";
    plot.ylabel = "mean present error (cm)";
    plot.width = 1200;
    plot.height = 460;
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
    plot.markers = teleport_times_s;
    plot.marker_label = "teleport";
    return render_svg_plots({plot});
}

}  // namespace ks
