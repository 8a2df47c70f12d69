#pragma once
// Which Resync requests a client sends for the snapshot entries it refused (schema/PROTOCOL.md,
// "Snapshots and acks"): at most one per part per 100 ms (the deltas that keep failing until the
// full update arrives do not each ask again), several refused parts of one character in a
// datagram asked as the whole character, and at most kMaxPerSecond in all, so a hostile or broken
// server cannot make the client flood it (or exhaust its own per-session rate). Bounded memory.

#include <cstdint>
#include <map>
#include <vector>

#include "common/src/codec/snapshot_codec.h"

namespace ks {

struct ResyncRequest {
    uint16_t character;
    uint16_t first_joint;  // 0xFFFF: every part
    uint32_t tick;
};

class ResyncThrottle {
public:
    static constexpr int kMaxPerSecond = 20;
    static constexpr double kRepeatS = 0.1;
    // The requests to send for one datagram's refused entries (of snapshot tick `tick`).
    std::vector<ResyncRequest> requests(const std::vector<RefusedCharacter>& refused, uint32_t tick, double now_s);
    void clear() {
        last_.clear();
        window_start_ = -1e9;
        in_window_ = 0;
    }
    uint64_t suppressed() const { return suppressed_; }  // requests held back by the rate limit

private:
    std::map<uint32_t, double> last_;  // (character << 16 | first joint) -> when last asked
    double window_start_ = -1e9;
    int in_window_ = 0;
    uint64_t suppressed_ = 0;
};

}  // namespace ks
