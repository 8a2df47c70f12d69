// The server measures each client's round trip as the client measures its own (from the kernel's
// receive times, less the time the other side held the probe), so the two agree: within 1 ms on
// loopback, however busy either side's thread is.
#include <gtest/gtest.h>

#include <cmath>

#include <kinesync/client/stream_client.h>

#include "tests/support/udp_harness.h"

using namespace ks;
using namespace ks::test;

TEST(RoundTrip, TheServersRoundTripAgreesWithTheClientsOnLoopback) {
    WorldConfig wc;
    wc.characters = 4;
    ServerHarness server(wc, StreamServerConfig{});
    StreamClientConfig cc;
    cc.host = "127.0.0.1";
    cc.port = server.port();
    cc.io = IoMode::OwnThread;
    StreamClient client(cc);
    client.connect();
    // Both sides smooth their samples alike; after a few pings each has settled.
    auto server_rtt = [&] {
        const auto clients = server.server->stats().clients;
        return clients.empty() ? 0.0 : clients[0].rtt_ms;
    };
    ASSERT_TRUE(wait_until([&] { return server_rtt() > 0 && client.stats().rtt_ms > 0; }, [&] { client.update(); }))
        << "no round trip measured on both sides";
    int agreed = 0;
    double last_server = 0, last_client = 0;
    // Five consecutive agreements (each probe changes both), polled with the client's frames.
    ASSERT_TRUE(wait_until(
        [&] {
            const double s = server_rtt(), c = client.stats().rtt_ms;
            if (s == last_server && c == last_client) return false;
            last_server = s;
            last_client = c;
            agreed = std::fabs(s - c) <= 1.0 ? agreed + 1 : 0;
            return agreed >= 5;
        },
        [&] { client.update(); }, kDeadlineS, std::chrono::milliseconds(5)))
        << "server " << last_server << " ms, client " << last_client << " ms";
}

TEST(RoundTrip, AForgedEchoIsCountedAndChangesNothing) {
    WorldConfig wc;
    wc.characters = 1;
    ServerHarness server(wc, StreamServerConfig{});
    UdpClient client(server.port());
    client.session.connect(client.now());
    ASSERT_TRUE(client.run_until([&] { return client.session.state() == ConnectionState::Connected; }));
    // An echo of a server clock far in the future: a negative round trip.
    client.send_raw(net::build_ping({60000, 0, 0}, 1, 1, uint64_t(1) << 60, 0));
    ASSERT_TRUE(client.run_until([&] { return server.live_stats().echoes_refused >= 1; })) << "the forged echo was not counted";
    const auto clients = server.server->stats().clients;
    ASSERT_EQ(clients.size(), 1u);
    EXPECT_LT(clients[0].rtt_ms, 1000.0);
}
