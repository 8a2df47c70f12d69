// kinesync-client's bots end to end: 8 bots over loopback through a lossy simulated link, all
// receiving and reconstructing; a server restart in the middle is survived (they reconnect).
#include <gtest/gtest.h>

#include <unistd.h>

#include <optional>

#include "programs/testbench/bot.h"
#include "tests/support/udp_harness.h"

using namespace ks;
using namespace ks::test;

TEST(ClientE2E, EightBotsThroughLossSurviveAServerRestart) {
    const uint16_t port = uint16_t(42000 + (getpid() % 2000));
    WorldConfig wc;
    wc.characters = 3;
    auto server = std::make_unique<ServerHarness>(wc, StreamServerConfig{}, std::string{}, port);
    std::vector<std::unique_ptr<Bot>> bots;
    NetProfile p = net_profile("broadband");
    p.latency_ms = 20;  // keep the test short
    p.loss = 0.05;
    for (int i = 0; i < 8; ++i) {
        BotConfig bc;
        bc.port = port;
        bc.profile = p;
        bc.seed = uint64_t(i + 1);
        bc.reconstruct.strategy = all_strategies()[size_t(i) % all_strategies().size()];
        bc.reconnect_after_s = 0.3;
        bots.push_back(std::make_unique<Bot>(bc));
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    for (auto& b : bots) b->start(now());
    auto run_for = [&](double seconds) {
        const double end = now() + seconds;
        while (now() < end) {
            for (auto& b : bots) b->poll(now());
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
    };
    run_for(2.5);
    std::vector<uint64_t> before;
    for (auto& b : bots) {
        const BotReport r = b->report(now());
        EXPECT_GT(r.snapshots_received, 30u) << "every bot receives";
        EXPECT_NE(b->displayed(0), nullptr) << "and reconstructs";
        before.push_back(r.snapshots_received);
    }
    // Restart the server on the same port.
    server.reset();
    run_for(0.5);
    server = std::make_unique<ServerHarness>(wc, StreamServerConfig{}, std::string{}, port);
    run_for(6.5);  // the old session times out (5 s) or is refused; the bots reconnect
    for (size_t i = 0; i < bots.size(); ++i) {
        const BotReport r = bots[i]->report(now());
        EXPECT_EQ(bots[i]->state(), ConnectionState::Connected) << "bot " << i;
        EXPECT_GE(r.reconnects, 1u) << "bot " << i;
        EXPECT_GT(bots[i]->session_stats().snapshots_received, 10u) << "bot " << i << " receives again";
        EXPECT_NE(bots[i]->displayed(0), nullptr);
    }
}

namespace {

// A server with two characters and bots polled in real time.
struct BotRun {
    ServerHarness server{[] {
        WorldConfig wc;
        wc.characters = 2;
        return wc;
    }(), StreamServerConfig{}};
    std::vector<std::unique_ptr<Bot>> bots;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    // One started bot on the server, through `profile` when given.
    Bot& add_bot(std::optional<NetProfile> profile = std::nullopt) {
        BotConfig bc;
        bc.port = server.port();
        bc.profile = profile;
        bots.push_back(std::make_unique<Bot>(bc));
        bots.back()->start(now());
        return *bots.back();
    }
    void run_for(double seconds) {
        const double end = now() + seconds;
        while (now() < end) {
            for (auto& b : bots) b->poll(now());
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
    }
};

}  // namespace

TEST(ClientE2E, ABotSaysGoodbyeAndTheServerFreesItsSlotAtOnce) {
    BotRun r;
    ServerHarness& server = r.server;
    const Bot& bot = r.add_bot();
    r.run_for(1.0);
    ASSERT_EQ(bot.state(), ConnectionState::Connected);
    ASSERT_EQ(server.client_count(), 1u);
    r.bots.clear();  // the destructor sends a Disconnect
    const auto t = std::chrono::steady_clock::now();
    while (server.client_count() != 0 && std::chrono::steady_clock::now() - t < std::chrono::seconds(2))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(server.client_count(), 0u);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(), 0.5)
        << "freed by the goodbye, not by the 5 s timeout";
}

TEST(ClientE2E, ASecondServerOnABusyPortFailsClearly) {
    WorldConfig wc;
    wc.characters = 1;
    ServerHarness first(wc, StreamServerConfig{});
    try {
        ServerHarness second(wc, StreamServerConfig{}, std::string{}, first.port());
        FAIL() << "a second server bound the busy port " << first.port();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(std::string("cannot listen on UDP 127.0.0.1:") + std::to_string(first.port())), std::string::npos)
            << e.what();
    }
}

TEST(ClientE2E, ReorderedSnapshotsAreLateNotLost) {
    // No loss, a lot of jitter: snapshots overtake each other. None is lost.
    BotRun r;
    NetProfile p = net_profile("lan");
    p.latency_ms = 40;
    p.jitter_ms = 25;
    const Bot& bot = r.add_bot(p);
    r.run_for(3.0);
    const ClientSessionStats st = bot.session_stats();
    EXPECT_GT(st.snapshots_received, 60u);
    EXPECT_GT(st.snapshots_late, 0u) << "the jitter reorders some";
    EXPECT_LE(st.snapshots_lost, 1u) << "reordered is not lost (one may still be in flight at the end)";
}
