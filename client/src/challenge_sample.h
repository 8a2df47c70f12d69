#pragma once
// The Challenges one handshake round answers (client/src/session.h). The first `keep` verified
// Challenges of a round are answered at once; any beyond them are sampled into their places
// (reservoir sampling), so at the round's end each of the round's Challenges is among those
// answered with the same odds, keep / seen.
//
// The draws come from the operating system's random source (common/src/platform/random.h), never
// from anything on the wire: the handshake's salt travels in clear, and an observer who could
// predict the draws would place relayed Challenges so that the client's own is always the one
// thrown away (schema/PROTOCOL.md, "Handshake").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/src/net/protocol.h"

namespace ks {

class ChallengeSample {
public:
    // A uniform draw in [0, bound), bound >= 1. Empty: the operating system's random source.
    using Draw = std::function<uint64_t(uint64_t bound)>;

    explicit ChallengeSample(size_t keep = 8, Draw draw = {});

    enum class Offer {
        Duplicate,  // already kept this round: nothing to do
        AnswerNow,  // one of the round's first `keep`: answer it now (it is kept too)
        Sampled,    // took the place of an earlier one, answered at the round's end
        Dropped,    // not in the sample
    };
    Offer offer(const net::Cookie& cookie);
    // The round's sample: what the round's end answers.
    const std::vector<net::Cookie>& kept() const { return kept_; }
    uint64_t seen() const { return seen_; }
    // A new round: nothing kept, nothing seen (the draws go on from the same source).
    void next_round();

private:
    size_t keep_;
    Draw draw_;
    std::vector<net::Cookie> kept_;
    uint64_t seen_ = 0;
};

// A uniform draw in [0, bound) from the operating system's random source, without modulo bias.
uint64_t os_random_below(uint64_t bound);

}  // namespace ks
