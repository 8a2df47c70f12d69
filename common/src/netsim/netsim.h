#pragma once
// A seeded network simulator for one direction of a datagram path: base delay plus jitter, random
// or bursty (Gilbert-Elliott) loss, duplication, and an optional bandwidth cap with a tail-drop
// queue. The live client puts one on each direction of its UDP socket (NetLink) and the offline
// replay drives the same code with simulated time, so a profile means the same thing in both.
// The named profiles are those of docs/FIDELITY.md ("Networks").
//
// What happens to a datagram submitted with send(now, d), in this order:
//  1. Bottleneck (NetProfile::bottlenecked()): with bandwidth_kbps > 0 the link serialises datagrams
//     one after another at bandwidth_kbps * 1000 bit/s, each counted as its payload plus
//     kNetSimHeaderBytes (28 bytes of IP/UDP header, as docs/FIDELITY.md counts bytes_per_s); with a
//     trace it carries the queue's bytes, first in first out, in the trace's opportunities (a
//     datagram may span several; the trace's time 0 is the link's first datagram). The queue holds
//     the bytes not yet carried, including the rest of the datagram on the wire. A datagram that
//     would take it past queue_bytes, or with queue_ms > 0 would leave more than queue_ms after it
//     came, is tail-dropped (stats().queue_dropped); otherwise it leaves the link when its last
//     byte is carried. Without a bottleneck it leaves at `now`.
//  2. Loss (stats().lost), decided per datagram that passed the queue, so a lost datagram still
//     used the link (it is lost downstream of the bottleneck):
//     - burst == false: independent, probability `loss`; a run of consecutive losses then has
//       mean length 1 / (1 - loss).
//     - burst == true: the simple Gilbert (Gilbert-Elliott) chain, advanced once per datagram:
//       every datagram in the bad state is lost, none in the good state. From bad to good with
//       r = 1 / burst_length, from good to bad with p = r * loss / (1 - loss). The stationary
//       bad probability p / (p + r) is `loss` and a bad run (= a run of losses) is geometric with
//       mean 1 / r = burst_length. The chain starts in its stationary distribution. Needs
//       burst_length >= 1 and p <= 1, i.e. loss <= burst_length / (burst_length + 1) (at most one
//       good datagram between bursts); otherwise the constructor throws. loss = 1 loses all.
//  3. Duplication: a delivered datagram is doubled with probability `duplicate` (per datagram not
//     lost; stats().duplicated counts the extra copies). The copy does not use the link again: it
//     leaves the link with the original and gets its own propagation delay.
//  4. Propagation delay, drawn independently for every copy: latency_ms + noise, clamped to >= 0
//     (the delay floor is 0; the clamp matters only when latency_ms < ~3 jitter_ms, e.g. `lan`,
//     where it raises the mean slightly: 2 ms / 1 ms sd gives a mean of 2.0085 ms).
//     - JitterKind::Normal: noise ~ N(0, jitter_ms^2).
//     - JitterKind::HeavyTailed: noise = jitter_ms * (X - 1.5) / sqrt(0.75), X ~ Pareto(x_m = 1,
//       alpha = 3). Same mean (0) and sd (jitter_ms) as Normal, but one-sided like real delay
//       spikes: never below latency - 1.73 jitter_ms (so no profile of the table is ever
//       clamped), median latency - 0.28 jitter_ms, and 0.82 % of the delays lie beyond
//       latency + 4 sd (Normal: 0.003 %); the tail falls as t^-3, so the variance is finite but
//       the fourth moment is not.
//     Reordering follows only from this: packets are delivered in delivery-time order, and there
//     is no explicit reordering.
//
// Determinism: the same profile, seed and call sequence (send/receive times and datagram sizes)
// give the same deliveries on every platform with IEEE doubles: std::mt19937_64 is fully
// specified, uniforms are its top 53 bits, and normals come from the Marsaglia polar method here
// (std::normal_distribution differs between standard libraries). Loss, duplication and delay draw
// from separate streams derived from the seed, so e.g. changing the jitter keeps the loss pattern.
// The normal/Pareto transforms use std::log/std::sqrt/std::pow, whose last bit could in principle
// differ on an exotic libm; the loss and duplicate decisions use integer arithmetic and exact
// double conversions only.
//
// Not thread-safe: one simulator per direction, used from one thread (or under the caller's lock).

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <kinesync/common/net/net_profile.h>

