#pragma once
// A simulated network's profile (latency, jitter, loss, bursts, duplicates, bandwidth): the
// replay's test conditions and StreamClientConfig::simulate's development aid.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ks {

// Bytes of IP (20) + UDP (8) header the bandwidth cap adds to each datagram's payload.
constexpr size_t kNetSimHeaderBytes = 28;

enum class JitterKind { Normal, HeavyTailed };

// A link whose capacity changes with time, as delivery opportunities: at each time (ms from the
// link's first datagram) it may carry `bytes_per_opportunity` bytes of what it queues, and an
// opportunity nothing waits for is lost. After the last one the schedule repeats (its period is
// the last time, or period_ms when set). This is Mahimahi's trace format (one integer time per line, 1,500 bytes each;
// read_link_trace), and what tests build for steps, fades and outages (link_trace_from_rates).
struct LinkTrace {
    std::vector<double> ms;  // non-decreasing, not empty
    double bytes_per_opportunity = 1500;
    double period_ms = 0;  // 0: the last time in `ms`
    double period() const { return period_ms > 0 ? period_ms : (ms.empty() ? 0.0 : ms.back()); }
    std::string source;  // the file it was read from, or what made it
    double mean_kbps() const;
};

// Reads a Mahimahi trace. Throws std::invalid_argument naming the file and line of the first
// thing that is not a time in ms, a time before its predecessor, or an empty or zero-length file.
LinkTrace read_link_trace(const std::string& path);
// A trace of (duration s, kbit/s) segments one after another (0 kbit/s: an outage), with
// opportunities of `bytes_per_opportunity` spread evenly through each segment.
LinkTrace link_trace_from_rates(const std::vector<std::pair<double, double>>& segments, double bytes_per_opportunity = 100);

struct NetProfile {
    std::string name = "custom";
    double latency_ms = 0;   // one-way base delay
    double jitter_ms = 0;    // sd of the delay noise (both kinds; HeavyTailed scales its Pareto to it)
    JitterKind jitter_kind = JitterKind::Normal;
    double loss = 0;          // average loss rate 0..1
    bool burst = false;       // Gilbert-Elliott bursts (average loss still `loss`, mean burst length `burst_length`)
    double burst_length = 3;  // mean consecutive losses in the bad state (>= 1)
    double duplicate = 0;     // duplicate probability 0..1 per datagram not lost (the copy gets its own delay)
    // The bottleneck of the direction simulated: a serialising link at bandwidth_kbps (0: unlimited,
    // 1 kbps = 1000 bit/s), or the delivery opportunities of `trace` when it is set, behind a
    // tail-drop queue of queue_bytes (payload + 28 B header each) or, when queue_ms > 0, of the
    // datagrams that would wait at most queue_ms.
    double bandwidth_kbps = 0;
    size_t queue_bytes = 64 * 1024;
    double queue_ms = 0;
    std::shared_ptr<const LinkTrace> trace;
    bool bottlenecked() const { return bandwidth_kbps > 0 || trace != nullptr; }
};

// The named profiles of docs/FIDELITY.md: lan, broadband, mobile, hostile (bursts with the default
// mean length 3). Throws std::invalid_argument listing the valid names.
NetProfile net_profile(const std::string& name);
std::vector<std::string> net_profile_names();  // in the table's order
// The bottlenecked profiles (docs/NETWORK.md "The rate follows the link"), also taken by
// net_profile(): "broadband-128k" and "broadband-64k" (broadband's delay and loss behind a link of
// 128 or 64 kbit/s each way with a 500 ms queue), "mobile-128k" (mobile's, behind 128 kbit/s).
std::vector<std::string> bottleneck_profile_names();
// One line for logs, e.g. "mobile: 90 ms +- 30 ms sd (normal), loss 3% (bursts, mean 3), dup 1%, unlimited".
std::string describe(const NetProfile&);
// Throws std::invalid_argument naming the first bad field (NaN, negative, rate above 1,
// burst_length < 1, or a burst loss the Gilbert chain cannot reach).
void validate(const NetProfile&);

}  // namespace ks
