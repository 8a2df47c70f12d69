#pragma once
// Responses of a second-order filter to test inputs, for plots and tuning.

#include <vector>

#include <kinesync/common/dynamics/second_order.h>

namespace ks {

struct SodTrace {
    std::vector<double> t, x, y;
};

// Unit step at t = 0 (input 0 before), frame time T, for `duration` seconds. The input velocity is
// estimated from the previous input, so the step's impulse drives the k3 (r) term as in the video.
SodTrace sod_step_response(const SodParams& p, SodStability mode, float T, float duration);
// A moving input: holds 0, steps to 1 at 0.25 s, then from 1.5 s follows a 0.5 Hz sine with its
// velocity given to the filter (as snapshots give it).
SodTrace sod_moving_response(const SodParams& p, SodStability mode, float T, float duration);

}  // namespace ks