namespace ks {

// Delays in 1 ms bins up to 30 s (longer ones in the last): mean and percentiles in bounded memory.
class DelayHistogram {
public:
    void add(double seconds);
    uint64_t count() const { return count_; }
    double mean_ms() const { return count_ ? sum_ms_ / double(count_) : 0.0; }
    double percentile_ms(double p) const;  // p in [0, 100]; 0 when empty
    double max_ms() const { return max_ms_; }
    // What was added after `earlier` (a copy of this histogram taken then); its max is this one's.
    DelayHistogram since(const DelayHistogram& earlier) const;

private:
    std::vector<uint32_t> bins_ = std::vector<uint32_t>(30001);
    uint64_t count_ = 0;
    double sum_ms_ = 0, max_ms_ = 0;
};

class NetworkSimulator {  // one direction
public:
    // Validates the profile (see validate()).
    NetworkSimulator(const NetProfile& p, uint64_t seed);

    // Submit a datagram at time now_s (seconds); it is lost, or delivered (maybe twice) later.
    // Times are the caller's clock (wall clock or simulated); they should not go backwards.
    void send(double now_s, std::vector<uint8_t> datagram);
    // Datagrams whose delivery time is <= now_s, in delivery-time order (ties: submission order,
    // a duplicate counting as submitted right after its original).
    // With `times`, each datagram's delivery time is appended to it.
    std::vector<std::vector<uint8_t>> receive(double now_s, std::vector<double>* times = nullptr);
    double next_delivery_time() const;  // +inf if none pending
    size_t in_flight() const;

    struct Stats {
        uint64_t sent = 0;           // send() calls
        uint64_t lost = 0;           // random or burst losses
        uint64_t duplicated = 0;     // extra copies made
        uint64_t delivered = 0;      // datagrams returned by receive(), copies included
        uint64_t queue_dropped = 0;  // tail drops of the bandwidth cap
        uint64_t bytes_delivered = 0;  // of the datagrams returned by receive(), with kNetSimHeaderBytes each
        DelayHistogram queue_wait;     // bottleneck: submission to the link carrying its first byte (queueing)
        DelayHistogram delay;          // submission to delivery, of every datagram delivered
    };
    const Stats& stats() const { return stats_; }
    const NetProfile& profile() const { return profile_; }

private:
    struct Pending {
        double time;
        double sent;
        uint64_t order;
        std::vector<uint8_t> data;
    };
    static bool later(const Pending& a, const Pending& b);  // heap order: a is delivered after b
    double uniform(std::mt19937_64& rng) const;  // [0, 1), 53 bits
    double normal();                             // N(0, 1) from delay_rng_
    double delay_s();                            // one propagation delay
    bool lose();                                 // advances the loss model
    // When a datagram of `wire` bytes submitted at now_s leaves the bottleneck, or nullopt when
    // the queue drops it.
    std::optional<double> bottleneck_leave(double now_s, double wire);
    std::optional<double> trace_leave(double now_s, double wire);
    double opportunity_s(uint64_t k) const;  // the trace's k-th opportunity (counting repeats)

    NetProfile profile_;
    double p_good_to_bad_ = 0, p_bad_to_good_ = 0;
    bool bad_ = false;
    std::mt19937_64 loss_rng_, dup_rng_, delay_rng_;
    bool has_spare_normal_ = false;
    double spare_normal_ = 0;
    double link_free_at_ = 0;  // when the link finishes serialising what it holds
    double last_wait_s_ = 0;   // the last datagram's wait before its first byte was carried
    // Trace: its time 0, the next opportunity with room and the bytes left in it, and what the
    // queue holds (when each datagram leaves, its bytes).
    std::optional<double> trace_start_;
    uint64_t next_opportunity_ = 0;
    double opportunity_left_ = 0;
    std::deque<std::pair<double, double>> queued_;
    uint64_t next_order_ = 0;
    std::vector<Pending> heap_;  // min-heap on (time, order)
    Stats stats_;
};

// Both directions of one client's path with independent streams: `up` carries client -> server
// datagrams (inputs, acks), `down` server -> client (snapshots); one profile for both, or each its
// own (a bottleneck of its own each way).
struct NetLink {
    NetLink(const NetProfile& p, uint64_t seed);
    NetLink(const NetProfile& down_profile, const NetProfile& up_profile, uint64_t seed);
    NetworkSimulator up, down;
};

}  // namespace ks
