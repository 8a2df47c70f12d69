// Network simulator (common/netsim): the named profiles of docs/FIDELITY.md, and over 100k datagrams
// the statistics each knob promises: loss rate, loss-run lengths (random and Gilbert-Elliott
// bursts), duplicate rate, delay mean and sd (with the clamp at 0 accounted for exactly),
// reordering (from jitter only), determinism per seed, the bandwidth cap's rate and tail drop, and
// the heavy-tailed jitter's tail and median.
//
// Tolerances are 4 standard errors of the estimate (computed from the model in each test, with
// the Markov chain's correlation for burst loss), so a correct simulator fails ~1 in 16000 per
// check; the seeds are fixed, so the outcome is deterministic anyway.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/src/netsim/netsim.h"
#include "tests/support/fd.h"
#include "tests/support/scratch.h"

namespace ks {
namespace {

using test::record_figure;

constexpr size_t kN = 100000;

std::vector<uint8_t> payload(uint64_t index, size_t bytes = 16) {
    std::vector<uint8_t> d(std::max<size_t>(bytes, 8), 0xA5);
    for (int b = 0; b < 8; ++b) d[size_t(b)] = uint8_t(index >> (8 * b));
    return d;
}

uint64_t index_of(const std::vector<uint8_t>& d) {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= uint64_t(d[size_t(b)]) << (8 * b);
    return v;
}

// Everything a run delivered, in delivery order, with exact delivery times.
struct Trace {
    std::vector<uint64_t> order;   // index of each delivery
    std::vector<double> at;        // its delivery time
    std::vector<int> copies;       // per index: how many copies arrived
    std::vector<double> delays;    // per delivery: at - send time
    NetworkSimulator::Stats stats{};
};

// Sends n datagrams, datagram i at i * dt, then drains the simulator one delivery time at a time.
Trace run(NetworkSimulator& sim, size_t n, double dt, size_t bytes = 16) {
    Trace t;
    t.copies.assign(n, 0);
    for (size_t i = 0; i < n; ++i) sim.send(double(i) * dt, payload(i, bytes));
    while (sim.in_flight() > 0) {
        const double now = sim.next_delivery_time();
        for (const auto& d : sim.receive(now)) {
            const uint64_t i = index_of(d);
            t.order.push_back(i);
            t.at.push_back(now);
            t.delays.push_back(now - double(i) * dt);
            ++t.copies[i];
        }
    }
    t.stats = sim.stats();
    return t;
}

Trace run(const NetProfile& p, uint64_t seed, size_t n, double dt, size_t bytes = 16) {
    NetworkSimulator sim(p, seed);
    return run(sim, n, dt, bytes);
}

struct RunLengths {
    size_t runs = 0;
    double mean = 0;
};
RunLengths loss_runs(const Trace& t) {
    RunLengths r;
    size_t total = 0, cur = 0;
    for (int c : t.copies) {
        if (c == 0) {
            ++cur;
        } else if (cur > 0) {
            ++r.runs;
            total += cur;
            cur = 0;
        }
    }
    if (cur > 0) ++r.runs, total += cur;
    r.mean = r.runs ? double(total) / double(r.runs) : 0.0;
    return r;
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
double sd_of(const std::vector<double>& v) {
    const double m = mean_of(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size() - 1));
}
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }
double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Mean and sd of max(0, X), X ~ N(mu, sigma^2): the clamped delay.
struct Moments {
    double mean, sd;
};
Moments clamped_normal(double mu, double sigma) {
    if (sigma == 0) return {std::max(0.0, mu), 0.0};
    const double a = mu / sigma;
    const double m1 = mu * Phi(a) + sigma * phi(a);
    const double m2 = (mu * mu + sigma * sigma) * Phi(a) + mu * sigma * phi(a);
    return {m1, std::sqrt(std::max(0.0, m2 - m1 * m1))};
}

// Fraction of deliveries that arrive after a datagram sent later (index below the highest seen).
double reordered_fraction(const Trace& t) {
    uint64_t highest = 0;
    size_t late = 0;
    bool any = false;
    for (uint64_t i : t.order) {
        if (any && i < highest) ++late;
        if (!any || i > highest) highest = i;
        any = true;
    }
    return t.order.empty() ? 0.0 : double(late) / double(t.order.size());
}

// Standard error of a loss-rate estimate over n datagrams (the Gilbert chain's losses are
// correlated: the variance grows by (1 + lambda) / (1 - lambda), lambda = 1 - p - r).
double loss_rate_se(const NetProfile& p, size_t n) {
    double var = p.loss * (1 - p.loss) / double(n);
    if (p.burst && p.loss > 0) {
        const double r = 1.0 / p.burst_length, q = r * p.loss / (1 - p.loss);
        const double lambda = 1.0 - q - r;
        var *= (1 + lambda) / (1 - lambda);
    }
    return std::sqrt(var);
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}
std::string pct(double v) { return num(v * 100.0); }

// ---- Profiles ----

TEST(NetSim, ProfilesMatchEvaluationTable) {
    EXPECT_EQ(net_profile_names(), (std::vector<std::string>{"lan", "broadband", "mobile", "hostile"}));
    struct Row {
        const char* name;
        double latency, jitter, loss;
        bool burst;
        double dup;
    };
    const Row table[] = {{"lan", 2, 1, 0, false, 0},
                         {"broadband", 50, 10, 0.01, false, 0},
                         {"mobile", 90, 30, 0.03, true, 0.01},
                         {"hostile", 150, 60, 0.10, true, 0.02}};
    for (const Row& r : table) {
        SCOPED_TRACE(r.name);
        const NetProfile p = net_profile(r.name);
        EXPECT_EQ(p.name, r.name);
        EXPECT_EQ(p.latency_ms, r.latency);
        EXPECT_EQ(p.jitter_ms, r.jitter);
        EXPECT_EQ(p.jitter_kind, JitterKind::Normal);
        EXPECT_EQ(p.loss, r.loss);
        EXPECT_EQ(p.burst, r.burst);
        EXPECT_EQ(p.duplicate, r.dup);
        EXPECT_EQ(p.bandwidth_kbps, 0.0);
        EXPECT_NO_THROW(validate(p));
        const std::string line = describe(p);
        EXPECT_EQ(line.find('\n'), std::string::npos);
        EXPECT_EQ(line.rfind(std::string(r.name) + ":", 0), 0u) << line;
    }
    EXPECT_EQ(describe(net_profile("mobile")), "mobile: 90 ms +- 30 ms sd (normal), loss 3% (bursts, mean 3), dup 1%, unlimited");
    NetProfile capped;
    capped.bandwidth_kbps = 256;
    capped.jitter_kind = JitterKind::HeavyTailed;
    EXPECT_EQ(describe(capped), "custom: 0 ms +- 0 ms sd (heavy-tailed), loss 0%, dup 0%, 256 kbps, queue 65536 B");
}

TEST(NetSim, UnknownProfileThrowsListingNames) {
    try {
        net_profile("satellite");
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("satellite"), std::string::npos) << msg;
        for (const std::string& n : net_profile_names()) EXPECT_NE(msg.find(n), std::string::npos) << msg;
    }
}

