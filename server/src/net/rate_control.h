#pragma once
// The rate a client's path carries, estimated from what the server sees of its own datagrams
// (docs/NETWORK.md "The rate follows the link"): each client gets a send rate between a floor
// and its budget (the ceiling), which its snapshot builder then spends.
//
// Signals: the round trip of each snapshot datagram acknowledged as the newest one an ack names
// (send to the ack's arrival; the client acks a snapshot within a render frame); per epoch
// (0.25 s) the least of them, and the queueing delay as that least over the least of the last
// 20 s's epochs; the noise, the sd of the epochs' least round trips (from their successive
// differences, measured while no queue of ours moves them); the bytes acknowledged per second
// (what the path delivered, counted from the first acknowledgement on); datagrams never
// acknowledged (loss); and silence (nothing acknowledged for 1 s and 3 round trips while
// datagrams are out). "Ours": sent x (1 - loss) over a second a round trip ago above 1.02 x
// delivered (more went out than arrived: the queue is of our making, not the path's noise).
//
// Control, at the end of each epoch:
// - overdrive: in a session's first startup_s, sent over overdrive_ratio x what arrived with a
//   queue forming (it started at its budget on a slower link) drops the rate to drain_share of
//   what the path delivered until the least round trip is back at the path's own or stops
//   falling, then to 0.9 of what the path delivered;
// - delay: a queueing delay above queue_target_s + jitter_factor x the noise for two epochs in a
//   row (or one epoch twice that deep), while the queue is ours, lowers the rate to a share of
//   what the path delivered, less the deeper the queue (so it drains within about drain_s), never
//   below the floor; again only a round trip later and once the queue has stopped draining;
// - loss: half the datagrams of the last second lost for three epochs in a row lowers it the
//   same way (a policer, or a path that is going); a decrease with a quarter or more lost is
//   counted as loss;
// - silence: the rate falls to silence_bps (a path that is down is not filled with stale
//   snapshots), the rate before kept; the first epoch measured after the path answers again
//   without a queue restores it;
// - otherwise, while the queue is under half the threshold: below 85 % of what the path carried
//   when it last queued, the rate grows 2 % of the ceiling an epoch; near it by
//   increase_bps_per_s (additive, so two clients behind one bottleneck converge on halves of it);
//   past it at a quarter of that.
// A path faster than the ceiling never queues: the rate stays at the ceiling. Random loss without
// a queue and jitter are not congestion (on the hostile profile, 60 ms of jitter each way and
// 10 % of datagrams lost in bursts, the noise still reads as a queue now and then: docs/NETWORK.md).
// Not thread-safe; one per session, driven by the server's thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>

namespace ks::net {

struct RateControlConfig {
    double ceiling_bps = 256000;  // the client's budget (wire bits per second)
    double floor_bps = 32000;     // the least it is lowered to by delay or loss
    double silence_bps = 16000;   // while the path answers nothing
    double silence_s = 1.0;       // no acknowledgement this long (and at least 3 round trips) is silence
    double queue_target_s = 0.015;  // a queue over this plus jitter_factor x the noise is the path's
    double jitter_factor = 4.0;
    double drain_s = 1.0;            // a queue found is drained in about this long
    double increase_bps_per_s = 12000;
    double base_window_s = 20.0;  // the least round trip over this long is the path's own
    double epoch_s = 0.25;        // the least over each epoch is the present one
    int over_epochs = 2;          // epochs in a row over the threshold that lower the rate
    // Sent (loss aside) over this many times what the path delivered, with a queue forming: the
    // rate is far past the path's (a session starting at its budget on a slow link). It drops to
    // drain_share of the delivered rate until the least round trip stops falling (at most
    // drain_max_s), then to 0.9 of it: at once rather than after the threshold's epochs.
    double overdrive_ratio = 1.25;
    double drain_share = 0.5;
    double drain_max_s = 4.0;
    double startup_s = 3.0;  // the overdrive is looked for this long after the first ack
    // A session starts at this share of the ceiling and grows by start_growth an epoch until its
    // path first queues. At 1 (the default) a path faster than the ceiling never sees a change;
    // lower, a slow path is not filled at the full budget in its first second (docs/NETWORK.md).
    double start_share = 1.0;
    double start_growth = 0.08;
    // The rate stays at the ceiling whatever the path does (StreamServerConfig::follow_path off;
    // also the broken variant the tests run to show they catch a rate that ignores the path).
    bool fixed = false;
};

// Checks every field: throws ks::Error (InvalidConfig) naming the field and its value.
void validate(const RateControlConfig&);
// A session's settings from the server's: the budget as the ceiling, the floor at most the
// budget, silence at most the floor; `follow_path` false keeps the rate at the budget.
RateControlConfig session_rate_config(double budget_bps, double min_bps, bool follow_path);

enum class RateChange : uint8_t { None, Delay, Loss, Silence, Recovered, Increase };
constexpr size_t kRateChanges = 6;
const char* rate_change_name(RateChange);

class RateControl {
public:
    explicit RateControl(const RateControlConfig& cfg = RateControlConfig{});
    // A datagram of `wire_bytes` went out with this sequence; `measure` for the datagrams whose
    // acknowledgement comes at once (snapshots): only they give round trips.
    void on_sent(uint16_t sequence, double now_s, size_t wire_bytes, bool measure);
    // The client acknowledged it (an ack that arrived at now_s). `newest`: the ack was for this
    // datagram (its header's `ack`), so it left the client as this one arrived; one acknowledged
    // only in the ack bits may have waited for a later datagram (its own ack lost): no round trip.
    void on_acked(uint16_t sequence, double now_s, bool newest);
    // Once per tick: decides the rate.
    void update(double now_s);

