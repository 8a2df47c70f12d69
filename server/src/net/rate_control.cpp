#include "server/src/net/rate_control.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <kinesync/common/errors.h>

namespace ks::net {

namespace {

void push_min(std::deque<RateControl::Sample>& d, double t, double v) {
    while (!d.empty() && d.back().v >= v) d.pop_back();
    d.push_back({t, v});
}

void prune(std::deque<RateControl::Sample>& d, double before) {
    while (!d.empty() && d.front().t < before) d.pop_front();
}

}  // namespace

void validate(const RateControlConfig& c) {
    auto check = [](double v, const char* field, double lo, double hi) {
        if (!std::isfinite(v) || v < lo || v > hi)
            throw Error(Errc::InvalidConfig,
                        std::string("rate control: ") + field + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]",
                        std::string("rate.") + field);
    };
    const double big = 1e12;
    check(c.ceiling_bps, "ceiling_bps", 1000, big);
    check(c.floor_bps, "floor_bps", 1000, c.ceiling_bps);
    check(c.silence_bps, "silence_bps", 100, c.ceiling_bps);
    check(c.silence_s, "silence_s", 0.01, 60);
    check(c.queue_target_s, "queue_target_s", 0, 10);
    check(c.jitter_factor, "jitter_factor", 0, 100);
    check(c.drain_s, "drain_s", 0.01, 60);
    check(c.increase_bps_per_s, "increase_bps_per_s", 0, big);
    check(c.base_window_s, "base_window_s", 1, 3600);
    check(c.epoch_s, "epoch_s", 0.01, 10);
    check(c.start_share, "start_share", 0.01, 1);
    check(c.start_growth, "start_growth", 0, 10);
    check(double(c.over_epochs), "over_epochs", 1, 100);
    check(c.overdrive_ratio, "overdrive_ratio", 1.01, 100);
    check(c.drain_share, "drain_share", 0.05, 1);
    check(c.drain_max_s, "drain_max_s", 0.1, 60);
    check(c.startup_s, "startup_s", 0, 60);
}

RateControlConfig session_rate_config(double budget_bps, double min_bps, bool follow_path) {
    RateControlConfig rc;
    rc.ceiling_bps = budget_bps;
    rc.floor_bps = std::min(min_bps, budget_bps);
    rc.silence_bps = std::min(rc.silence_bps, rc.floor_bps);
    rc.fixed = !follow_path;
    return rc;
}

const char* rate_change_name(RateChange c) {
    switch (c) {
        case RateChange::None: return "none";
        case RateChange::Delay: return "delay";
        case RateChange::Loss: return "loss";
        case RateChange::Silence: return "silence";
        case RateChange::Recovered: return "recovered";
        case RateChange::Increase: return "increase";
    }
    return "?";
}

RateControl::RateControl(const RateControlConfig& cfg)
    : cfg_(cfg), rate_bps_(cfg.fixed ? cfg.ceiling_bps : std::max(cfg.floor_bps, cfg.start_share * cfg.ceiling_bps)) {
    validate(cfg_);
}

void RateControl::on_sent(uint16_t sequence, double now_s, size_t wire_bytes, bool measure) {
    Sent& s = sent_[sequence % sent_.size()];
    s = {sequence, now_s, uint32_t(wire_bytes), true, false, measure};
    if (out_since_s_ < 0) out_since_s_ = now_s;
    sent_bytes_.push_back({now_s, double(wire_bytes)});
    prune(sent_bytes_, now_s - 3.0);
    pending_.push_back(sequence);
    if (pending_.size() > sent_.size()) pending_.pop_front();  // older than the window: forgotten
    last_sent_s_ = now_s;
}