TEST(NetSim, InvalidProfilesAreRejected) {
    auto with = [](auto edit) {
        NetProfile p;
        edit(p);
        return p;
    };
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.loss = 1.5; }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.loss = std::nan(""); }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.latency_ms = -1; }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.jitter_ms = -1; }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.duplicate = -0.1; }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.bandwidth_kbps = -5; }), 1), std::invalid_argument);
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.burst = true, p.loss = 0.1, p.burst_length = 0.5; }), 1),
                 std::invalid_argument);
    // Bursts of mean 3 with at least one good datagram between them lose at most 3/4.
    EXPECT_THROW(NetworkSimulator(with([](NetProfile& p) { p.burst = true, p.loss = 0.8; }), 1), std::invalid_argument);
    EXPECT_NO_THROW(NetworkSimulator(with([](NetProfile& p) { p.burst = true, p.loss = 0.75; }), 1));
    // loss 1 loses everything, bursts or not.
    for (bool burst : {false, true}) {
        NetworkSimulator all(with([&](NetProfile& p) { p.burst = burst, p.loss = 1; }), 1);
        for (int i = 0; i < 100; ++i) all.send(i, payload(uint64_t(i)));
        EXPECT_EQ(all.in_flight(), 0u);
        EXPECT_EQ(all.stats().lost, 100u);
    }
}

// ---- Each named profile, measured ----

