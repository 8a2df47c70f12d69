#pragma once
// kinesync-replay's outputs (../shared/EVALUATION.md, "Output"): the JSON object, a fixed-width
// table for stdout and an SVG plot of error over time per strategy, teleports marked.
//
// Numbers: JSON writes every real as printf "%.6g" would in the C locale (std::to_chars with
// precision 6, so no locale can change it; -0 as 0), counts as integers, and non-finite values
// (statistics without data, an infinite accel ratio) as null. The same inputs give byte-identical
// output. Keys and their order are exactly EVALUATION.md's; "profile" holds ReportProfile's fields
// in declaration order.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/metrics/fidelity.h"

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
// A header line, then one row per strategy; columns right-aligned, sized to fit; "-" where a value
// is not defined (NaN), "inf" for an infinite ratio.
std::string fidelity_table(const ReportHeader& header, const std::vector<StrategyReport>& results);
// Mean present error over time, one series per strategy (long series are reduced to each
// bucket's smallest and largest value, at most 4000 points, so spikes stay visible), teleports as
// dashed vertical markers, the recording (file name without its folder), profile and rates in the
// title.
std::string fidelity_svg(const ReportHeader& header, const std::vector<StrategyReport>& results,
                         const std::vector<double>& teleport_times_s);

// The number format used by fidelity_json ("%.6g" via std::to_chars; "null" when not finite).
std::string json_number(double v);

}  // namespace ks
