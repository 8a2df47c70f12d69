// kinesync-server's stats line: a summary whose length does not grow with the number of clients.
#include <gtest/gtest.h>

#include "programs/testbench/stats_line.h"

using namespace ks;

namespace {
std::vector<net::ClientReport> fake_clients(size_t n) {
    std::vector<net::ClientReport> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back({uint32_t(i + 1), "127.0.0.1:" + std::to_string(50000 + i), 20000.0, 12.0, 1000 + i, 0});
    return out;
}
const ServerStatsFigures kFigures{123456, 8, 310.0, 920.0, 2, 1, 0};
}  // namespace

TEST(StatsLine, LengthDoesNotDependOnTheClientCount) {
    const std::string one = stats_summary_line("stats", kFigures, fake_clients(1));
    const std::string many = stats_summary_line("stats", kFigures, fake_clients(500));
    EXPECT_NE(many.find("clients 500 |"), std::string::npos) << many;
    EXPECT_EQ(many.find('\n'), std::string::npos);
    // Only the digits of the client count (1 -> 500) and of the total (20.0 -> 10000.0 kB/s) differ.
    EXPECT_LE(many.size(), one.size() + 2 + 4) << one << "\n" << many;
    EXPECT_LT(many.size(), 250u) << many;
    // No per-client detail in the summary.
    EXPECT_EQ(many.find("127.0.0.1"), std::string::npos) << many;
}

TEST(StatsLine, SummarisesPerClientFiguresAsMinMeanMax) {
    std::vector<net::ClientReport> clients = fake_clients(500);
    for (size_t i = 0; i < clients.size(); ++i) {
        clients[i].bytes_per_s = 1000.0 * double(i + 1);  // 1 .. 500 kB/s
        clients[i].rtt_ms = double(i % 101);              // 0 .. 100 ms
    }
    const std::string line = stats_summary_line("final", kFigures, clients);
    EXPECT_EQ(line.rfind("final: tick 123456 | clients 500 | characters 8 | tick time p50 310 us p99 920 us | "
                         "missed ticks 2 | malformed 1 | refused 0 | ", 0), 0u)
        << line;
    EXPECT_NE(line.find("out 125250.0 kB/s, per client min/mean/max 1.0/250.5/500.0 kB/s"), std::string::npos) << line;
    EXPECT_NE(line.find("rtt min/mean/max 0.0/"), std::string::npos) << line;
    EXPECT_NE(line.find("/100.0 ms"), std::string::npos) << line;
}

TEST(StatsLine, NoClientsNoPerClientPart) {
    const std::string line = stats_summary_line("stats", kFigures, {});
    EXPECT_NE(line.find("clients 0 |"), std::string::npos) << line;
    EXPECT_EQ(line.find("per client"), std::string::npos) << line;
    EXPECT_EQ(line.substr(line.size() - 9), "refused 0") << line;
}

TEST(StatsLine, ClientDetailLineNamesTheClient) {
    const std::string line = client_stats_line({7, "10.0.0.2:5000", 31500.0, 48.4, 900, 0});
    EXPECT_EQ(line, "client 7 (10.0.0.2:5000): 31.5 kB/s, rtt 48.4 ms, 900 snapshots sent");
}

TEST(StatsLine, MalformedDatagramsAreBrokenDownByReasonMostFrequentFirst) {
    ServerStatsFigures f = kFigures;
    f.malformed = 12;
    f.malformed_by_reason[size_t(net::DecodeError::VerifyFailed)] = 2;
    f.malformed_by_reason[size_t(net::DecodeError::TooShort)] = 10;
    const std::string line = stats_summary_line("stats", f, {});
    EXPECT_NE(line.find("| malformed 12 (too short 10, flatbuffer verification failed 2) | refused 0"), std::string::npos) << line;
    // Equal counts keep the enum's order.
    f.malformed_by_reason = {};
    f.malformed = 2;
    f.malformed_by_reason[size_t(net::DecodeError::BadValue)] = 1;
    f.malformed_by_reason[size_t(net::DecodeError::TooLong)] = 1;
    EXPECT_NE(stats_summary_line("stats", f, {}).find("| malformed 2 (too long 1, bad value 1) |"), std::string::npos);
}

TEST(StatsLine, AuthenticationDropsShowOnlyWhenThereAreAny) {
    ServerStatsFigures f = kFigures;
    EXPECT_EQ(stats_summary_line("stats", f, {}).find("dropped"), std::string::npos);
    f.forged = 3;
    f.rate_limited = 9;
    EXPECT_NE(stats_summary_line("stats", f, {}).find("| dropped: tokens 0, unauthenticated 0, forged 3, replayed 0, over rate 9"),
              std::string::npos)
        << stats_summary_line("stats", f, {});
}

TEST(StatsLine, NoMalformedNoBreakdown) {
    ServerStatsFigures f = kFigures;
    f.malformed = 0;
    f.malformed_by_reason[size_t(net::DecodeError::TooShort)] = 3;  // stale reasons without a total are not shown
    EXPECT_NE(stats_summary_line("stats", f, {}).find("| malformed 0 | refused 0"), std::string::npos);
    EXPECT_EQ(malformed_reasons_text({}), "");
}

TEST(StatsLine, EveryReasonAtOnceStaysOneBoundedLine) {
    ServerStatsFigures f = kFigures;
    f.malformed = 0;
    for (size_t r = 1; r < f.malformed_by_reason.size(); ++r) f.malformed += f.malformed_by_reason[r] = 1000000 + r;
    const std::string line = stats_summary_line("stats", f, fake_clients(3));
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_NE(line.find("(bad skeleton reference 1000017, bad token 1000016, bad value 1000015, bad skeleton 1000014"), std::string::npos) << line;
    EXPECT_EQ(line.find("none"), std::string::npos) << line;
    EXPECT_LT(line.size(), 800u) << line;
}
