#include "common/src/net/protocol.h"

namespace ks::net {

bool AckTracker::on_received(uint16_t sequence) {
    if (bits_ == 0) {
        ack_ = sequence;
        bits_ = 1;
        return true;
    }
    const int d = sequence_difference(sequence, ack_);
    if (d > 0) {
        bits_ = d >= 32 ? 1u : (bits_ << d) | 1u;
        ack_ = sequence;
        return true;
    }
    const int age = -d;  // 0: duplicate of ack itself
    if (age >= 32) return false;
    const uint32_t bit = 1u << age;
    if (bits_ & bit) return false;
    bits_ |= bit;
    return true;
}

void SentPacketLog::on_sent(uint16_t sequence, uint64_t tag) {
    Entry& e = entries_[sequence % kWindow];
    e.sequence = sequence;
    e.used = true;
    e.acked = false;
    e.tag = tag;
    if (!any_sent_ || sequence_greater_than(sequence, newest_)) newest_ = sequence;
    any_sent_ = true;
}

size_t SentPacketLog::on_ack(uint16_t ack, uint32_t ack_bits, std::vector<Acked>& out) {
    if (!any_sent_) return 0;
    size_t n = 0;
    for (int i = 31; i >= 0; --i) {
        if (!(ack_bits & (1u << i))) continue;
        const uint16_t s = uint16_t(ack - i);
        const int age = sequence_difference(newest_, s);
        if (age < 0 || age >= int(kWindow)) continue;  // not sent yet, or forgotten
        Entry& e = entries_[s % kWindow];
        if (!e.used || e.sequence != s || e.acked) continue;
        e.acked = true;
        out.push_back({s, e.tag});
        ++n;
    }
    return n;
}

bool SentPacketLog::acked(uint16_t sequence) const {
    const Entry& e = entries_[sequence % kWindow];
    const int age = sequence_difference(newest_, sequence);
    return any_sent_ && age >= 0 && age < int(kWindow) && e.used && e.sequence == sequence && e.acked;
}

std::optional<uint64_t> SentPacketLog::tag(uint16_t sequence) const {
    const Entry& e = entries_[sequence % kWindow];
    const int age = sequence_difference(newest_, sequence);
    if (!any_sent_ || age < 0 || age >= int(kWindow) || !e.used || e.sequence != sequence) return std::nullopt;
    return e.tag;
}

}  // namespace ks::net
