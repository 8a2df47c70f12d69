// The per-client bandwidth budget and the server's byte counts are the same wire bytes (UDP
// payload plus 28 bytes of IPv4 and UDP headers per datagram), and what a client is sent stays
// within its budget over any 10 s window: snapshots, reliable messages and pongs together.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/src/net/protocol.h"
#include "programs/server/sim/in_process_rig.h"
#include "tests/support/udp_harness.h"

using namespace ks;

namespace {

// The most bytes any window of `window` consecutive ticks carried.
size_t busiest_window(const std::vector<InProcessRig::Sent>& sent, int ticks, int window) {
    std::vector<size_t> per_tick(size_t(ticks) + 1, 0);
    for (const InProcessRig::Sent& s : sent) per_tick[size_t(std::clamp(s.tick, 0, ticks))] += s.wire_bytes;
    size_t sum = 0, most = 0;
    for (int t = 0; t <= ticks; ++t) {
        sum += per_tick[size_t(t)];
        if (t >= window) sum -= per_tick[size_t(t - window)];
        most = std::max(most, sum);
    }
    return most;
}

}  // namespace

TEST(WireBudget, AClientsRateStaysWithinItsBudgetOverAnyTenSecondWindow) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library();
    InProcessRigConfig rc;
    rc.characters = 24;  // far more than the budget carries: it is spent every snapshot
    rc.clients = 3;
    rc.worker_threads = 0;
    rc.bandwidth_bps = 128000.0f;
    InProcessRig rig(lib, rc);
    const int ticks = 40 * 60, window = 10 * 60;
    for (int n = 1; n <= ticks; ++n) rig.tick(n);

    const double per_s = rc.bandwidth_bps / 8.0, per_snapshot = per_s / 30.0;
    // A token bucket's depth: one snapshot's carry and one reliable burst (a datagram at least).
    const double burst = per_snapshot + std::max(per_snapshot, double(net::kMaxDatagram + net::kIpUdpHeaderBytes));
    const std::vector<net::ClientReport> reports = rig.server().clients();
    ASSERT_EQ(reports.size(), size_t(rc.clients));
    for (int c = 0; c < rc.clients; ++c) {
        const auto& sent = rig.sent_to(c);
        const size_t most = busiest_window(sent, ticks, window);
        EXPECT_LE(double(most), per_s * 10.0 + burst) << "client " << c << ": " << most << " bytes in 10 s";
        // The budget is spent, so the bound above is what limits it.
        EXPECT_GE(double(most), 0.9 * per_s * 10.0) << "client " << c;
        // The server's own count is the transport's, byte for byte (but the Challenge: it goes
        // before there is a session).
        const size_t total = std::accumulate(sent.begin(), sent.end(), size_t(0), [](size_t a, const auto& s) {
            return a + (s.type == net::MessageType::Challenge ? 0 : s.wire_bytes);
        });
        EXPECT_EQ(reports[size_t(c)].bytes_sent, total) << "client " << c;
    }
}
