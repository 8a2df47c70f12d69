#pragma once
// kinesync-replay's outputs (docs/FIDELITY.md, "Output"): the JSON object, a table for stdout
// (fidelity_table.cpp) and an SVG plot of error over time per strategy, teleports marked.
//
// Numbers: JSON writes every real as printf "%.6g" would in the C locale (std::to_chars with
// precision 6, so no locale can change it; -0 as 0), counts as integers, and non-finite values
// (statistics without data, an infinite accel ratio) as null. The same inputs give byte-identical
// output. Keys and their order are exactly those of docs/FIDELITY.md; "profile" holds ReportProfile's fields
// in declaration order.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <kinesync/offline/svg.h>
#include "programs/testbench/metrics/fidelity.h"

namespace ks {

// The network profile as run (kept here so reports do not depend on the simulator's types).
struct ReportProfile {
    std::string name;       // "lan", "broadband", "mobile", "hostile" or "custom"
    double latency_ms = 0;  // one-way base delay
    double jitter_ms = 0;   // delay noise standard deviation
    double loss = 0;        // average loss rate, 0..1
    double burst = 0;       // mean loss-burst length in datagrams (Gilbert-Elliott); 0: independent losses
    double duplicate = 0;   // duplicate probability, 0..1
};

struct ReportHeader {
    std::string recording;  // as given on the command line
    ReportProfile profile;
    double snapshot_hz = 30;
    double render_hz = 60;
    uint64_t seed = 1;
};

struct StrategyReport {
    std::string strategy;  // e.g. "deadblend+sod"
    FidelityResult result;
    std::vector<std::pair<double, double>> error_series;  // (time s, mean present error cm); for the SVG only
};

// {"recording", "profile", "snapshot_hz", "render_hz", "seed", "results": [...]}, newline-terminated.
std::string fidelity_json(const ReportHeader& header, const std::vector<StrategyReport>& results);
// The recording and profile lines, a header line of column names (each once), one row per
// strategy (every column as wide as its widest cell; "-" where a value is not defined, "inf" for
// an infinite ratio), a legend of every column and of the strategies' names, a note for each
// present error max of 2 m or more (its frame and character, and either the epoch change whose
// old place the display still showed after its news, or how old the newest snapshot was), and the run's blackout and stream line. No line is longer than 120 characters
// unless a single value is.
std::string fidelity_table(const ReportHeader& header, const std::vector<StrategyReport>& results);
// The table's column names, in order.
const std::vector<std::string>& fidelity_table_columns();
// "lan (2 ms +- 1 ms, loss 0%, dup 0%)": the profile as the table and the plots' titles write it.
std::string profile_text(const ReportProfile& p);
// The marks of one run drawn on the time plot.
struct TimelineMarks {
    std::vector<double> epoch_times_s;                        // dashed vertical lines
    std::vector<std::pair<double, double>> blackouts_s;       // shaded spans
    std::vector<double> pop_times_s;                          // ticks along the bottom
    std::string pops_of;                                      // the strategy whose pops they are
};
// The time-plot panel: mean present error over time on a logarithmic axis (centimetres and metres
// both readable), one series per strategy (long series are reduced to each bucket's smallest and
// largest value, at most 4000 points, so spikes stay visible), epoch changes as dashed lines,
// blackouts shaded, pops as ticks; recording (file name), profile and rates in the title.
SvgPlot fidelity_plot(const ReportHeader& header, const std::vector<StrategyReport>& results, const TimelineMarks& marks);
std::string fidelity_svg(const ReportHeader& header, const std::vector<StrategyReport>& results, const TimelineMarks& marks);

// One run of a sweep: a strategy at one setting.
struct FrontierPoint {
    std::string strategy, label;
    double present_err_cm = 0, accel_rms_ratio = 0;
    bool is_default = false;
};
// The frontier panel: every point (present error mean against accel ratio), one colour per
// strategy, each strategy's Pareto front as a line, defaults drawn larger.
SvgPlot frontier_plot(const ReportHeader& header, const std::vector<FrontierPoint>& points);

// Indices of the points on the Pareto front of (error, accel), both smaller-is-better: no other
// point is no worse on both and better on one. Sorted by error ascending.
std::vector<size_t> pareto_front(const std::vector<double>& error, const std::vector<double>& accel);

// The number format used by fidelity_json ("%.6g" via std::to_chars; "null" when not finite).
std::string json_number(double v);

}  // namespace ks
