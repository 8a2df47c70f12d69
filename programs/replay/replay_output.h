#pragma once
// What kinesync-replay prints and writes for one profile's run: the table and the stream's
// figures, the crowd lines, the viewer, the error-over-time panel and the sweep's rows.

#include <memory>
#include <string>
#include <vector>

#include "programs/replay/replay_options.h"
#include "programs/testbench/metrics/report.h"
#include "programs/testbench/view_capture.h"
#include <kinesync/offline/svg.h>

namespace ks {

ReportHeader header_of(const std::string& recording, const ReplayConfig& cfg);
std::vector<StrategyReport> reports_of(const ReplayResult& r);

// The path's and the rate's figures as the last members of a report's JSON object (",\n  \"path\": {...}").
std::string path_json(const ReplayResult& r);
// The table, the clock and byte figures, in crowd mode the nearest against the rest, the path.
void print_run(const ReportHeader& hdr, const std::vector<StrategyReport>& reports, const ReplayResult& r, const ReplayOptions& o);

// The capture for --view: the truth, then the present strategies, then the +ahead ones.
std::unique_ptr<ViewCapture> make_view(const ReplayOptions& o, const RecordingScan& rec);
// Writes the viewer and adds its roots to `report` (the run's JSON). False after saying why.
bool write_view(const ReplayOptions& o, const RecordingScan& rec, const ReplayResult& r, const ViewCapture& view, std::string& report);

// Error over time, with the default strategy's pops (else the first's) on the timeline.
SvgPlot timeline_panel(const ReportHeader& hdr, const std::vector<StrategyReport>& reports, const ReplayResult& r);

// The sweep's rows on stdout (each strategy's settings, * its default, + on its Pareto front);
// returns the frontier plot's points.
std::vector<FrontierPoint> print_sweep(const std::string& profile, const std::vector<Strategy>& strategies, const ReplayResult& sw);

}  // namespace ks
