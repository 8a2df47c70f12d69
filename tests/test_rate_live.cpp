// The rate that follows the path, live: a server on loopback and a test client whose own
// simulated link (StreamClientConfig::simulate) carries 64 kbit/s with a 500 ms queue. The server's
// rate for that client settles under the link's, the client is told so (Pong.rate_bps), and the
// server counts why. The broken variant (StreamServerConfig::follow_path off) keeps the budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "programs/testbench/bot.h"
#include "tests/support/udp_harness.h"
#include "tests/support/wait.h"

using namespace ks;
using namespace ks::test;

namespace {

struct LiveRun {
    ServerHarness server;
    std::unique_ptr<Bot> bot;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    explicit LiveRun(bool follow_path) : server(world(), config(follow_path)) {
        BotConfig bc;
        bc.port = server.port();
        NetProfile p = net_profile("lan");
        p.bandwidth_kbps = 64;
        p.queue_ms = 500;
        bc.profile = p;
        bot = std::make_unique<Bot>(bc);
        bot->start(now());
    }
    static WorldConfig world() {
        WorldConfig wc;
        wc.characters = 8;  // about 190 kbit/s at the budget
        return wc;
    }
    static StreamServerConfig config(bool follow_path) {
        StreamServerConfig sc;
        sc.follow_path = follow_path;
        return sc;
    }
    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    template <class Pred>
    bool run_until(Pred pred) {
        return wait_until(pred, [&] { bot->poll(now()); }, kDeadlineS, std::chrono::microseconds(500));
    }
    double rate_given() const { return bot->report(now()).rate_given_bps; }
};

}  // namespace

TEST(RateLive, TheRateSettlesUnderTheClientsLink) {
    LiveRun r(true);
    ASSERT_TRUE(r.run_until([&] { return r.rate_given() > 0 && r.rate_given() <= 64000; }))
        << "the rate given is " << r.rate_given() << " bit/s";
    EXPECT_GE(r.server.live_stats().rate_lowered_delay + r.server.live_stats().rate_lowered_loss, 1u);
    const auto clients = r.server.server->stats().clients;
    ASSERT_EQ(clients.size(), 1u);
    EXPECT_LE(clients[0].rate_bps, 64000.0);
    EXPECT_TRUE(clients[0].rate_change == "delay" || clients[0].rate_change == "loss" || clients[0].rate_change == "increase")
        << clients[0].rate_change;
    // It stays there: over the next 5 s its mean is about the link's (the rate probes a little
    // above it and comes back), never far above.
    const double until = r.now() + 5.0;
    double sum = 0, most = 0;
    int n = 0;
    r.run_until([&] {
        sum += r.rate_given(), most = std::max(most, r.rate_given()), ++n;
        return r.now() >= until;
    });
    EXPECT_LE(sum / std::max(1, n), 1.1 * 64000);
    EXPECT_LE(most, 1.3 * 64000);
}

TEST(RateLive, TheBrokenVariantKeepsTheBudget) {
    LiveRun r(false);
    ASSERT_TRUE(r.run_until([&] { return r.rate_given() > 0 && r.bot->report(r.now()).snapshots_received > 60; }));
    EXPECT_EQ(r.rate_given(), 256000.0);
    EXPECT_EQ(r.server.live_stats().rate_lowered_delay, 0u);
}
