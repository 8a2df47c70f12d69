#include "programs/server/sim/look_ahead_horizon.h"

#include <algorithm>
#include <cmath>

namespace ks {

double horizon_for_clients(std::vector<double> rtt_ms, double snapshot_hz, double fallback_s, double min_s, double max_s) {
    std::erase_if(rtt_ms, [](double r) { return !(r > 0.0) || !std::isfinite(r); });
    if (rtt_ms.empty() || !(snapshot_hz > 0)) return fallback_s;
    std::sort(rtt_ms.begin(), rtt_ms.end());
    const double p90 = rtt_ms[std::min(rtt_ms.size() - 1, size_t(std::ceil(0.9 * double(rtt_ms.size()))) - 1)];
    const double one_way_s = 0.5 * p90 / 1000.0;
    return std::clamp(1.5 * one_way_s + 2.0 / snapshot_hz, min_s, max_s);
}

double slew_horizon(double current_s, double target_s, double snapshot_hz) {
    const double step = 0.25 / std::max(1e-9, snapshot_hz);
    return current_s + std::clamp(target_s - current_s, -step, step);
}

}  // namespace ks
