#pragma once
// How far ahead the look-ahead reaches (docs/FIDELITY.md, "Look-ahead"). One horizon for every
// client: the server computes one look-ahead per character, and every client's entries share its
// encoding. A look-ahead helps only if it reaches the client before its time, so the horizon
// follows the slower clients' delays; longer than that, it is wrong for longer after each decision.

#include <vector>

namespace ks {

// The 90th percentile of the clients' one-way delays (half their round trips), with half again for
// jitter, plus two snapshot intervals (one to wait for the next snapshot, one for a lost one),
// within [min_s, max_s]; `fallback_s` without a client that has measured its round trip.
double horizon_for_clients(std::vector<double> rtt_ms, double snapshot_hz, double fallback_s, double min_s = 0.1,
                           double max_s = 0.5);

// The horizon moved towards `target_s` by at most a quarter of a snapshot interval, so the times
// the look-ahead snapshots are for keep increasing from one snapshot to the next.
double slew_horizon(double current_s, double target_s, double snapshot_hz);

}  // namespace ks
