#include "client/src/resync_throttle.h"

#include <algorithm>

namespace ks {

std::vector<ResyncRequest> ResyncThrottle::requests(const std::vector<RefusedCharacter>& refused, uint32_t tick, double now_s) {
    // One request per character: its part, or the whole character when it is not a known part
    // (unknown skeleton, bad range) or several of its parts were refused.
    std::map<uint16_t, uint16_t> wanted;
    for (const RefusedCharacter& r : refused) {
        const bool whole = r.error == SnapshotError::UnknownCharacter || r.error == SnapshotError::BadRange;
        const uint16_t first = whole ? uint16_t(0xFFFF) : uint16_t(r.joints.first);
        auto [it, fresh] = wanted.try_emplace(r.id, first);
        if (!fresh && it->second != first) it->second = 0xFFFF;
    }
    if (now_s - window_start_ >= 1.0) {
        window_start_ = now_s;
        in_window_ = 0;
    }
    if (last_.size() > 1024)  // forget requests older than the repeat interval
        for (auto it = last_.begin(); it != last_.end();) it = now_s - it->second >= kRepeatS ? last_.erase(it) : std::next(it);
    std::vector<ResyncRequest> out;
    for (const auto& [id, first] : wanted) {
        const uint32_t key = uint32_t(id) << 16 | first;
        const auto it = last_.find(key);
        if (it != last_.end() && now_s - it->second < kRepeatS) continue;
        if (in_window_ >= kMaxPerSecond || last_.size() > 4096) {
            ++suppressed_;
            continue;
        }
        last_[key] = now_s;
        ++in_window_;
        out.push_back({id, first, tick});
    }
    return out;
}

}  // namespace ks
