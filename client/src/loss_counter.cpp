#include "client/src/loss_counter.h"

#include <algorithm>

#include "common/src/net/protocol.h"

namespace ks {

// Sequences unwrapped into a 64-bit count, starting one wrap up so a late first arrival stays >= 0.
int64_t LossCounter::unwrap(uint16_t sequence) const {
    if (newest_ < 0) return int64_t(sequence) + 65536;
    return newest_ + net::sequence_difference(sequence, uint16_t(newest_));
}

// Whatever came before the first datagram counts as received: it was sent before this connection
// could take it (a resent Accept, or what followed a lost one), not lost on the way.
LossCounter::Arrival LossCounter::arrive(int64_t s) {
    if (newest_ < 0) std::fill(got_.begin(), got_.end(), uint8_t(1));
    if (newest_ < 0 || s > newest_) {
        if (newest_ >= 0) {
            c_.datagrams_lost += uint64_t(s - newest_ - 1);
            for (int64_t k = std::max(newest_ + 1, s - kWindow + 1); k < s; ++k) got_[size_t(k % kWindow)] = 0;
        }
        got_[size_t(s % kWindow)] = 1;
        newest_ = s;
        while (!spans_.empty() && spans_.front().hi <= newest_ - kWindow) spans_.pop_front();
        return Arrival::New;
    }
    if (s <= newest_ - kWindow || received(s)) return Arrival::Ignored;
    got_[size_t(s % kWindow)] = 1;
    --c_.datagrams_lost;
    ++c_.datagrams_late;
    return Arrival::Late;
}

// Datagrams older than the window count as received: a span that long is not looked into.
uint64_t LossCounter::missing_between(int64_t lo, int64_t hi) const {
    uint64_t n = 0;
    for (int64_t s = std::max(lo, newest_ - kWindow) + 1; s < hi; ++s) n += !received(s);
    return n;
}

LossCounter::Span* LossCounter::span_of(int64_t s) {
    for (auto it = spans_.rbegin(); it != spans_.rend(); ++it)
        if (it->lo < s && s < it->hi) return &*it;
    return nullptr;
}

void LossCounter::fill(Span& span, bool tick) {
    const uint64_t before = std::min(span.skipped, span.missing);
    if (span.missing > 0) --span.missing;
    if (tick && span.skipped > 0) --span.skipped;
    c_.snapshots_lost -= before - std::min(span.skipped, span.missing);
}

void LossCounter::on_datagram(uint16_t sequence) {
    const int64_t s = unwrap(sequence);
    if (arrive(s) != Arrival::Late) return;
    if (Span* span = span_of(s)) fill(*span, false);
}

void LossCounter::on_snapshot(uint16_t sequence, uint32_t tick, uint32_t step) {
    const int64_t s = unwrap(sequence);
    const Arrival a = arrive(s);
    if (a == Arrival::Ignored) return;
    Span* span = a == Arrival::Late ? span_of(s) : nullptr;
    if (!any_tick_ || tick > newest_tick_) {
        if (span) fill(*span, false);
        const uint64_t gap = uint64_t(tick) - newest_tick_;
        const uint64_t half = step / 2;
        const uint64_t skipped = any_tick_ && gap > half ? (gap - half - 1) / std::max<uint32_t>(1, step) : 0;
        if (skipped > 0) {
            Span fresh{newest_tick_sequence_, s, newest_tick_, tick, skipped, missing_between(newest_tick_sequence_, s), {}};
            c_.snapshots_lost += std::min(fresh.skipped, fresh.missing);
            if (fresh.missing > 0) spans_.push_back(std::move(fresh));
        }
        any_tick_ = true;
        newest_tick_ = tick;
        newest_tick_sequence_ = s;
        ++c_.snapshots_received;
    } else if (tick == newest_tick_) {
        newest_tick_sequence_ = std::max(newest_tick_sequence_, s);
        if (span) fill(*span, false);
    } else if (span) {
        const bool skipped_tick = tick > span->tick_lo && tick < span->tick_hi &&
                                  std::find(span->arrived.begin(), span->arrived.end(), tick) == span->arrived.end();
        if (skipped_tick) {
            span->arrived.push_back(tick);
            ++c_.snapshots_late;
            ++c_.snapshots_received;
        }
        fill(*span, skipped_tick);
    }
}

}  // namespace ks
