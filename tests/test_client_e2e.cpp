// kinesync-client's bots end to end: 8 bots over loopback through a lossy simulated link, all
// receiving and reconstructing; a server restart in the middle is survived (they reconnect).
#include <gtest/gtest.h>

#include <unistd.h>

#include "client/bot.h"
#include "tests/support/udp_harness.h"

using namespace ks;
using namespace ks::test;

TEST(ClientE2E, EightBotsThroughLossSurviveAServerRestart) {
    const uint16_t port = uint16_t(42000 + (getpid() % 2000));
    WorldConfig wc;
    wc.characters = 3;
    auto server = std::make_unique<ServerHarness>(wc, net::ServerConfig{}, std::string{}, port);
    asio::io_context io;
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
        bots.push_back(std::make_unique<Bot>(io, bc));
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
    server = std::make_unique<ServerHarness>(wc, net::ServerConfig{}, std::string{}, port);
    run_for(6.5);  // the old session times out (5 s) or is refused; the bots reconnect
    for (size_t i = 0; i < bots.size(); ++i) {
        const BotReport r = bots[i]->report(now());
        EXPECT_EQ(bots[i]->session().state(), ClientSession::State::Connected) << "bot " << i;
        EXPECT_GE(r.reconnects, 1u) << "bot " << i;
        EXPECT_GT(bots[i]->session().stats().snapshots_received, 10u) << "bot " << i << " receives again";
        EXPECT_NE(bots[i]->displayed(0), nullptr);
    }
}
