#pragma once
// What the server sent that did not arrive, told apart from what it never sent.
//
// Every datagram of a session takes the server's next sequence number, so a gap in the sequence
// after the first datagram (the Accept) is a datagram lost on the way; one that lands later
// (within the last kWindow) was late, not lost. Snapshot ticks cannot be counted that way: the
// server skips ticks on purpose (nothing moved, the budget, definitions being resent). Between two
// snapshots, the ticks skipped count as lost only up to the datagrams missing between them; so a
// skip with no gap costs nothing. The count is over when a datagram lost there carried something
// else (an event, a further part), and under when the stretch is longer than kWindow (only its
// last kWindow datagrams are looked at).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "common/src/net/secure_channel.h"

namespace ks {

struct LossCounts {
    uint64_t datagrams_lost = 0, datagrams_late = 0;
    uint64_t snapshots_received = 0, snapshots_lost = 0, snapshots_late = 0;
};

class LossCounter {
public:
    LossCounter() = default;
    // Datagrams remembered for late arrivals: as many as a sealed session's replay window lets in.
    static constexpr int64_t kWindow = int64_t(net::ReplayWindow::kSize);

    // Every datagram of the session, once authenticated, in arrival order.
    void on_datagram(uint16_t sequence);
    // A snapshot datagram the session read; step: the snapshot interval in ticks.
    void on_snapshot(uint16_t sequence, uint32_t tick, uint32_t step);
    // A snapshot datagram whose framing was unreadable: it arrived, its tick does not count.
    void on_unused_snapshot(uint16_t sequence) { on_datagram(sequence); }
    const LossCounts& counts() const { return c_; }
    // A new connection: its sequence starts again; the counts go on.
    void restart() { *this = LossCounter(c_); }

private:
    explicit LossCounter(const LossCounts& c) : c_(c) {}
    enum class Arrival { New, Late, Ignored };  // Ignored: a duplicate, or older than the window
    // Snapshot ticks skipped between two received ones, and the datagrams missing between them.
    struct Span {
        int64_t lo, hi;            // sequences of the snapshots at either end (exclusive)
        uint32_t tick_lo, tick_hi;
        uint64_t skipped, missing;
        std::vector<uint32_t> arrived;  // skipped ticks that came late
    };

    Arrival arrive(int64_t s);
    int64_t unwrap(uint16_t sequence) const;
    bool received(int64_t s) const { return got_[size_t(s % kWindow)] != 0; }
    uint64_t missing_between(int64_t lo, int64_t hi) const;
    Span* span_of(int64_t s);
    void fill(Span& span, bool tick);  // a missing datagram of the span arrived (one of its ticks)

    LossCounts c_;
    int64_t newest_ = -1;  // unwrapped sequence; -1: none yet
    std::vector<uint8_t> got_ = std::vector<uint8_t>(size_t(kWindow));  // by unwrapped sequence % kWindow
    bool any_tick_ = false;
    uint32_t newest_tick_ = 0;
    int64_t newest_tick_sequence_ = 0;  // the newest tick's latest datagram
    std::deque<Span> spans_;            // the last kWindow datagrams' worth
};

}  // namespace ks