TEST(NetSim, NamedProfilesMeasuredOver100kDatagrams) {
    for (const std::string& name : net_profile_names()) {
        SCOPED_TRACE(name);
        const NetProfile p = net_profile(name);
        const Trace t = run(p, 42, kN, 1.0 / 30.0);
        const NetworkSimulator::Stats& s = t.stats;

        // Bookkeeping: every datagram lost or delivered, copies counted once each.
        EXPECT_EQ(s.sent, kN);
        EXPECT_EQ(s.queue_dropped, 0u);
        EXPECT_EQ(s.delivered, t.order.size());
        EXPECT_EQ(s.delivered, s.sent - s.lost + s.duplicated);
        size_t lost = 0, extra = 0;
        for (int c : t.copies) lost += c == 0, extra += c > 1 ? size_t(c - 1) : 0;
        EXPECT_EQ(lost, s.lost);
        EXPECT_EQ(extra, s.duplicated);

        const double loss = double(s.lost) / double(kN);
        EXPECT_NEAR(loss, p.loss, 4 * loss_rate_se(p, kN) + 1e-12);
        const double survivors = double(kN - s.lost);
        const double dup = double(s.duplicated) / survivors;
        EXPECT_NEAR(dup, p.duplicate, 4 * std::sqrt(p.duplicate * (1 - p.duplicate) / survivors) + 1e-12);

        const RunLengths runs = loss_runs(t);
        if (p.loss > 0) {
            const double expect_run = p.burst ? p.burst_length : 1.0 / (1.0 - p.loss);
            // Runs are geometric: sd sqrt(P(continue)) / P(stop).
            const double stop = p.burst ? 1.0 / p.burst_length : 1.0 - p.loss;
            const double run_sd = std::sqrt(1.0 - stop) / stop;
            EXPECT_NEAR(runs.mean, expect_run, 4 * run_sd / std::sqrt(double(runs.runs)));
        }

        const Moments m = clamped_normal(p.latency_ms, p.jitter_ms);
        const double n = double(t.delays.size());
        const double mean_ms = mean_of(t.delays) * 1e3, sd_ms = sd_of(t.delays) * 1e3;
        EXPECT_NEAR(mean_ms, m.mean, 4 * m.sd / std::sqrt(n));
        EXPECT_NEAR(sd_ms, m.sd, 4 * m.sd / std::sqrt(2 * n));
        EXPECT_GE(*std::min_element(t.delays.begin(), t.delays.end()), 0.0);

        // Reordering needs jitter comparable to the 33 ms spacing: none on lan, some elsewhere.
        const double reordered = reordered_fraction(t);
        const double overtake = Phi(-1e3 / 30.0 / (p.jitter_ms * std::sqrt(2.0)));
        if (overtake * double(kN) > 20) {
            EXPECT_GT(reordered, 0.0);
        }
        if (overtake * double(kN) < 1e-3) {
            EXPECT_EQ(reordered, 0.0);
        }

        record_figure("netsim " + name + " measured loss %", loss * 100);
        record_figure("netsim " + name + " measured mean loss run", runs.mean);
        record_figure("netsim " + name + " measured duplicate %", dup * 100);
        record_figure("netsim " + name + " measured mean delay ms", mean_ms);
        record_figure("netsim " + name + " measured delay sd ms", sd_ms);
        record_figure("netsim " + name + " reordered deliveries % at 30 Hz", reordered * 100);
        const Trace fast = run(p, 42, kN, 1.0 / 60.0);
        record_figure("netsim " + name + " reordered deliveries % at 60 Hz", reordered_fraction(fast) * 100);
    }
}

// ---- Loss ----

TEST(NetSim, RandomLossRateAndRunLength) {
    for (double loss : {0.01, 0.1, 0.3}) {
        SCOPED_TRACE(loss);
        NetProfile p;
        p.loss = loss;
        const Trace t = run(p, 7, kN, 0.01);
        const double rate = double(t.stats.lost) / double(kN);
        EXPECT_NEAR(rate, loss, 4 * loss_rate_se(p, kN));
        const RunLengths r = loss_runs(t);
        const double expect = 1.0 / (1.0 - loss), sd = std::sqrt(loss) / (1.0 - loss);
        EXPECT_NEAR(r.mean, expect, 4 * sd / std::sqrt(double(r.runs)));
        record_figure("netsim random loss " + pct(loss) + "%: measured loss %", rate * 100);
        record_figure("netsim random loss " + pct(loss) + "%: mean loss run (expect 1/(1-loss))", r.mean);
    }
}

TEST(NetSim, GilbertElliottBurstsKeepAverageLossAndMeanBurstLength) {
    struct Case {
        double loss, length;
    };
    for (const Case c : {Case{0.03, 3}, Case{0.10, 3}, Case{0.05, 1.5}, Case{0.2, 8}}) {
        SCOPED_TRACE(std::to_string(c.loss) + " / " + std::to_string(c.length));
        NetProfile p;
        p.loss = c.loss;
        p.burst = true;
        p.burst_length = c.length;
        const Trace t = run(p, 11, kN, 0.01);
        const double rate = double(t.stats.lost) / double(kN);
        EXPECT_NEAR(rate, c.loss, 4 * loss_rate_se(p, kN));
        const RunLengths r = loss_runs(t);
        const double stop = 1.0 / c.length;
        EXPECT_NEAR(r.mean, c.length, 4 * std::sqrt(1.0 - stop) / stop / std::sqrt(double(r.runs)));
        // Bursts really are longer than independent losses at the same rate would give.
        EXPECT_GT(r.mean, 1.0 / (1.0 - c.loss) + 0.3);
        const std::string key = "netsim burst loss " + pct(c.loss) + "%, mean " + num(c.length);
        record_figure(key + ": measured loss %", rate * 100);
        record_figure(key + ": measured mean burst", r.mean);
    }
}

