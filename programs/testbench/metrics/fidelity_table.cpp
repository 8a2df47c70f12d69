// kinesync-replay's table (report.h, fidelity_table): its columns and their legend, and the notes
// that say where each extreme present error was reached and why.
#include <cmath>
#include <string>
#include <vector>

#include "programs/testbench/metrics/report.h"
#include "programs/testbench/metrics/text_table.h"

namespace ks {

namespace {

constexpr size_t kWidth = 120;
constexpr double kNoteFromCm = 200.0;  // a present error max beyond a body's size gets a note

struct Column {
    const char* name;
    const char* legend;
    std::string (*cell)(const FidelityResult&);
};

const std::vector<Column>& columns() {
    static const std::vector<Column> cols = {
        {"strategy", "how the client shows the characters (sod: second-order dynamics, the correction's spring, +ahead: "
                     "shows the server's look-ahead, its own future)", nullptr},
        {"err", "present error |D(t)-G(t)|, cm, mean over joints and frames outside blackouts",
         [](const FidelityResult& r) { return compact_text(r.present_err_cm.mean); }},
        {"err_p50", "its median", [](const FidelityResult& r) { return compact_text(r.present_err_cm.p50); }},
        {"err_p99", "its 99th percentile", [](const FidelityResult& r) { return compact_text(r.present_err_cm.p99); }},
        {"err_max", "its largest (noted below from 2 m)", [](const FidelityResult& r) { return compact_text(r.present_err_cm.max); }},
        {"shape", "|D(t)-G(t-d)|, cm, mean", [](const FidelityResult& r) { return compact_text(r.shape_err_cm.mean); }},
        {"rot", "rotation error, degrees, mean", [](const FidelityResult& r) { return compact_text(r.rot_err_deg_mean); }},
        {"delay", "display delay d, ms", [](const FidelityResult& r) { return fixed_text(r.display_delay_ms, 0); }},
        {"accel", "RMS second difference / the truth's (1: as smooth)",
         [](const FidelityResult& r) { return compact_text(r.accel_rms_ratio); }},
        {"pops", "frames kinking 2 cm more than the truth", [](const FidelityResult& r) { return std::to_string(r.pops); }},
        {"smear", "frames on the way across a teleport or reset after its news (must be 0)",
         [](const FidelityResult& r) { return std::to_string(r.teleport_smear_frames); }},
        {"settle", "ms from the news of a teleport or reset until within 5 cm for 100 ms, mean",
         [](const FidelityResult& r) { return fixed_text(r.teleport_settle_ms_mean, 0); }},
        {"settle_max", "the same, largest (one never settled counts to the next change or the end)",
         [](const FidelityResult& r) { return fixed_text(r.teleport_settle_ms_max, 0); }},
    };
    return cols;
}

std::string kind_name(int64_t kind) { return kind == int64_t(EpochKind::Reset) ? "reset" : "teleport"; }

std::string ms_text(double seconds) { return fixed_text(seconds * 1000.0, 0) + " ms"; }

// Where the max was reached and what explains it: the display still showing the place before an
// epoch change whose news had come, or else how old the newest snapshot of the character was.
std::string note(const WorstFrame& w, double max_cm, double delay_ms, const std::string& strategies) {
    std::string s = "err_max " + compact_text(max_cm) + " cm (" + strategies + ") at " + fixed_text(w.time_s, 3) + " s, character " +
                    std::to_string(w.character) + ", joint " + std::to_string(w.joint);
    if (w.old_place) {
        s += ": " + ms_text(w.time_s - w.news_s) + " after the news of its " + fixed_text(w.jump_m, 1) + " m " + kind_name(w.kind) +
             " at " + fixed_text(w.change_s, 3) + " s, the display still showed the place before it";
        if (delay_ms > 0) s += " (a display delay of " + ms_text(delay_ms / 1000.0) + " shows it until that long after the change)";
        return s + ".";
    }
    if (!std::isnan(w.snapshot_age_s))
        s += ": its newest snapshot was " + ms_text(w.snapshot_age_s) + " old";
    if (!std::isnan(w.change_s) && w.time_s - w.news_s < 1.0)
        s += ", " + ms_text(w.time_s - w.news_s) + " after the news of its " + kind_name(w.kind) + " at " + fixed_text(w.change_s, 3) + " s";
    return s + ".";
}

// One note per frame and cause, naming every strategy whose max it is.
std::string notes(const std::vector<StrategyReport>& results) {
    std::string out;
    std::vector<bool> done(results.size(), false);
    for (size_t i = 0; i < results.size(); ++i) {
        const FidelityResult& r = results[i].result;
        if (done[i] || !(r.present_err_cm.max >= kNoteFromCm) || std::isnan(r.worst.time_s)) continue;
        std::string names = results[i].strategy;
        for (size_t k = i + 1; k < results.size(); ++k) {
            const FidelityResult& o = results[k].result;
            if (o.worst.time_s == r.worst.time_s && o.worst.character == r.worst.character && o.worst.old_place == r.worst.old_place &&
                o.display_delay_ms == r.display_delay_ms && compact_text(o.present_err_cm.max) == compact_text(r.present_err_cm.max)) {
                names += ", " + results[k].strategy;
                done[k] = true;
            }
        }
        out += wrap_words(note(r.worst, r.present_err_cm.max, r.display_delay_ms, names), "note: ", "  ", kWidth);
    }
    return out;
}

}  // namespace

const std::vector<std::string>& fidelity_table_columns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const Column& c : columns()) n.push_back(c.name);
        return n;
    }();
    return names;
}

std::string fidelity_table(const ReportHeader& h, const std::vector<StrategyReport>& results) {
    std::vector<TextColumn> heads;
    std::string legend;
    for (const Column& c : columns()) {
        heads.push_back({c.name, c.cell == nullptr});
        legend += std::string(legend.empty() ? "" : "; ") + c.name + " = " + c.legend;
    }
    std::vector<std::vector<std::string>> rows;
    for (const StrategyReport& s : results) {
        rows.emplace_back();
        for (const Column& c : columns()) rows.back().push_back(c.cell ? c.cell(s.result) : s.strategy);
    }
    std::string o = "recording " + h.recording + "\nprofile " + profile_text(h.profile) + ", snapshots " + json_number(h.snapshot_hz) +
                    " Hz, render " + json_number(h.render_hz) + " Hz, seed " + std::to_string(h.seed) + "\n";
    o += render_text_table(heads, rows);
    o += wrap_words(legend + ".", "columns: ", "  ", kWidth);
    o += notes(results);
    if (!results.empty()) {
        // The same for every strategy of one run: the network's share and the stream's cost.
        const FidelityResult& r = results.front().result;
        o += "blackout " + std::to_string(r.blackout_frames) + " character-frames, " + fixed_text(r.blackout_ms_mean, 1) + " ms mean, " +
             fixed_text(r.blackout_ms_max, 1) + " ms max over " + std::to_string(r.epoch_changes) + " epoch changes; " +
             fixed_text(r.bytes_per_s / 1000.0, 2) + " kB/s, " + fixed_text(r.bits_per_joint, 2) + " bits/joint\n";
    }
    return o;
}

}  // namespace ks