void RateControl::on_acked(uint16_t sequence, double now_s, bool newest) {
    Sent& s = sent_[sequence % sent_.size()];
    if (!s.used || s.sequence != sequence || s.acked) return;
    s.acked = true;
    last_ack_s_ = now_s;
    out_since_s_ = -1;
    // The first acknowledgement starts the delivered rate's interval; its bytes came before it.
    if (first_ack_s_ < 0)
        first_ack_s_ = now_s;
    if (session_first_ack_s_ < 0) session_first_ack_s_ = now_s;
    else
        acked_bytes_.push_back({now_s, double(s.bytes)});
    if (silent_) {  // the path answers again: what was sent before now waited out the silence
        silent_ = false;
        recovering_ = true;
        measure_after_s_ = now_s;
        settled_.clear();  // the silence's losses and rate are the outage's, not the path's now
        acked_bytes_.clear();
        first_ack_s_ = now_s;
        epoch_min_ = std::numeric_limits<double>::infinity();
        over_epochs_ = 0;
    }
    if (newest && s.measure && s.sent_s >= measure_after_s_) add_round_trip(now_s - s.sent_s);
    settle(now_s, s.sent_s);
}

void RateControl::add_round_trip(double rtt) {
    srtt_ = srtt_ == 0 ? rtt : 0.9 * srtt_ + 0.1 * rtt;
    epoch_min_ = std::min(epoch_min_, rtt);
}

void RateControl::settle(double now_s, double newest_sent_s) {
    // Not acknowledged while one sent this much later was: lost (jitter reorders within it).
    const double reorder = std::max(0.1, 0.5 * srtt_);
    while (!pending_.empty()) {
        const Sent& s = sent_[pending_.front() % sent_.size()];
        if (s.sequence != pending_.front() || !s.used) {
            pending_.pop_front();
            continue;
        }
        if (!s.acked && s.sent_s >= newest_sent_s - reorder) break;
        if (s.sent_s >= measure_after_s_) settled_.push_back({now_s, s.acked ? 0.0 : 1.0});
        pending_.pop_front();
    }
}

// Until 8 epochs have measured the noise, it is taken as at least a tenth of the round trip.
double RateControl::threshold_s() const {
    const double noise = jitter_epochs_ < 8 ? std::max(jitter_s_, 0.1 * srtt_) : jitter_s_;
    return cfg_.queue_target_s + cfg_.jitter_factor * noise;
}

double RateControl::queue_delay_s() const { return last_epoch_q_; }

void RateControl::lower(double now_s, RateChange why) {
    const double anchor = delivered_bps_ > 0 ? std::min(rate_bps_, delivered_bps_) : rate_bps_;
    // Below what the path delivered by as much as drains the queue in about drain_s.
    const double excess = std::max(0.0, last_epoch_q_ - 2.5 * jitter_s_);
    const double factor = std::clamp(1.0 - excess / cfg_.drain_s, 0.5, 0.9);
    const double next = std::max(cfg_.floor_bps, factor * anchor);
    last_decrease_s_ = now_s;
    q_at_decrease_ = last_epoch_q_;
    rtt_at_decrease_ = base_rtt() + last_epoch_q_;
    if (delivered_bps_ > 0) link_bps_ = delivered_bps_;  // what the path carried while it queued
    if (next >= rate_bps_) return;
    rate_bps_ = next;
    last_change_ = why;
    ++changes_[size_t(why)];
}

void RateControl::start_drain(double now_s) {
    link_bps_ = delivered_bps_;
    drain_ = true;
    drain_flat_epochs_ = 0;
    drain_start_s_ = now_s;
    last_decrease_s_ = now_s;
    rtt_at_decrease_ = std::max(srtt_, last_epoch_min_);  // the round trip now, its queue included
    const double next = std::max(cfg_.floor_bps, cfg_.drain_share * delivered_bps_);
    if (next >= rate_bps_) return;
    rate_bps_ = next;
    last_change_ = RateChange::Delay;
    ++changes_[size_t(RateChange::Delay)];
}

