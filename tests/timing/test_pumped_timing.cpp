// A client pumped once per render frame measures the round trip as one with its own network thread
// does: datagrams carry the time the kernel received them, not the time the game got round to
// reading them (a frame later: 16.7 ms here). Its own executable, run alone (kinesync-timing-tests,
// RUN_SERIAL). How close the two come (0.1 ms round trip, 0.2 ms display on an idle machine) is a
// figure, recorded here; a loaded machine's scheduling moves it by milliseconds.
//
// With KS_TIMING_SERVER=HOST:PORT in the environment, the clients watch that server (a dev-mode
// kinesync-server) instead of one in this process: how the Windows build runs it (under Wine,
// against the Linux server; tests/client_side). There, without receive timestamps from the
// platform, the test says so and skips.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>
#include <algorithm>

#include <kinesync/client/stream_client.h>
#if !defined(KS_TIMING_EXTERNAL_ONLY)
#include <kinesync/server/stream_server.h>
#endif

using namespace ks;

namespace {

// The server the clients watch: one of this process's, ticking at 60 Hz on a thread of its own,
// or the one KS_TIMING_SERVER names.
struct Source {
    std::string host = "127.0.0.1";
    uint16_t port = 0;
    std::atomic<bool> stop{false};
    std::thread game;
#if !defined(KS_TIMING_EXTERNAL_ONLY)
    std::unique_ptr<StreamServer> server;
#endif
    Source() {
        if (const char* e = std::getenv("KS_TIMING_SERVER")) {
            const std::string a(e);
            host = a.substr(0, a.rfind(':'));
            port = uint16_t(std::atoi(a.c_str() + a.rfind(':') + 1));
            return;
        }
#if !defined(KS_TIMING_EXTERNAL_ONLY)
        Skeleton s;
        s.names = {"root", "tip"};
        s.parents = {-1, 0};
        s.offsets = {{0, 0, 0}, {0, 1, 0}};
        StreamServerConfig sc;
        sc.port = 0;
        server = std::make_unique<StreamServer>(sc);  // its own I/O thread: pongs go out as pings arrive
        const uint16_t c = server->add_character(server->add_skeleton("stick", s));
        port = server->port();
        game = std::thread([this, s, c] {
            const Pose pose(s);
            auto next = std::chrono::steady_clock::now();
            while (!stop) {
                server->set_pose(c, pose);
                server->end_tick();
                next += std::chrono::microseconds(16667);
                std::this_thread::sleep_until(next);
            }
        });
#endif
    }
    ~Source() {
        stop = true;
        if (game.joinable()) game.join();
    }
};

const RemoteCharacter* first(const StreamClient& client) {
    const auto all = client.characters();
    return all.empty() ? nullptr : all.front();
}

}  // namespace

TEST(PumpedClient, RoundTripIsMeasuredFromKernelReceiveTimes) {
#if defined(KS_TIMING_EXTERNAL_ONLY)
    if (!std::getenv("KS_TIMING_SERVER")) GTEST_SKIP() << "this build has no server: set KS_TIMING_SERVER=HOST:PORT";
#endif
    Source source;
    StreamClientConfig pc;
    pc.host = source.host;
    pc.port = source.port;
    pc.io = IoMode::Pumped;
    StreamClientConfig tc = pc;
    tc.io = IoMode::OwnThread;
    StreamClient pumped(pc), threaded(tc);
    pumped.connect();
    threaded.connect();
    // The client renders at 60 Hz too: a pumped client reads datagrams that waited up to a frame.
    std::vector<double> gaps;  // per frame: how much later the pumped client shows the server's time
    int stale_stats = 0;       // pumped frames whose stats() did not count what update() just took
    auto next = std::chrono::steady_clock::now();
    for (int f = 0; f < 480; ++f) {
        pumped.update();
        threaded.update();
        const RemoteCharacter* rc = first(pumped);
        if (rc && pumped.characters().size() == 1)  // (threaded: its thread may decode in between)
            stale_stats += pumped.stats().session.characters_decoded != rc->snapshots;
        if (f >= 300 && rc && threaded.character(rc->id) && rc->ready)
            gaps.push_back((threaded.render_time() - pumped.render_time()) * 1000.0);
        next += std::chrono::microseconds(16667);
        std::this_thread::sleep_until(next);
    }
    const double rtt_p = pumped.stats().rtt_ms, rtt_t = threaded.stats().rtt_ms;
    ASSERT_GT(gaps.size(), 150u);
    // After 5 s (either client's first clock estimate may be off by a tick and takes a few pongs to
    // settle), the median: the server's clock is its game's tick, which stalls when a tick is late, and a
    // ping that lands in a stall (either client's) skews that client's estimate for a while.
    std::nth_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(gaps.size() / 2), gaps.end());
    const double display_gap_ms = gaps[gaps.size() / 2];
    RecordProperty("rtt_pumped_ms", std::to_string(rtt_p));
    RecordProperty("rtt_threaded_ms", std::to_string(rtt_t));
    RecordProperty("display_gap_ms", std::to_string(display_gap_ms));
    EXPECT_EQ(stale_stats, 0) << "stats() lagged update()";
#if defined(__linux__)
    EXPECT_TRUE(pumped.stats().receive_timestamps) << "Linux timestamps UDP arrivals (SO_TIMESTAMPNS, or SO_TIMESTAMP under qemu-user): the fix above needs them";
#else
    if (!pumped.stats().receive_timestamps)
        GTEST_SKIP() << "no receive timestamps on this platform (SIO_TIMESTAMPING needs Windows 10 2004 or later; Wine has "
                        "none): a pumped client's round trip includes up to a frame (pumped "
                     << rtt_p << " ms, threaded " << rtt_t << " ms)";
#endif
    EXPECT_GT(rtt_p, 0.0);
    EXPECT_GT(rtt_t, 0.0);
    // Read at frame time, the pumped client's round trip would be a frame longer than the threaded one's.
    EXPECT_LT(std::fabs(rtt_p - rtt_t), 16.667 / 2) << "pumped " << rtt_p << " ms, threaded " << rtt_t << " ms";
}
