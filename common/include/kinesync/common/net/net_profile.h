#pragma once
// A simulated network's profile (latency, jitter, loss, bursts, duplicates, bandwidth): the
// replay's test conditions and StreamClientConfig::simulate's development aid.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace ks {

// Bytes of IP (20) + UDP (8) header the bandwidth cap adds to each datagram's payload.
constexpr size_t kNetSimHeaderBytes = 28;

enum class JitterKind { Normal, HeavyTailed };

struct NetProfile {
    std::string name = "custom";
    double latency_ms = 0;   // one-way base delay
    double jitter_ms = 0;    // sd of the delay noise (both kinds; HeavyTailed scales its Pareto to it)
    JitterKind jitter_kind = JitterKind::Normal;
    double loss = 0;          // average loss rate 0..1
    bool burst = false;       // Gilbert-Elliott bursts (average loss still `loss`, mean burst length `burst_length`)
    double burst_length = 3;  // mean consecutive losses in the bad state (>= 1)
    double duplicate = 0;     // duplicate probability 0..1 per datagram not lost (the copy gets its own delay)
    double bandwidth_kbps = 0;       // 0: unlimited; else a serialising link (1 kbps = 1000 bit/s) with a queue
    size_t queue_bytes = 64 * 1024;  // tail-drop beyond this when bandwidth-capped (payload + 28 B header each)
};

// The named profiles of docs/FIDELITY.md: lan, broadband, mobile, hostile (bursts with the default
// mean length 3). Throws std::invalid_argument listing the valid names.
NetProfile net_profile(const std::string& name);
std::vector<std::string> net_profile_names();  // in the table's order
// One line for logs, e.g. "mobile: 90 ms +- 30 ms sd (normal), loss 3% (bursts, mean 3), dup 1%, unlimited".
std::string describe(const NetProfile&);
// Throws std::invalid_argument naming the first bad field (NaN, negative, rate above 1,
// burst_length < 1, or a burst loss the Gilbert chain cannot reach).
void validate(const NetProfile&);

}  // namespace ks
