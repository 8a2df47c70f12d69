#pragma once
// Turning the simulated world into recording frames (the recorder's view of a tick).
#include <string>

#include "common/record/recording.h"
#include "server/sim/world.h"

namespace ks {

RecordingHeader make_recording_header(const World& world, float snapshot_hz, const std::string& scenario);
RecordedFrame capture_frame(const World& world);

}  // namespace ks