// ---- Duplicates ----

TEST(NetSim, DuplicateRateAndCopiesGetTheirOwnDelay) {
    NetProfile p;
    p.latency_ms = 40;
    p.jitter_ms = 10;
    p.loss = 0.1;
    p.duplicate = 0.05;
    const Trace t = run(p, 3, kN, 0.01);
    const double survivors = double(kN - t.stats.lost);
    const double rate = double(t.stats.duplicated) / survivors;
    EXPECT_NEAR(rate, p.duplicate, 4 * std::sqrt(p.duplicate * (1 - p.duplicate) / survivors));
    // Copies arrive at other times than their originals.
    std::vector<double> first(kN, -1);
    size_t twins = 0, same_time = 0;
    for (size_t k = 0; k < t.order.size(); ++k) {
        double& f = first[t.order[k]];
        if (f < 0) {
            f = t.at[k];
        } else {
            ++twins;
            same_time += t.at[k] == f;
        }
    }
    EXPECT_EQ(twins, t.stats.duplicated);
    EXPECT_EQ(same_time, 0u);
    for (int c : t.copies) EXPECT_LE(c, 2);
    record_figure("netsim duplicate 5%: measured duplicate %", rate * 100);
}

// ---- Delay ----

TEST(NetSim, DelayMeanIsLatencyAndSdIsJitter) {
    NetProfile p;
    p.latency_ms = 100;
    p.jitter_ms = 10;  // the clamp at 0 is 10 sd away
    const Trace t = run(p, 5, kN, 0.01);
    const double n = double(t.delays.size());
    const double mean_ms = mean_of(t.delays) * 1e3, sd_ms = sd_of(t.delays) * 1e3;
    EXPECT_NEAR(mean_ms, 100.0, 4 * 10 / std::sqrt(n));
    EXPECT_NEAR(sd_ms, 10.0, 4 * 10 / std::sqrt(2 * n));
    record_figure("netsim normal 100 ms +- 10 ms: measured mean ms", mean_ms);
    record_figure("netsim normal 100 ms +- 10 ms: measured sd ms", sd_ms);

    // Without jitter every delay is exactly the latency.
    p.jitter_ms = 0;
    const Trace fixed = run(p, 5, 1000, 0.01);
    for (double d : fixed.delays) EXPECT_NEAR(d, 0.1, 1e-9);
}

TEST(NetSim, DelayIsClampedAtZero) {
    // lan: 2 ms +- 1 ms, so 2.3 % of the draws are negative and become 0.
    const NetProfile p = net_profile("lan");
    const Trace t = run(p, 9, kN, 0.01);
    size_t zero = 0;
    for (double d : t.delays) {
        EXPECT_GE(d, 0.0);
        zero += d < 1e-12;
    }
    const double frac = double(zero) / double(t.delays.size()), expect = Phi(-2.0);
    EXPECT_NEAR(frac, expect, 4 * std::sqrt(expect * (1 - expect) / double(t.delays.size())));
    const Moments m = clamped_normal(2, 1);
    EXPECT_NEAR(m.mean, 2.0085, 1e-4);  // the figure the header quotes
    EXPECT_NEAR(mean_of(t.delays) * 1e3, m.mean, 4 * m.sd / std::sqrt(double(t.delays.size())));
    record_figure("netsim lan: delays clamped to 0 %", frac * 100);
}

// ---- Reordering ----

TEST(NetSim, ReorderingFollowsOnlyFromJitter) {
    // With jitter: datagram i+1 (sent dt later) overtakes i with probability Phi(-dt / (sigma sqrt 2)).
    NetProfile p;
    p.latency_ms = 100;
    p.jitter_ms = 30;
    const double dt = 1.0 / 60.0;
    const Trace t = run(p, 13, kN, dt);
    std::vector<double> when(kN);
    for (size_t k = 0; k < t.order.size(); ++k) when[t.order[k]] = t.at[k];
    size_t overtaken = 0;
    for (size_t i = 0; i + 1 < kN; ++i) overtaken += when[i + 1] < when[i];
    const double rate = double(overtaken) / double(kN - 1);
    const double expect = Phi(-dt * 1e3 / (p.jitter_ms * std::sqrt(2.0)));
    // Adjacent pairs share a datagram (correlated): 4 SE with a generous factor 2 for that.
    EXPECT_NEAR(rate, expect, 8 * std::sqrt(expect * (1 - expect) / double(kN)));
    EXPECT_GT(reordered_fraction(t), 0.0);
    record_figure("netsim 100 ms +- 30 ms at 60 Hz: adjacent pairs overtaken %", rate * 100);

    // Without jitter nothing is ever reordered, whatever else the profile does.
    NetProfile calm = net_profile("hostile");
    calm.jitter_ms = 0;
    EXPECT_EQ(reordered_fraction(run(calm, 13, kN, 0.001)), 0.0);
    calm.bandwidth_kbps = 500;
    const Trace capped = run(calm, 13, 20000, 0.001, 200);
    EXPECT_GT(capped.stats.queue_dropped, 0u);
    EXPECT_EQ(reordered_fraction(capped), 0.0);
    // And without jitter copies arrive with their original, right after it.
    for (size_t k = 1; k < capped.order.size(); ++k) EXPECT_LE(capped.order[k - 1], capped.order[k]);
}

