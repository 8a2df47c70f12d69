#include "client/src/challenge_sample.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "common/src/platform/random.h"

namespace ks {

uint64_t os_random_below(uint64_t bound) {
    if (bound == 0) throw std::invalid_argument("os_random_below: bound 0");
    // Values below 2^64 mod bound would make the low residues likelier: drawn again (rarely).
    const uint64_t reject_below = (0 - bound) % bound;
    for (;;) {
        std::array<uint8_t, 8> b{};
        platform::random_bytes(b);
        uint64_t v = 0;
        for (uint8_t byte : b) v = v << 8 | byte;
        if (v >= reject_below) return v % bound;
    }
}

ChallengeSample::ChallengeSample(size_t keep, Draw draw) : keep_(std::max<size_t>(1, keep)), draw_(std::move(draw)) {
    if (!draw_) draw_ = os_random_below;
}

ChallengeSample::Offer ChallengeSample::offer(const net::Cookie& cookie) {
    if (std::find(kept_.begin(), kept_.end(), cookie) != kept_.end()) return Offer::Duplicate;
    const uint64_t index = seen_++;
    if (kept_.size() < keep_) {
        kept_.push_back(cookie);
        return Offer::AnswerNow;
    }
    const uint64_t j = draw_(index + 1);
    if (j >= keep_) return Offer::Dropped;
    kept_[size_t(j)] = cookie;
    return Offer::Sampled;
}

void ChallengeSample::next_round() {
    kept_.clear();
    seen_ = 0;
}

}  // namespace ks
