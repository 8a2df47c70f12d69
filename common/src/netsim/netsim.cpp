#include "common/src/netsim/netsim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
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

std::vector<std::string> bottleneck_profile_names() { return {"broadband-128k", "broadband-64k", "mobile-128k"}; }

NetProfile net_profile(const std::string& name) {
    const auto bottlenecked = bottleneck_profile_names();
    if (std::find(bottlenecked.begin(), bottlenecked.end(), name) != bottlenecked.end()) {
        NetProfile p = net_profile(name.substr(0, name.find('-')));
        p.name = name;
        p.bandwidth_kbps = name.ends_with("-64k") ? 64 : 128;
        p.queue_ms = 500;
        return p;
    }
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
        for (const std::string& n : bottleneck_profile_names()) valid += ", " + n;
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
    if (p.trace)
        s += "trace " + p.trace->source + " (mean " + fmt_num(std::round(p.trace->mean_kbps())) + " kbps)";
    else if (p.bandwidth_kbps > 0)
        s += fmt_num(p.bandwidth_kbps) + " kbps";
    else
        s += "unlimited";
    if (p.bottlenecked()) s += p.queue_ms > 0 ? ", queue " + fmt_num(p.queue_ms) + " ms" : ", queue " + std::to_string(p.queue_bytes) + " B";
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
    check(p.queue_ms, "queue_ms", 0, inf);
    if (p.trace) {
        const LinkTrace& t = *p.trace;
        if (t.ms.empty() || !(t.period() > 0) || t.ms.back() > t.period() || !std::is_sorted(t.ms.begin(), t.ms.end()) || t.ms.front() < 0)
            bad("trace " + t.source + ": its times must be sorted, in [0, period], the period > 0");
        check(p.trace->bytes_per_opportunity, "trace.bytes_per_opportunity", 1, inf);
    }
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

std::optional<double> NetworkSimulator::bottleneck_leave(double now_s, double wire) {
    if (profile_.trace) return trace_leave(now_s, wire);
    const double bytes_per_s = profile_.bandwidth_kbps * 1000.0 / 8.0;
    const double backlog = std::max(0.0, link_free_at_ - now_s) * bytes_per_s;
    const double start = std::max(now_s, link_free_at_);
    const double leave = start + wire / bytes_per_s;
    // A small epsilon so float round-off in the backlog never drops a datagram that fits exactly.
    const bool full = profile_.queue_ms > 0 ? leave - now_s > profile_.queue_ms * 1e-3 + 1e-9
                                            : backlog + wire > double(profile_.queue_bytes) + 1e-6;
    if (full) return std::nullopt;
    link_free_at_ = leave;
    last_wait_s_ = start - now_s;
    return leave;
}

double NetworkSimulator::opportunity_s(uint64_t k) const {
    const std::vector<double>& ms = profile_.trace->ms;
    const uint64_t n = ms.size();
    return *trace_start_ + (double(k / n) * profile_.trace->period() + ms[size_t(k % n)]) * 1e-3;
}

std::optional<double> NetworkSimulator::trace_leave(double now_s, double wire) {
    const double per = profile_.trace->bytes_per_opportunity;
    if (!trace_start_) trace_start_ = now_s, next_opportunity_ = 0, opportunity_left_ = per;
    while (!queued_.empty() && queued_.front().first <= now_s) queued_.pop_front();
    uint64_t k = next_opportunity_;
    double left = opportunity_left_;
    if (queued_.empty())  // an idle link: the opportunities that went by carried nothing
        while (opportunity_s(k) < now_s) ++k, left = per;
    const double start = std::max(now_s, opportunity_s(left > 1e-9 ? k : k + 1));
    double rest = wire;
    while (rest > left + 1e-9) {
        rest -= left;
        ++k;
        left = per;
    }
    const double leave = std::max(now_s, opportunity_s(k));
    double backlog = 0;
    for (const auto& q : queued_) backlog += q.second;
    const bool full = profile_.queue_ms > 0 ? leave - now_s > profile_.queue_ms * 1e-3 + 1e-9
                                            : backlog + wire > double(profile_.queue_bytes) + 1e-6;
    if (full) return std::nullopt;
    left -= rest;
    if (left <= 1e-9) ++k, left = per;
    next_opportunity_ = k;
    opportunity_left_ = left;
    queued_.push_back({leave, wire});
    last_wait_s_ = start - now_s;
    return leave;
}

void NetworkSimulator::send(double now_s, std::vector<uint8_t> datagram) {
    ++stats_.sent;
    double leave = now_s;
    if (profile_.bottlenecked()) {
        const std::optional<double> l = bottleneck_leave(now_s, double(datagram.size() + kNetSimHeaderBytes));
        if (!l) {
            ++stats_.queue_dropped;
            return;
        }
        leave = *l;
        stats_.queue_wait.add(last_wait_s_);
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
    heap_.push_back({leave + delay, now_s, next_order_++, std::move(datagram)});
    std::push_heap(heap_.begin(), heap_.end(), later);
    if (dup) {
        heap_.push_back({leave + delay_s(), now_s, next_order_++, std::move(copy)});
        std::push_heap(heap_.begin(), heap_.end(), later);
    }
}

std::vector<std::vector<uint8_t>> NetworkSimulator::receive(double now_s, std::vector<double>* times) {
    std::vector<std::vector<uint8_t>> out;
    while (!heap_.empty() && heap_.front().time <= now_s) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        if (times) times->push_back(heap_.back().time);
        stats_.delay.add(heap_.back().time - heap_.back().sent);
        stats_.bytes_delivered += heap_.back().data.size() + kNetSimHeaderBytes;
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

NetLink::NetLink(const NetProfile& p, uint64_t seed) : NetLink(p, p, seed) {}

NetLink::NetLink(const NetProfile& down_profile, const NetProfile& up_profile, uint64_t seed)
    : up(up_profile, mix64(seed ^ 0x7570ull)), down(down_profile, mix64(seed ^ 0x646F776Eull)) {}

void DelayHistogram::add(double seconds) {
    const double ms = std::max(0.0, seconds * 1e3);
    ++bins_[size_t(std::min(ms, double(bins_.size() - 1)))];
    ++count_;
    sum_ms_ += ms;
    max_ms_ = std::max(max_ms_, ms);
}

DelayHistogram DelayHistogram::since(const DelayHistogram& earlier) const {
    DelayHistogram d = *this;
    for (size_t i = 0; i < bins_.size(); ++i) d.bins_[i] -= std::min(d.bins_[i], earlier.bins_[i]);
    d.count_ -= std::min(d.count_, earlier.count_);
    d.sum_ms_ = std::max(0.0, d.sum_ms_ - earlier.sum_ms_);
    return d;
}

double DelayHistogram::percentile_ms(double p) const {
    if (count_ == 0) return 0.0;
    const double want = std::clamp(p, 0.0, 100.0) / 100.0 * double(count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < bins_.size(); ++i) {
        seen += bins_[i];
        if (double(seen) >= want && seen > 0) return double(i) + 0.5;  // the bin's middle
    }
    return double(bins_.size() - 1);
}

double LinkTrace::mean_kbps() const {
    if (!(period() > 0)) return 0.0;
    return double(ms.size()) * bytes_per_opportunity * 8.0 / period();  // bytes per ms * 8 = kbit/s
}

LinkTrace read_link_trace(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(path + ": cannot open the trace");
    LinkTrace t;
    t.source = path;
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        char* end = nullptr;
        const unsigned long long v = std::strtoull(line.c_str(), &end, 10);
        if (end == line.c_str() || *end != '\0' || line[0] == '-')
            throw std::invalid_argument(path + ":" + std::to_string(n) + ": '" + line.substr(0, 40) + "' is not a time in ms");
        if (!t.ms.empty() && double(v) < t.ms.back())
            throw std::invalid_argument(path + ":" + std::to_string(n) + ": " + line + " ms comes after " + fmt_num(t.ms.back()) + " ms");
        t.ms.push_back(double(v));
    }
    if (t.ms.empty() || !(t.ms.back() > 0)) throw std::invalid_argument(path + ": no opportunity after 0 ms (an empty trace?)");
    return t;
}

LinkTrace link_trace_from_rates(const std::vector<std::pair<double, double>>& segments, double bytes_per_opportunity) {
    LinkTrace t;
    t.bytes_per_opportunity = bytes_per_opportunity;
    t.source = "rates";
    double start_ms = 0;
    for (const auto& [seconds, kbps] : segments) {
        t.source.append(" ").append(fmt_num(seconds)).append("s@").append(fmt_num(kbps));
        const double end_ms = start_ms + seconds * 1e3;
        if (kbps > 0) {
            const double every_ms = bytes_per_opportunity * 8.0 / kbps;
            for (double at = start_ms + every_ms; at <= end_ms + 1e-9; at += every_ms) t.ms.push_back(at);
        }
        start_ms = end_ms;
    }
    t.period_ms = start_ms;
    if (t.ms.empty()) throw std::invalid_argument("link_trace_from_rates: no segment carries anything");
    return t;
}

}  // namespace ks
