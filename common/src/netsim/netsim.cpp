#include "common/src/netsim/netsim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

namespace ks {

namespace {

// SplitMix64 finaliser: decorrelates the seeds of the streams derived from one user seed.
uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t stream_seed(uint64_t seed, uint64_t stream) { return mix64(mix64(seed) ^ mix64(0x6E657473696D0000ull + stream)); }

// Heavy-tailed noise: Pareto(x_m = 1, alpha = 3) has mean 1.5 and variance 0.75.
constexpr double kParetoMean = 1.5;
const double kParetoSd = std::sqrt(0.75);

std::string fmt_num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

bool NetworkSimulator::later(const Pending& a, const Pending& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.order > b.order;
}

std::vector<std::string> net_profile_names() { return {"lan", "broadband", "mobile", "hostile"}; }

NetProfile net_profile(const std::string& name) {
    NetProfile p;
    p.name = name;
    if (name == "lan") {
        p.latency_ms = 2;
        p.jitter_ms = 1;
    } else if (name == "broadband") {
        p.latency_ms = 50;
        p.jitter_ms = 10;
        p.loss = 0.01;
    } else if (name == "mobile") {
        p.latency_ms = 90;
        p.jitter_ms = 30;
        p.loss = 0.03;
        p.burst = true;
        p.duplicate = 0.01;
    } else if (name == "hostile") {
        p.latency_ms = 150;
        p.jitter_ms = 60;
        p.loss = 0.10;
        p.burst = true;
        p.duplicate = 0.02;
    } else {
        std::string valid;
        for (const std::string& n : net_profile_names()) valid += (valid.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown network profile '" + name + "' (valid: " + valid + ")");
    }
    return p;
}

std::string describe(const NetProfile& p) {
    std::string s = p.name + ": " + fmt_num(p.latency_ms) + " ms +- " + fmt_num(p.jitter_ms) + " ms sd (" +
                    (p.jitter_kind == JitterKind::Normal ? "normal" : "heavy-tailed") + "), loss " +
                    fmt_num(p.loss * 100.0) + "%";
    if (p.burst && p.loss > 0) s += " (bursts, mean " + fmt_num(p.burst_length) + ")";
    s += ", dup " + fmt_num(p.duplicate * 100.0) + "%, ";
    if (p.bandwidth_kbps > 0)
        s += fmt_num(p.bandwidth_kbps) + " kbps, queue " + std::to_string(p.queue_bytes) + " B";
    else
        s += "unlimited";
    return s;
}

void validate(const NetProfile& p) {
    auto bad = [&](const std::string& what) {
        throw std::invalid_argument("network profile '" + p.name + "': " + what);
    };
    auto check = [&](double v, const char* field, double lo, double hi) {
        if (!std::isfinite(v) || v < lo || v > hi)
            bad(std::string(field) + " = " + fmt_num(v) + " is outside [" + fmt_num(lo) + ", " + fmt_num(hi) + "]");
    };
    const double inf = std::numeric_limits<double>::max();
    check(p.latency_ms, "latency_ms", 0, inf);
    check(p.jitter_ms, "jitter_ms", 0, inf);
    check(p.loss, "loss", 0, 1);
    check(p.duplicate, "duplicate", 0, 1);
    check(p.bandwidth_kbps, "bandwidth_kbps", 0, inf);
    if (p.burst && p.loss < 1) {  // loss 1 loses everything, bursts or not
        check(p.burst_length, "burst_length", 1, inf);
        const double max_loss = p.burst_length / (p.burst_length + 1.0);
        if (p.loss > max_loss)
            bad("burst loss " + fmt_num(p.loss) + " is above " + fmt_num(max_loss) +
                ", the most bursts of mean length " + fmt_num(p.burst_length) + " can lose");
    }
}

NetworkSimulator::NetworkSimulator(const NetProfile& p, uint64_t seed)
    : profile_(p),
      loss_rng_(stream_seed(seed, 0)),
      dup_rng_(stream_seed(seed, 1)),
      delay_rng_(stream_seed(seed, 2)) {
    validate(p);
    if (p.burst && p.loss > 0 && p.loss < 1) {
        p_bad_to_good_ = 1.0 / p.burst_length;
        p_good_to_bad_ = std::min(1.0, p_bad_to_good_ * p.loss / (1.0 - p.loss));
        bad_ = uniform(loss_rng_) < p.loss;  // start in the stationary distribution
    }
}

double NetworkSimulator::uniform(std::mt19937_64& rng) const { return double(rng() >> 11) * 0x1.0p-53; }

double NetworkSimulator::normal() {
    if (has_spare_normal_) {
        has_spare_normal_ = false;
        return spare_normal_;
    }
    double u, v, s;
    do {
        u = 2.0 * uniform(delay_rng_) - 1.0;
        v = 2.0 * uniform(delay_rng_) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_normal_ = v * f;
    has_spare_normal_ = true;
    return u * f;
}

double NetworkSimulator::delay_s() {
    double noise = 0;
    if (profile_.jitter_ms > 0) {
        if (profile_.jitter_kind == JitterKind::Normal) {
            noise = normal();
        } else {
            const double u = 1.0 - uniform(delay_rng_);  // (0, 1]
            noise = (1.0 / std::cbrt(u) - kParetoMean) / kParetoSd;
        }
    }
    return std::max(0.0, profile_.latency_ms + profile_.jitter_ms * noise) * 1e-3;
}

bool NetworkSimulator::lose() {
    if (profile_.loss <= 0) return false;
    if (profile_.loss >= 1) return true;
    if (!profile_.burst) return uniform(loss_rng_) < profile_.loss;
    const bool lost = bad_;
    const double u = uniform(loss_rng_);
    bad_ = bad_ ? !(u < p_bad_to_good_) : (u < p_good_to_bad_);
    return lost;
}

void NetworkSimulator::send(double now_s, std::vector<uint8_t> datagram) {
    ++stats_.sent;
    double leave = now_s;
    if (profile_.bandwidth_kbps > 0) {
        const double bytes_per_s = profile_.bandwidth_kbps * 1000.0 / 8.0;
        const double wire = double(datagram.size() + kNetSimHeaderBytes);
        const double backlog = std::max(0.0, link_free_at_ - now_s) * bytes_per_s;
        // A small epsilon so float round-off in the backlog never drops a datagram that fits exactly.
        if (backlog + wire > double(profile_.queue_bytes) + 1e-6) {
            ++stats_.queue_dropped;
            return;
        }
        leave = std::max(now_s, link_free_at_) + wire / bytes_per_s;
        link_free_at_ = leave;
    }
    if (lose()) {
        ++stats_.lost;
        return;
    }
    const bool dup = profile_.duplicate > 0 && uniform(dup_rng_) < profile_.duplicate;
    const double delay = delay_s();
    std::vector<uint8_t> copy;
    if (dup) {
        ++stats_.duplicated;
        copy = datagram;
    }
    heap_.push_back({leave + delay, next_order_++, std::move(datagram)});
    std::push_heap(heap_.begin(), heap_.end(), later);
    if (dup) {
        heap_.push_back({leave + delay_s(), next_order_++, std::move(copy)});
        std::push_heap(heap_.begin(), heap_.end(), later);
    }
}

std::vector<std::vector<uint8_t>> NetworkSimulator::receive(double now_s, std::vector<double>* times) {
    std::vector<std::vector<uint8_t>> out;
    while (!heap_.empty() && heap_.front().time <= now_s) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        if (times) times->push_back(heap_.back().time);
        out.push_back(std::move(heap_.back().data));
        heap_.pop_back();
    }
    stats_.delivered += out.size();
    return out;
}

double NetworkSimulator::next_delivery_time() const {
    return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().time;
}

size_t NetworkSimulator::in_flight() const { return heap_.size(); }

NetLink::NetLink(const NetProfile& p, uint64_t seed) : up(p, mix64(seed ^ 0x7570ull)), down(p, mix64(seed ^ 0x646F776Eull)) {}

}  // namespace ks