// A round trip after the drain began, the queue is gone once the least round trip is back at
// the path's own, or has stopped falling for two epochs (the path's own was never seen).
bool RateControl::drain_done(double now_s, double prev_min) {
    if (now_s - drain_start_s_ > cfg_.drain_max_s) return true;
    if (now_s - drain_start_s_ < rtt_at_decrease_ + cfg_.epoch_s) return false;
    if (epoch_min_ - base_rtt() <= 0.5 * threshold_s()) return true;
    const bool flat = prev_min >= 0 && epoch_min_ > prev_min - std::max(0.005, 2.0 * jitter_s_);
    drain_flat_epochs_ = flat ? drain_flat_epochs_ + 1 : 0;
    return drain_flat_epochs_ >= 2;
}

void RateControl::end_drain(double now_s) {
    drain_ = false;
    last_decrease_s_ = now_s;
    q_at_decrease_ = 0;
    rtt_at_decrease_ = epoch_min_;
    if (delivered_bps_ > 0) link_bps_ = delivered_bps_;  // the last second's, mostly while the queue drained
    rate_bps_ = std::min(cfg_.ceiling_bps, std::max(rate_bps_, std::max(cfg_.floor_bps, 0.9 * link_bps_)));
}

void RateControl::measure_window(double now_s) {
    prune(acked_bytes_, now_s - 1.0);
    prune(settled_, now_s - 1.0);
    double bytes = 0;
    for (const Sample& a : acked_bytes_) bytes += a.v;
    const double span = first_ack_s_ < 0 ? 1.0 : std::clamp(now_s - first_ack_s_, 0.1, 1.0);  // young sessions: their age
    delivered_bps_ = bytes * 8.0 / span;
    // What was sent over the same span a round trip earlier: the datagrams those acks are for.
    double sent = 0;
    for (const Sample& s : sent_bytes_)
        if (s.t >= now_s - srtt_ - span && s.t < now_s - srtt_) sent += s.v;
    sent_bps_ = sent * 8.0 / span;
    double lost = 0;
    for (const Sample& s : settled_) lost += s.v;
    loss_ = settled_.size() >= 10 ? lost / double(settled_.size()) : 0.0;
}

bool RateControl::silence_began(double now_s) {
    if (silent_ || out_since_s_ < 0 || last_ack_s_ < 0) return false;
    if (now_s - std::max(out_since_s_, last_ack_s_) <= std::max(cfg_.silence_s, 3.0 * srtt_)) return false;
    silent_ = true;
    // What was being judged before it is void: a drain, a run of lossy epochs.
    drain_ = false;
    drain_flat_epochs_ = 0;
    heavy_epochs_ = 0;
    // A silence while the last one's rate was not yet restored keeps that rate.
    rate_before_silence_ = std::max(rate_bps_, recovering_ ? rate_before_silence_ : 0.0);
    recovering_ = false;
    if (rate_bps_ > cfg_.silence_bps) {
        rate_bps_ = cfg_.silence_bps;
        last_change_ = RateChange::Silence;
        ++changes_[size_t(RateChange::Silence)];
    }
    return true;
}

void RateControl::update(double now_s) {
    if (cfg_.fixed) return;
    measure_window(now_s);
    if (silence_began(now_s) || silent_) return;
    if (epoch_start_ < 0) epoch_start_ = now_s;
    if (now_s - epoch_start_ < cfg_.epoch_s) return;
    const double dt = now_s - epoch_start_;
    epoch_start_ = now_s;
    if (!std::isfinite(epoch_min_)) return;  // no round trip measured in it
    end_epoch(now_s, dt);
}

