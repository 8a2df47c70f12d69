#pragma once
// The JSON that goes with a viewer (kinesync-replay --view): the "meta" inside replay.ksview
// (docs/VIEWER.md) and the "view_roots" added to the replay's --json report.

#include <string>

#include "programs/testbench/replay.h"
#include "programs/testbench/view_capture.h"

namespace ks {

std::string view_meta_json(const RecordingScan& scan, const ReplayConfig& cfg, const ReplayResult& result, const ViewCapture& capture);

// `,\n  "view_roots": [...]`: every view_roots sample (full precision, metres), to splice into a
// report object before its closing brace.
std::string view_roots_json(const ViewCapture& capture);

}  // namespace ks