    double rate_bps() const { return rate_bps_; }
    double ceiling_bps() const { return cfg_.ceiling_bps; }
    RateChange last_change() const { return last_change_; }
    // Decreases by cause (Delay, Loss, Silence) and restorations, since the start.
    const std::array<uint64_t, kRateChanges>& changes() const { return changes_; }
    double queue_delay_s() const;  // the present estimate (0 without round trips)
    double jitter_s() const { return jitter_s_; }  // the sd of an epoch's least round trip
    double delivered_bps() const { return delivered_bps_; }
    double loss() const { return loss_; }  // share lost of the datagrams settled in the last second

    struct Sample {
        double t, v;
    };

private:
    struct Sent {
        uint16_t sequence = 0;
        double sent_s = 0;
        uint32_t bytes = 0;
        bool used = false, acked = false, measure = false;
    };
    void add_round_trip(double rtt);
    void settle(double now_s, double newest_sent_s);  // losses and acknowledgements, in send order
    void measure_window(double now_s);                // delivered rate and loss over the last second
    bool silence_began(double now_s);
    void end_epoch(double now_s, double dt);
    void decide(double now_s, double dt, bool over, bool ours);
    void lower(double now_s, RateChange why);
    void start_drain(double now_s);
    bool drain_done(double now_s, double prev_min);
    void grow(double now_s, double dt);
    void end_drain(double now_s);
    double threshold_s() const;
    double base_rtt() const { return base_.front().v; }  // the least round trip of the window

    RateControlConfig cfg_;
    double rate_bps_;
    RateChange last_change_ = RateChange::None;
    std::array<uint64_t, kRateChanges> changes_{};
    std::array<Sent, 1024> sent_{};
    std::deque<uint16_t> pending_;  // sent, in order, not yet settled
    std::deque<Sample> base_;       // ascending minima of the epochs' least round trips (a monotonic deque)
    double last_epoch_min_ = -1, jitter_s_ = 0, srtt_ = 0;
    uint64_t jitter_epochs_ = 0;
    double epoch_start_ = -1, epoch_min_ = std::numeric_limits<double>::infinity(), last_epoch_q_ = 0;
    int over_epochs_ = 0, heavy_epochs_ = 0;
    std::deque<Sample> acked_bytes_;  // (ack time, bytes) over the last second
    std::deque<Sample> sent_bytes_;   // (send time, bytes) over the last 3 s
    double sent_bps_ = 0;
    std::deque<Sample> settled_;      // (time, 1 lost / 0 acked) over the last second
    double delivered_bps_ = 0, loss_ = 0;
    double session_first_ack_s_ = -1;  // the session's first acknowledgement (first_ack_s_ starts again after a silence)
    double first_ack_s_ = -1, last_ack_s_ = -1, last_sent_s_ = -1, out_since_s_ = -1;
    double last_decrease_s_ = -1e9, q_at_decrease_ = 0, rtt_at_decrease_ = 0;
    double link_bps_ = 0;  // what the path delivered when the rate was last lowered
    // Silence: the rate before it; after it, round trips count only from datagrams sent once the
    // path answered again (earlier ones waited out the silence), and the rate comes back once
    // an epoch shows no queue.
    bool silent_ = false, recovering_ = false;
    bool drain_ = false;  // overdriven: held below the path until the queue it built is gone
    double drain_start_s_ = 0;
    int drain_flat_epochs_ = 0;
    double rate_before_silence_ = 0, measure_after_s_ = -1;
};

}  // namespace ks::net