void RateControl::end_epoch(double now_s, double dt) {
    if (drain_ && drain_done(now_s, last_epoch_min_)) end_drain(now_s);
    push_min(base_, now_s, epoch_min_);
    prune(base_, now_s - cfg_.base_window_s);
    last_epoch_q_ = std::max(0.0, epoch_min_ - base_rtt());
    const bool over = last_epoch_q_ > threshold_s();
    // A queue of our making holds back some of what we send: more went out than arrived (loss
    // aside). Without that, the delay is the path's noise or someone else's queue: no decrease,
    // and the epoch measures the noise.
    const bool ours = sent_bps_ * (1.0 - loss_) > 1.02 * delivered_bps_;
    if (last_epoch_min_ >= 0 && !ours) {
        // Successive epochs' least round trips differ by about 1.128 sd of their noise; a step far
        // beyond it (a queue forming) is clipped so it does not read as noise.
        const double step = std::min(std::fabs(epoch_min_ - last_epoch_min_), 3.0 * 1.128 * jitter_s_ + 0.005) / 1.128;
        jitter_s_ = jitter_epochs_ < 8 ? (jitter_s_ * double(jitter_epochs_) + step) / double(jitter_epochs_ + 1) : 0.9 * jitter_s_ + 0.1 * step;
        ++jitter_epochs_;
    }
    last_epoch_min_ = epoch_min_;
    epoch_min_ = std::numeric_limits<double>::infinity();
    over_epochs_ = over ? over_epochs_ + 1 : 0;
    if (last_epoch_q_ > 2.0 * threshold_s()) over_epochs_ = std::max(over_epochs_, cfg_.over_epochs);  // no noise is that deep
    decide(now_s, dt, over, ours);
}

void RateControl::decide(double now_s, double dt, bool over, bool ours) {
    if (recovering_) {
        if (over) return;  // what queued during the silence drains first
        recovering_ = false;
        if (rate_before_silence_ > rate_bps_) {
            rate_bps_ = std::min(cfg_.ceiling_bps, rate_before_silence_);
            last_change_ = RateChange::Recovered;
            ++changes_[size_t(RateChange::Recovered)];
        }
        return;
    }
    heavy_epochs_ = loss_ >= 0.5 ? heavy_epochs_ + 1 : 0;
    const bool heavy_loss = heavy_epochs_ >= 3;  // for 0.75 s: a burst of a lossy path is not it
    // What was sent before the decrease is still arriving for about the round trip it then had.
    const bool waited = now_s - last_decrease_s_ >= rtt_at_decrease_ + 2.0 * cfg_.epoch_s;
    const bool draining = now_s - last_decrease_s_ < cfg_.drain_s && last_epoch_q_ < q_at_decrease_;
    // Far more went out than arrived in a session's first seconds (loss bursts mimic it later).
    const bool starting = link_bps_ == 0 && session_first_ack_s_ >= 0 && now_s - session_first_ack_s_ < cfg_.startup_s;
    const bool overdriven = starting && delivered_bps_ > 0 && last_epoch_q_ > cfg_.queue_target_s && loss_ < 0.1 &&
                            sent_bps_ * (1.0 - loss_) > cfg_.overdrive_ratio * delivered_bps_;
    if (drain_) return;
    if (waited && overdriven) {
        start_drain(now_s);
        return;
    }
    if (waited && !draining && ((over_epochs_ >= cfg_.over_epochs && ours) || heavy_loss)) {
        lower(now_s, loss_ >= 0.25 ? RateChange::Loss : RateChange::Delay);
        return;
    }
    grow(now_s, dt);
}

// Grows only while the path shows less than half the queue it would be lowered for. Far below
// what the path carried when it last queued, it comes back quickly (2 % of the ceiling an epoch,
// the same step for every session so that two behind one bottleneck converge); near it, or with
// no such figure, additively; past it, at a quarter of that.
void RateControl::grow(double now_s, double dt) {
    if (last_epoch_q_ > 0.5 * threshold_s() || rate_bps_ >= cfg_.ceiling_bps || now_s - last_decrease_s_ < srtt_) return;
    const double step = link_bps_ == 0                 ? cfg_.start_growth * rate_bps_  // never queued yet: starting
                        : rate_bps_ < 0.85 * link_bps_ ? std::min(0.02 * cfg_.ceiling_bps, 0.85 * link_bps_ - rate_bps_)
                                                       : 0.0;
    const double probe = rate_bps_ >= 0.97 * link_bps_ && link_bps_ > 0 ? 0.25 : 1.0;  // past it: probing slowly
    rate_bps_ = std::min(cfg_.ceiling_bps, rate_bps_ + std::max(step, probe * cfg_.increase_bps_per_s * dt));
    last_change_ = RateChange::Increase;
}

}  // namespace ks::net
