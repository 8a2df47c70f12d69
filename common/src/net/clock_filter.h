#pragma once
// The server clock's offset as a client estimates it from its Pings (schema/PROTOCOL.md, "Time
// sync"), shared by the live client and the replay. Each Pong gives a round trip and an offset
// (server time - local time, taking the answer as sent halfway); its error is half the difference
// of the two one-way delays. Random jitter makes that error as often positive as negative, but a
// queue on one direction (a bottleneck filling) adds half its depth to every sample taken while
// it lasts. So the estimate is the mean offset of the quarter of the last 30 s's samples with the
// least round trips: those taken before a queue formed, or with the least of it.

#include <algorithm>
#include <cstddef>
#include <deque>
#include <vector>

namespace ks::net {

class ClockOffsetFilter {
public:
    static constexpr double kWindowS = 30.0;
    static constexpr size_t kMaxSamples = 256;

    void add(double now_s, double rtt_s, double offset_s) {
        samples_.push_back({now_s, rtt_s, offset_s});
        while (samples_.size() > kMaxSamples || (samples_.size() > 1 && samples_.front().t < now_s - kWindowS)) samples_.pop_front();
        std::vector<Sample> by_rtt(samples_.begin(), samples_.end());
        const size_t keep = std::max<size_t>(1, by_rtt.size() / 4);
        std::nth_element(by_rtt.begin(), by_rtt.begin() + std::ptrdiff_t(keep - 1), by_rtt.end(),
                         [](const Sample& a, const Sample& b) { return a.rtt < b.rtt; });
        double sum = 0;
        for (size_t i = 0; i < keep; ++i) sum += by_rtt[i].offset;
        offset_s_ = sum / double(keep);
    }
    bool valid() const { return !samples_.empty(); }
    double offset_s() const { return offset_s_; }

private:
    struct Sample {
        double t, rtt, offset;
    };
    std::deque<Sample> samples_;
    double offset_s_ = 0;
};

}  // namespace ks::net