TEST(NetSim, TiesAreDeliveredInSubmissionOrder) {
    NetProfile p;
    p.latency_ms = 10;
    NetworkSimulator sim(p, 1);
    for (uint64_t i = 0; i < 50; ++i) sim.send(0.5, payload(i));
    EXPECT_EQ(sim.in_flight(), 50u);
    EXPECT_DOUBLE_EQ(sim.next_delivery_time(), 0.51);
    EXPECT_TRUE(sim.receive(0.509).empty());
    const auto got = sim.receive(0.51);
    ASSERT_EQ(got.size(), 50u);
    for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(index_of(got[i]), i);
    EXPECT_EQ(sim.next_delivery_time(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(sim.stats().delivered, 50u);
    // The payload comes back byte for byte.
    sim.send(1.0, {1, 2, 3});
    EXPECT_EQ(sim.receive(2.0), (std::vector<std::vector<uint8_t>>{{1, 2, 3}}));
}

// ---- Determinism ----

TEST(NetSim, DeterministicPerSeed) {
    // A live-like call sequence: send at 30 Hz, poll at 250 Hz, with every knob on.
    auto live = [](uint64_t seed, JitterKind kind) {
        NetProfile p = net_profile("hostile");
        p.jitter_kind = kind;
        p.bandwidth_kbps = 400;
        p.queue_bytes = 8000;
        NetworkSimulator sim(p, seed);
        std::vector<std::pair<double, uint64_t>> out;
        uint64_t next = 0;
        for (int tick = 0; tick < 250 * 60; ++tick) {
            const double now = tick / 250.0;
            while (double(next) / 30.0 <= now) {
                sim.send(now, payload(next, 100 + next % 700));
                ++next;
            }
            for (const auto& d : sim.receive(now)) out.emplace_back(now, index_of(d));
        }
        return out;
    };
    for (JitterKind kind : {JitterKind::Normal, JitterKind::HeavyTailed}) {
        const auto a = live(1, kind), b = live(1, kind), c = live(2, kind);
        EXPECT_GT(a.size(), 1000u);
        EXPECT_EQ(a, b);
        EXPECT_NE(a, c);
    }
    // Exact delivery times too, not just the order.
    const NetProfile m = net_profile("mobile");
    const Trace x = run(m, 99, 20000, 0.02), y = run(m, 99, 20000, 0.02), z = run(m, 100, 20000, 0.02);
    EXPECT_EQ(x.at, y.at);
    EXPECT_EQ(x.order, y.order);
    EXPECT_NE(x.at, z.at);
    // The loss pattern does not depend on the delay settings (separate streams).
    NetProfile m2 = m;
    m2.jitter_ms = 5;
    m2.latency_ms = 10;
    const Trace w = run(m2, 99, 20000, 0.02);
    EXPECT_EQ(x.copies, w.copies);
}

// Pins the loss and duplicate decisions for one seed: they use only std::mt19937_64 (fully
// specified by the standard) and exact arithmetic, so this holds on every platform, and an
// accidental change of the draw order (which would silently change every replay figure) fails here.
TEST(NetSim, LossAndDuplicatePatternIsPinned) {
    const Trace t = run(net_profile("hostile"), 1, 10000, 0.01);
    uint64_t h = 1469598103934665603ull;  // FNV-1a over (index, copies)
    for (size_t i = 0; i < t.copies.size(); ++i) {
        h = (h ^ (i * 4 + uint64_t(t.copies[i]))) * 1099511628211ull;
    }
    EXPECT_EQ(t.stats.lost, 951u);
    EXPECT_EQ(t.stats.duplicated, 177u);
    EXPECT_EQ(h, 3507384914046450721ull);
}

TEST(NetSim, NetLinkDirectionsAreIndependentStreams) {
    const NetProfile p = net_profile("hostile");
    NetLink a(p, 5), b(p, 5), c(p, 6);
    const Trace up = run(a.up, 20000, 0.01), down = run(a.down, 20000, 0.01);
    const Trace up2 = run(b.up, 20000, 0.01), up3 = run(c.up, 20000, 0.01);
    EXPECT_NE(up.copies, down.copies);
    EXPECT_NE(up.at, down.at);
    EXPECT_EQ(up.at, up2.at);
    EXPECT_NE(up.at, up3.at);
    EXPECT_EQ(a.up.profile().name, "hostile");
    EXPECT_EQ(a.down.profile().latency_ms, 150.0);
    // And neither equals a bare simulator with the same seed.
    EXPECT_NE(run(p, 5, 20000, 0.01).at, up.at);
}

// ---- Bandwidth ----

TEST(NetSim, BandwidthCapSerialisesAndTailDrops) {
    NetProfile p;
    p.bandwidth_kbps = 256;            // 32000 B/s
    const size_t payload_bytes = 372;  // + 28 B header = 400 B on the wire: 12.5 ms each, 80/s
    const double wire_s = 400.0 / 32000.0;

    // Below capacity (60/s): nothing queues; each datagram takes exactly its serialisation time.
    const Trace light = run(p, 1, 600, 1.0 / 60.0, payload_bytes);
    EXPECT_EQ(light.stats.queue_dropped, 0u);
    for (double d : light.delays) EXPECT_NEAR(d, wire_s, 1e-9);

    // Twice the capacity for 20 s: the link stays busy and delivers at exactly the cap; the queue
    // fills to 64 KiB (163 datagrams) and the rest are tail-dropped.
    const size_t n = 3200;
    const Trace heavy = run(p, 1, n, 1.0 / 160.0, payload_bytes);
    const auto& s = heavy.stats;
    EXPECT_GT(s.queue_dropped, 0u);
    EXPECT_EQ(s.delivered + s.queue_dropped, n);
    const double span = heavy.at.back() - heavy.at.front();
    const double kbps = double(heavy.order.size() - 1) * 400 * 8 / span / 1000;
    EXPECT_NEAR(kbps, 256.0, 1e-6);
    const size_t queue_capacity = p.queue_bytes / 400;  // 163
    EXPECT_NEAR(double(s.delivered), 20.0 * 80 + double(queue_capacity), 3.0);
    const double max_delay = *std::max_element(heavy.delays.begin(), heavy.delays.end());
    const double bound = double(p.queue_bytes) / 32000.0;  // the queue includes the datagram on the wire
    EXPECT_LE(max_delay, bound + 1e-9);
    EXPECT_GE(max_delay, bound - 2 * wire_s);
    record_figure("netsim 256 kbps cap at 2x offered load: delivered kbps", kbps);
    record_figure("netsim 256 kbps cap at 2x offered load: queue-dropped %", 100.0 * double(s.queue_dropped) / double(n));
    record_figure("netsim 256 kbps cap at 2x offered load: max queueing delay ms", max_delay * 1e3);

    // Latency and jitter add on top of serialisation; loss happens after the queue.
    p.latency_ms = 30;
    p.loss = 0.5;
    const Trace lossy = run(p, 1, 600, 1.0 / 60.0, payload_bytes);
    EXPECT_EQ(lossy.stats.queue_dropped, 0u);
    for (double d : lossy.delays) EXPECT_NEAR(d, wire_s + 0.030, 1e-9);

    // A datagram larger than the whole queue never fits.
    NetProfile tiny;
    tiny.bandwidth_kbps = 100;
    tiny.queue_bytes = 1000;
    NetworkSimulator sim(tiny, 1);
    sim.send(0, std::vector<uint8_t>(1000));
    EXPECT_EQ(sim.stats().queue_dropped, 1u);
    sim.send(0, std::vector<uint8_t>(1000 - kNetSimHeaderBytes));  // fits exactly
    EXPECT_EQ(sim.stats().queue_dropped, 1u);
    EXPECT_EQ(sim.in_flight(), 1u);
}

// ---- Heavy-tailed jitter ----

TEST(NetSim, HeavyTailedJitterHasHeavierTailSameMeanAndSaneMedian) {
    NetProfile p;
    p.latency_ms = 100;
    p.jitter_ms = 20;
    const Trace normal = run(p, 21, kN, 0.01);
    p.jitter_kind = JitterKind::HeavyTailed;
    const Trace heavy = run(p, 21, kN, 0.01);
    const double n = double(kN);

    auto beyond = [&](const Trace& t, double sds) {
        size_t c = 0;
        for (double d : t.delays) c += d * 1e3 > p.latency_ms + sds * p.jitter_ms;
        return double(c) / double(t.delays.size());
    };
    // Pareto(1, 3) standardised: P(noise > k sd) = (1.5 + k sqrt(0.75))^-3.
    auto pareto_tail = [](double k) { return std::pow(1.5 + k * std::sqrt(0.75), -3.0); };
    const double h4 = beyond(heavy, 4), n4 = beyond(normal, 4), h6 = beyond(heavy, 6);
    EXPECT_NEAR(h4, pareto_tail(4), 4 * std::sqrt(pareto_tail(4) / n));
    EXPECT_NEAR(h6, pareto_tail(6), 4 * std::sqrt(pareto_tail(6) / n));
    EXPECT_LT(n4, 3e-4);  // normal: 3.2e-5
    EXPECT_GT(h4, 20 * std::max(n4, 1.0 / n));
    EXPECT_EQ(beyond(normal, 6), 0.0);

    // Same mean and (roughly: the fourth moment is infinite, so the sample sd converges slowly) sd.
    EXPECT_NEAR(mean_of(heavy.delays) * 1e3, p.latency_ms, 4 * p.jitter_ms / std::sqrt(n));
    const double sd = sd_of(heavy.delays) * 1e3;
    EXPECT_NEAR(sd, p.jitter_ms, 0.15 * p.jitter_ms);

    // Median: latency - 0.277 sd (the Pareto median 2^(1/3), standardised), within the first sd.
    std::vector<double> sorted = heavy.delays;
    std::nth_element(sorted.begin(), sorted.begin() + long(sorted.size() / 2), sorted.end());
    const double median = sorted[sorted.size() / 2] * 1e3;
    const double expect_z = (std::cbrt(2.0) - 1.5) / std::sqrt(0.75);
    // Median SE: 1 / (2 f(median) sqrt(n)), f the standardised density 3 x^-4 * sqrt(0.75).
    const double f = 3 * std::pow(std::cbrt(2.0), -4) * std::sqrt(0.75);
    EXPECT_NEAR(median, p.latency_ms + expect_z * p.jitter_ms, 4 * p.jitter_ms / (2 * f * std::sqrt(n)));
    EXPECT_GT(median, p.latency_ms - p.jitter_ms);
    EXPECT_LT(median, p.latency_ms);

    // One-sided: never more than sqrt(3) sd early, so the table's profiles are never clamped.
    const double min_ms = *std::min_element(heavy.delays.begin(), heavy.delays.end()) * 1e3;
    EXPECT_GE(min_ms, p.latency_ms - std::sqrt(3.0) * p.jitter_ms - 1e-6);
    EXPECT_GT(reordered_fraction(heavy), 0.0);

    record_figure("netsim heavy-tailed: % beyond +4 sd", h4 * 100);
    record_figure("netsim normal: % beyond +4 sd", n4 * 100);
    record_figure("netsim heavy-tailed: % beyond +6 sd", h6 * 100);
    record_figure("netsim heavy-tailed 100 ms +- 20 ms: measured sd ms", sd);
    record_figure("netsim heavy-tailed 100 ms +- 20 ms: median ms", median);
}

// ---- Queues in time, traces (Mahimahi's format), the bottlenecked profiles ----

TEST(NetSim, QueueInMillisecondsDropsWhatWouldWaitLonger) {
    NetProfile p;
    p.bandwidth_kbps = 64;  // 8000 B/s: a 400-byte datagram takes 50 ms
    p.queue_ms = 500;
    NetworkSimulator sim(p, 1);
    for (int i = 0; i < 20; ++i) sim.send(0.0, std::vector<uint8_t>(400 - kNetSimHeaderBytes));
    // Ten fit within 500 ms of waiting (the tenth leaves at exactly 500 ms); the rest are dropped.
    EXPECT_EQ(sim.stats().queue_dropped, 10u);
    EXPECT_EQ(sim.receive(10.0).size(), 10u);
    // Each waits for those before it to be carried: 0, 50, ... 450 ms.
    EXPECT_NEAR(sim.stats().queue_wait.max_ms(), 450.0, 1e-6);
    EXPECT_NEAR(sim.stats().queue_wait.mean_ms(), 225.0, 1e-6);
}

TEST(NetSim, TraceCarriesItsOpportunitiesAndRepeats) {
    NetProfile p;
    p.trace = std::make_shared<const LinkTrace>(LinkTrace{{10, 10, 30}, 1500, 0, "test"});  // repeats every 30 ms
    p.queue_bytes = 1 << 20;
    NetworkSimulator sim(p, 1);
    // 6 datagrams of 1,000 bytes at t = 0: 6,000 bytes in the opportunities of 1,500 at 10, 10, 30
    // and 40 ms (the second cycle starts at 30 ms): each leaves with its last byte.
    for (int i = 0; i < 6; ++i) sim.send(0.0, std::vector<uint8_t>(1000 - kNetSimHeaderBytes));
    std::vector<double> at;
    sim.receive(1.0, &at);
    const std::vector<double> expected{0.010, 0.010, 0.010, 0.030, 0.040, 0.040};
    ASSERT_EQ(at.size(), expected.size());
    for (size_t i = 0; i < at.size(); ++i) EXPECT_NEAR(at[i], expected[i], 1e-9) << i;
    // An idle link: the opportunities that went by carried nothing. At 1 s (cycle 33 starts at
    // 990 ms) the next ones are 1,000 and 1,000 ms.
    sim.send(1.0, std::vector<uint8_t>(2000 - kNetSimHeaderBytes));
    sim.receive(2.0, &at);
    EXPECT_NEAR(at.back(), 1.000, 1e-9);
    EXPECT_EQ(sim.stats().bytes_delivered, 8000u);
}

TEST(NetSim, TraceFromRatesHasItsRateAndItsOutage) {
    const LinkTrace t = link_trace_from_rates({{2.0, 128}, {3.0, 0}, {1.0, 64}});
    EXPECT_NEAR(t.period(), 6000.0, 1e-9);
    EXPECT_NEAR(t.mean_kbps(), (2 * 128 + 64) / 6.0, 0.1);
    for (double ms : t.ms) EXPECT_FALSE(ms > 2000.0 + 1e-9 && ms <= 5000.0 - 1e-9) << "an opportunity in the outage at " << ms;
    NetProfile p;
    p.trace = std::make_shared<const LinkTrace>(t);
    p.queue_ms = 10000;
    NetworkSimulator sim(p, 1);
    // Sent during the outage, it waits for the link's return at 5 s.
    sim.send(0.001, std::vector<uint8_t>(1));  // starts the trace's clock
    sim.send(3.0, std::vector<uint8_t>(50));
    std::vector<double> at;
    sim.receive(10.0, &at);
    ASSERT_EQ(at.size(), 2u);
    EXPECT_GT(at[1], 5.0);
    EXPECT_LT(at[1], 5.05);
}

TEST(NetSim, ReadsMahimahiTracesAndNamesWhatIsWrong) {
    const std::string good = ks::test::scratch_path("good.trace"), bad = ks::test::scratch_path("bad.trace"),
                      back = ks::test::scratch_path("back.trace"), empty = ks::test::scratch_path("empty.trace");
    auto write = [](const std::string& path, const char* text) {
        FILE* f = std::fopen(path.c_str(), "w");
        std::fputs(text, f);
        std::fclose(f);
    };
    write(good, "0\n5\n5\r\n12\n");
    write(bad, "0\n5\nfive\n");
    write(back, "0\n9\n5\n");
    write(empty, "\n");
    const LinkTrace t = read_link_trace(good);
    EXPECT_EQ(t.ms, (std::vector<double>{0, 5, 5, 12}));
    EXPECT_EQ(t.bytes_per_opportunity, 1500.0);
    EXPECT_NEAR(t.mean_kbps(), 4 * 1500 * 8 / 12.0, 1e-9);
    auto message = [](const std::string& path) {
        try {
            read_link_trace(path);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message(bad), bad + ":3: 'five' is not a time in ms");
    EXPECT_EQ(message(back), back + ":3: 5 ms comes after 9 ms");
    EXPECT_NE(message(empty).find("no opportunity"), std::string::npos);
    EXPECT_NE(message(ks::test::scratch_path("missing.trace")).find("cannot open"), std::string::npos);
}

TEST(NetSim, BottleneckProfilesAreTheirBaseBehindALink) {
    for (const std::string& name : bottleneck_profile_names()) {
        const NetProfile p = net_profile(name), base = net_profile(name.substr(0, name.find('-')));
        EXPECT_EQ(p.latency_ms, base.latency_ms) << name;
        EXPECT_EQ(p.loss, base.loss) << name;
        EXPECT_EQ(p.queue_ms, 500.0) << name;
        EXPECT_EQ(p.bandwidth_kbps, name.ends_with("-64k") ? 64.0 : 128.0) << name;
    }
    EXPECT_EQ(describe(net_profile("broadband-64k")),
              "broadband-64k: 50 ms +- 10 ms sd (normal), loss 1%, dup 0%, 64 kbps, queue 500 ms");
}

TEST(NetSim, DelayHistogramPercentiles) {
    DelayHistogram h;
    for (int i = 1; i <= 100; ++i) h.add(i * 1e-3);
    EXPECT_NEAR(h.mean_ms(), 50.5, 1e-9);
    EXPECT_NEAR(h.percentile_ms(95), 95.5, 1e-9);
    EXPECT_NEAR(h.percentile_ms(50), 50.5, 1e-9);
    const DelayHistogram first = h;
    for (int i = 0; i < 10; ++i) h.add(0.2);
    EXPECT_EQ(h.since(first).count(), 10u);
    EXPECT_NEAR(h.since(first).percentile_ms(50), 200.5, 1e-9);
}

}  // namespace
}  // namespace ks
