// kinesync-client's bots end to end: 8 bots over loopback through a lossy simulated link, all
// receiving and reconstructing; a server restart in the middle is survived (they reconnect).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "programs/testbench/bot.h"
#include "tests/support/udp_harness.h"

using namespace ks;
using namespace ks::test;

TEST(ClientE2E, EightBotsThroughLossSurviveAServerRestart) {
    WorldConfig wc;
    wc.characters = 3;
    auto server = std::make_unique<ServerHarness>(wc, StreamServerConfig{});
    const uint16_t port = server->port();  // the restarted server takes the same one
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
    auto poll = [&] {
        for (auto& b : bots) b->poll(now());
    };
    auto every_bot = [&](auto pred) {
        return [&bots, pred] { return std::all_of(bots.begin(), bots.end(), [&](const auto& b) { return pred(*b); }); };
    };
    const auto pause = std::chrono::microseconds(500);
    wait_until(every_bot([&](const Bot& b) { return b.report(now()).snapshots_received > 30 && b.displayed(0); }), poll, kDeadlineS, pause);
    for (auto& b : bots) {
        EXPECT_GT(b->report(now()).snapshots_received, 30u) << "every bot receives";
        EXPECT_NE(b->displayed(0), nullptr) << "and reconstructs";
    }
    // Restart the server on the same port, the bots polling meanwhile.
    server.reset();
    wait_until([] { return false; }, poll, 0.5, pause);
    server = std::make_unique<ServerHarness>(wc, StreamServerConfig{}, std::string{}, port);
    // The old session times out (5 s) or is refused; the bots reconnect and receive again.
    wait_until(every_bot([&](const Bot& b) {
        return b.state() == ConnectionState::Connected && b.report(now()).reconnects >= 1 && b.session_stats().snapshots_received > 10 &&
               b.displayed(0);
    }), poll, kDeadlineS, pause);
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
    ServerHarness server;
    std::vector<std::unique_ptr<Bot>> bots;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    explicit BotRun(StreamServerConfig sc = {}) : server(two_characters(), sc) {}
    static WorldConfig two_characters() {
        WorldConfig wc;
        wc.characters = 2;
        return wc;
    }
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
    // Polls the bots until pred() holds (or the deadline passes); true when it held.
    template <class Pred>
    bool run_until(Pred pred) {
        return wait_until(pred, [&] {
            for (auto& b : bots) b->poll(now());
        }, kDeadlineS, std::chrono::microseconds(500));
    }
};

}  // namespace

TEST(ClientE2E, ABotSaysGoodbyeAndTheServerFreesItsSlotAtOnce) {
    StreamServerConfig sc;
    sc.timeout_s = 10 * kDeadlineS;  // only the goodbye can free the slot within the wait
    BotRun r(sc);
    ServerHarness& server = r.server;
    const Bot& bot = r.add_bot();
    ASSERT_TRUE(r.run_until([&] { return bot.state() == ConnectionState::Connected && server.client_count() == 1; }))
        << "state " << int(bot.state()) << ", " << server.client_count() << " clients";
    r.bots.clear();  // the destructor sends a Disconnect
    EXPECT_TRUE(wait_until([&] { return server.client_count() == 0; }));
    EXPECT_EQ(server.live_stats().disconnects, 1u) << "freed by the goodbye";
    EXPECT_EQ(server.live_stats().timeouts, 0u) << "not by the timeout";
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
    // No loss, a lot of jitter: snapshots overtake each other. None is lost. Counted from the first
    // snapshot, through the definitions: their acknowledgements are late at this jitter (80 ms round
    // trips), so the server may resend them and hold this client's snapshots meanwhile, skipping
    // ticks that were never sent and so are not lost either.
    BotRun r;
    NetProfile p = net_profile("lan");
    p.latency_ms = 40;
    p.jitter_ms = 25;
    const Bot& bot = r.add_bot(p);
    ASSERT_TRUE(r.run_until([&] { return bot.session_stats().snapshots_received > 0; }));
    const ClientSessionStats before = bot.session_stats();
    // Overtaken datagrams still in flight count as lost until they land, so the wait ends at a
    // moment the counts are back where they started, after five late arrivals: were late ones
    // (or ticks the server skipped) counted as lost, they would stay above.
    auto settled = [&](const ClientSessionStats& s) {
        return s.snapshots_late >= before.snapshots_late + 5 && s.snapshots_lost <= before.snapshots_lost &&
               s.datagrams_lost <= before.datagrams_lost;
    };
    const bool ok = r.run_until([&] { return settled(bot.session_stats()); });
    const ClientSessionStats st = bot.session_stats();
    EXPECT_GE(st.snapshots_late, before.snapshots_late + 5) << "the jitter reorders some";
    EXPECT_TRUE(ok) << "reordered is not lost: " << st.snapshots_lost << " snapshots and " << st.datagrams_lost
                    << " datagrams lost, against " << before.snapshots_lost << " and " << before.datagrams_lost
                    << " at the first snapshot";
}
