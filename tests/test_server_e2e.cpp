// End to end over loopback: a real server and a real client session. Handshake, skeletons,
// snapshots decoded and checked exactly against the server's recording, hostile datagrams while a
// client is connected, a challenge replayed from another port, timeouts.
#include <gtest/gtest.h>

#include <random>

#include <kinesync/common/record/recording.h>
#include <kinesync/offline/builtin_motion.h>
#include "tests/support/snapshot_entries.h"
#include "tests/support/udp_harness.h"
#include "tests/support/scratch.h"

using namespace ks;
using namespace ks::test;

namespace {
WorldConfig small_world() {
    WorldConfig wc;
    wc.characters = 3;
    wc.seed = 5;
    wc.controller.teleport_every_s = 1.0f;
    wc.controller.reset_every_s = 1.7f;
    return wc;
}

// The next datagram on `c`'s socket within `timeout_s` (empty when none).
std::vector<uint8_t> receive_one(UdpClient& c, double timeout_s) {
    std::array<uint8_t, 2048> buf;
    const double end = c.now() + timeout_s;
    while (c.now() < end) {
        asio::ip::udp::endpoint from;
        asio::error_code ec;
        const size_t n = c.socket.receive_from(asio::buffer(buf), from, 0, ec);
        if (!ec) return std::vector<uint8_t>(buf.begin(), buf.begin() + std::ptrdiff_t(n));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return {};
}

// The next decoded packet of `type` (others skipped) within `timeout_s`.
std::optional<net::DecodedPacket> receive_type(UdpClient& c, net::MessageType type, double timeout_s) {
    const double end = c.now() + timeout_s;
    while (c.now() < end) {
        const std::vector<uint8_t> d = receive_one(c, end - c.now());
        if (d.empty()) break;
        if (auto p = net::decode_packet(d); p && p->type == type) return p;
    }
    return std::nullopt;
}
// A handshake driven by hand: ConnectRequest, the server's Challenge echoed back. Returns the
// ChallengeResponse sent (empty when no Challenge came).
std::vector<uint8_t> handshake_by_hand(UdpClient& c, uint64_t salt) {
    c.send_raw(net::build_connect_request({0, 0, 0}, salt));
    const auto challenge = receive_type(c, net::MessageType::Challenge, kDeadlineS);
    if (!challenge) return {};
    net::Cookie cookie{};
    const auto* ch = challenge->message<net::wire::Challenge>();
    std::copy(ch->cookie()->begin(), ch->cookie()->end(), cookie.begin());
    std::vector<uint8_t> response = net::build_challenge_response({1, 0, 0}, salt, cookie);
    c.send_raw(response);
    return response;
}
}  // namespace

TEST(ServerE2E, ClientHandshakesReceivesAndDecodesExactlyWhatTheServerRecorded) {
    const std::string path = ks::test::scratch_path("e2e.ksrec");
    ServerHarness h(small_world(), {}, path);
    UdpClient c(h.port());
    c.session.connect(c.now());
    ASSERT_TRUE(c.run_until([&] { return c.session.state() == ConnectionState::Connected && c.session.skeletons_ready(); }))
        << "state " << c.session.state_name();
    // Receive about 3 s worth (30 Hz x 3 characters) with teleport/reset events among them and a
    // round trip measured; remember what was decoded.
    struct Got {
        uint16_t id;
        uint32_t tick;
        QCharacter q;
    };
    std::vector<Got> got;
    size_t events = 0;
    c.run_until([&] {
        for (const auto& r : c.session.take_received()) got.push_back({r.id, r.tick, *r.state});
        events += c.session.take_events().size();
        return got.size() > 3 * 90 && events > 2 && c.session.rtt_ms() > 0.0;
    });
    h.stop();
    ASSERT_GT(got.size(), 3u * 90u);
    EXPECT_GT(events, 2u) << "teleport/reset events delivered";
    EXPECT_GT(c.session.rtt_ms(), 0.0);
    // Against the recording file.
    const RecordingReadResult rec = read_recording(path);
    ASSERT_FALSE(rec.truncated);
    std::map<uint32_t, const RecordedFrame*> by_tick;
    for (const RecordedFrame& f : rec.frames) by_tick[f.tick] = &f;
    const SkeletonPrecision prec = plan_precision(rec.header.skeletons[0], rec.header.metres_per_unit[0]);
    size_t compared = 0, full = 0;
    for (const Got& g : got) {
        ASSERT_TRUE(by_tick.count(g.tick)) << "tick " << g.tick << " recorded";
        const RecordedCharacter& rc = by_tick[g.tick]->characters[g.id];
        const QCharacter expect = quantize_character(rc.pose, rec.header.skeletons[0], prec, rc.epoch);
        ASSERT_EQ(g.q, expect) << "character " << g.id << " tick " << g.tick;
        ++compared;
    }
    (void)full;
    EXPECT_EQ(compared, got.size());
    EXPECT_EQ(c.session.stats().snapshot_errors, 0u);
    EXPECT_EQ(c.session.stats().malformed, 0u);
}

TEST(ServerE2E, HostileDatagramsAreCountedAndDroppedWhileClientsKeepReceiving) {
    ServerHarness h(small_world(), {});
    UdpClient c(h.port());
    c.session.connect(c.now());
    ASSERT_TRUE(c.run_until([&] { return c.session.skeletons_ready(); }));
    c.session.take_received();
    const net::ServerStats before = h.live_stats();
    auto junk_counted = [&] {
        const net::ServerStats st = h.live_stats();
        return (st.malformed + st.unexpected) - (before.malformed + before.unexpected);
    };
    // A burst of junk from another socket: random bytes, truncated and bit-flipped real packets.
    asio::io_context io;
    asio::ip::udp::socket attacker(io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const asio::ip::udp::endpoint target(asio::ip::make_address("127.0.0.1"), h.port());
    std::mt19937 rng(3);
    const std::vector<uint8_t> real = net::build_ping({1, 0, 0}, 123, 4);
    const int kJunk = 3000;
    for (int i = 0; i < kJunk; ++i) {
        std::vector<uint8_t> d;
        switch (i % 3) {
            case 0: d.resize(1 + rng() % 1400); for (auto& b : d) b = uint8_t(rng()); break;
            case 1: d.assign(real.begin(), real.begin() + std::ptrdiff_t(rng() % real.size())); break;
            default: d = real; d[rng() % d.size()] ^= uint8_t(1u << (rng() % 8)); break;
        }
        attacker.send_to(asio::buffer(d), target);
        if (i % 50 == 49)  // paced by the server's count, so its socket buffer is not what drops them
            wait_until([&] { return junk_counted() >= uint64_t(i + 1) * 9 / 10; }, [&] { c.pump(); });
    }
    // The connected client keeps receiving snapshots.
    size_t after = 0;
    c.run_until([&] {
        after += c.session.take_received().size();
        return after > 60;
    });
    EXPECT_GT(after, 60u);
    h.stop();
    const net::ServerStats& st = h.stats();
    EXPECT_GT(st.malformed + st.unexpected, uint64_t(kJunk) * 9 / 10) << "junk counted (a few may be lost by the socket)";
    EXPECT_EQ(c.session.state(), ConnectionState::Connected);
}

TEST(ServerE2E, ReplayedChallengeResponseFromAnotherPortIsRefused) {
    ServerHarness h(small_world(), {});
    UdpClient c(h.port());
    std::vector<std::vector<uint8_t>> sent;
    c.session.connect(c.now());
    ASSERT_TRUE(c.run_until([&] { return c.session.state() == ConnectionState::Connected; }, kDeadlineS, &sent));
    std::vector<uint8_t> response;
    for (const auto& d : sent) {
        const auto p = net::decode_packet(d);
        if (p && p->type == net::MessageType::ChallengeResponse) response = d;
    }
    ASSERT_FALSE(response.empty());
    // Replay it from another socket (another port).
    UdpClient thief(h.port());
    for (int i = 0; i < 5; ++i) thief.send_raw(response);
    // Once the server has judged all five, an answer would already be in the thief's socket.
    wait_until([&] { return h.live_stats().refused >= 5; }, [&] { c.pump(); });
    thief.pump();
    const bool got_reply = thief.session.stats().datagrams_in > 0;
    h.stop();
    EXPECT_FALSE(got_reply) << "the thief gets nothing back";
    EXPECT_GE(h.stats().refused, 5u);
    EXPECT_EQ(h.stats().connects, 1u);
}

TEST(ServerE2E, SilentClientsTimeOutAndUnauthenticatedRepliesAreSmall) {
    StreamServerConfig sc;
    sc.timeout_s = 0.5;
    ServerHarness h(small_world(), sc);
    UdpClient c(h.port());
    c.session.connect(c.now());
    ASSERT_TRUE(c.run_until([&] { return c.session.state() == ConnectionState::Connected; }));
    wait_until([&] { return h.live_stats().timeouts >= 1; });  // saying nothing
    // A connect request gets a challenge no larger than itself.
    const std::vector<uint8_t> req = net::build_connect_request({0, 0, 0}, 99);
    UdpClient probe(h.port());
    probe.send_raw(req);
    const size_t reply = receive_one(probe, kDeadlineS).size();
    h.stop();
    EXPECT_GT(reply, 0u);
    EXPECT_LE(reply, req.size());
    EXPECT_GE(h.stats().timeouts, 1u);
}

TEST(ServerE2E, ALostAcceptIsSentAgainForADuplicateChallengeResponse) {
    ServerHarness h(small_world(), {});
    UdpClient c(h.port());  // driven by hand: its session is not used
    const std::vector<uint8_t> response = handshake_by_hand(c, 4242);
    ASSERT_FALSE(response.empty()) << "challenged";
    const auto first = receive_type(c, net::MessageType::Accept, kDeadlineS);
    ASSERT_TRUE(first) << "accepted";
    // As if that Accept was lost: the client sends its response again, as it would each round, and
    // gets the same Accept (answered at most every 100 ms).
    std::optional<net::DecodedPacket> again;
    for (const double end = c.now() + kDeadlineS; !again && c.now() < end;) {
        c.send_raw(response);
        again = receive_type(c, net::MessageType::Accept, 0.15);
    }
    ASSERT_TRUE(again) << "a duplicate ChallengeResponse gets the Accept again";
    EXPECT_EQ(again->message<net::wire::Accept>()->client_id(), first->message<net::wire::Accept>()->client_id());
    h.stop();
    EXPECT_EQ(h.stats().connects, 1u) << "one session, not two";
}

TEST(ServerE2E, AConnectRequestOfAnotherVersionIsToldVersionMismatch) {
    ServerHarness h(small_world(), {});
    UdpClient c(h.port());
    std::vector<uint8_t> req = net::build_connect_request({0, 0, 0}, 7);
    const auto d = net::decode_packet(req);
    ASSERT_TRUE(d);
    const size_t at = size_t(reinterpret_cast<const uint8_t*>(d->packet()->header()) - d->storage.data());
    req[at + 4] = uint8_t(net::kProtocolVersion + 1);  // the header's version field
    c.send_raw(req);
    const std::vector<uint8_t> reply = receive_one(c, kDeadlineS);
    ASSERT_FALSE(reply.empty()) << "answered";
    EXPECT_LT(reply.size(), req.size()) << "no amplification";
    const auto p = net::decode_packet(reply);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->type, net::MessageType::Disconnect);
    EXPECT_EQ(p->message<net::wire::Disconnect>()->reason()->str(), "version mismatch");
    EXPECT_EQ(p->message<net::wire::Disconnect>()->code(), uint8_t(DisconnectCode::VersionMismatch));
    h.stop();
    EXPECT_EQ(h.stats().connects, 0u);
}

TEST(ServerE2E, AClientThatNeverAcknowledgesCostsLittleAndIsDropped) {
    StreamServerConfig sc;
    sc.reliable_timeout_s = 1.5;
    ServerHarness h(small_world(), sc);
    UdpClient c(h.port());
    ASSERT_FALSE(handshake_by_hand(c, 99).empty()) << "challenged";
    // Alive (a ping every 100 ms) but acknowledging nothing (ack bits 0), until dropped.
    size_t bytes = 0;
    std::map<std::string, size_t> by_type;
    bool told = false;
    uint16_t seq = 2;
    const double end = c.now() + kDeadlineS;
    double next_ping = 0;
    while (c.now() < end && !told) {
        if (c.now() >= next_ping) {
            const uint16_t ping_seq = seq++;  // one value for both (their order of evaluation is unspecified)
            c.send_raw(net::build_ping({ping_seq, 0, 0}, uint64_t(c.now() * 1e6), ping_seq));
            next_ping = c.now() + 0.1;
        }
        for (std::vector<uint8_t> d = receive_one(c, 0.01); !d.empty(); d = receive_one(c, 0.001)) {
            bytes += d.size();
            const auto p = net::decode_packet(d);
            if (p) by_type[net::message_type_name(p->type)] += d.size();
            if (p && p->type == net::MessageType::Disconnect) told = p->message<net::wire::Disconnect>()->reason()->str() == "not acknowledging";
        }
    }
    h.stop();
    EXPECT_TRUE(told) << "dropped with a reason";
    EXPECT_EQ(h.stats().stalled, 1u);
    // Definitions resent with backoff (0.25, 0.5, 1 s) and pongs: a few kB, not a stream.
    std::string kinds;
    for (const auto& [k, n] : by_type) kinds += k + " " + std::to_string(n) + " ";
    EXPECT_LT(bytes, 12000u) << kinds;
}

TEST(ServerE2E, OneAddressCannotTakeMoreThanItsShareOfSlots) {
    StreamServerConfig sc;
    sc.max_sessions_per_address = 2;
    ServerHarness h(small_world(), sc);
    std::vector<std::unique_ptr<UdpClient>> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<UdpClient>(h.port()));
        clients.back()->session.connect(clients.back()->now());
    }
    auto connected = [&] {
        int n = 0;
        for (auto& c : clients) n += c->session.state() == ConnectionState::Connected;
        return n;
    };
    // Two get in and the third is refused.
    wait_until([&] { return connected() == 2 && h.client_count() == 2 && h.live_stats().refused >= 1; },
               [&] { for (auto& c : clients) c->pump(); });
    EXPECT_EQ(connected(), 2);
    EXPECT_EQ(h.client_count(), 2u);
    h.stop();
    EXPECT_GE(h.stats().refused, 1u);
}

TEST(ServerE2E, ReliableTrafficToAClientThatNeverAcknowledgesStaysWithinItsBudget) {
    // A 1024-joint skeleton: its definitions take 41 datagrams (~49 kB). Resending them all at
    // every backoff step (0.25, 0.5, 1, 2 s) would send ~196 kB in 3 s; inside the 32 kB/s
    // budget (256 kbit/s) a client that acknowledges nothing gets at most a second's worth banked
    // plus the budget's rate, and is dropped when a message stays unacknowledged too long.
    quiet_server_logger();
    StreamServerConfig sc;
    sc.port = 0;
    sc.bandwidth_bps = 256000.0f;
    sc.reliable_timeout_s = 3.0;
    StreamServer server(sc);
    Skeleton big;
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> cm(-0.05f, 0.05f);
    for (int j = 0; j < 1024; ++j) {
        big.names.push_back("joint_number_" + std::to_string(j));
        big.parents.push_back(j - 1);
        big.offsets.push_back({cm(rng), cm(rng), cm(rng)});  // random: about 13 kB coded
    }
    size_t definition_bytes = 0;
    const net::SkeletonDefInput def{1, "big", &big, 1.0f};
    for (const auto& plan : net::plan_skeleton_defs({&def, 1}, {})) definition_bytes += net::build_skeleton_defs({}, 1, plan).size();
    const uint16_t ch = server.add_character(server.add_skeleton("big", big, 1.0f), "tall");
    std::atomic<bool> stop{false};
    std::thread ticker([&] {
        const Pose pose(1024);
        while (!stop) {
            server.set_pose(ch, pose);
            server.end_tick();
            std::this_thread::sleep_for(std::chrono::milliseconds(16));
        }
    });
    UdpClient c(server.port());
    ASSERT_FALSE(handshake_by_hand(c, 5).empty()) << "challenged";
    const double t0 = c.now();
    std::vector<std::pair<double, size_t>> arrivals;  // time, bytes
    bool told = false;
    uint16_t seq = 2;
    double next_ping = 0;
    while (c.now() - t0 < kDeadlineS && !told) {
        if (c.now() >= next_ping) {  // alive, acknowledging nothing
            const uint16_t ping_seq = seq++;  // one value for both (their order of evaluation is unspecified)
            c.send_raw(net::build_ping({ping_seq, 0, 0}, uint64_t(c.now() * 1e6), ping_seq));
            next_ping = c.now() + 0.1;
        }
        for (std::vector<uint8_t> d = receive_one(c, 0.005); !d.empty(); d = receive_one(c, 0.0)) {
            arrivals.push_back({c.now() - t0, d.size() + 28});
            const auto p = net::decode_packet(d);
            if (p && p->type == net::MessageType::Disconnect) told = p->message<net::wire::Disconnect>()->reason()->str() == "not acknowledging";
        }
    }
    stop = true;
    ticker.join();
    EXPECT_TRUE(told) << "dropped for not acknowledging";
    // Over every window from the start: a second's worth banked plus the rate (and 5 % slack).
    const double per_s = 256000.0 / 8.0;
    size_t total = 0;
    for (const auto& [t, n] : arrivals) {
        total += n;
        EXPECT_LE(double(total), 1.05 * per_s * (1.0 + t) + 1500.0) << "at " << t << " s";
    }
    EXPECT_GT(total, 2 * definition_bytes) << "the definitions were sent and resent (within the budget), not withheld";
}

namespace {
// Flips a bit in the middle of a snapshot datagram's entry `index` (dev mode: datagrams are clear).
bool corrupt_entry(std::vector<uint8_t>& d, uint32_t index, uint16_t* id_out) {
    if (d.size() <= net::kSnapshotHeaderBytes + 3) return false;
    const std::vector<PayloadEntry> entries =
        payload_entries(std::span<const uint8_t>(d.data() + net::kSnapshotHeaderBytes, d.size() - net::kSnapshotHeaderBytes));
    if (entries.size() <= index || entries[index].coded_bytes <= 4) return false;
    d[net::kSnapshotHeaderBytes + entries[index].coded_at + entries[index].coded_bytes / 2] ^= 0x20;
    *id_out = entries[index].id;
    return true;
}
}  // namespace

TEST(ServerE2E, AThousandJointRigStreamsUnderLossAndOneCorruptCharacterCostsOnlyItself) {
    // Two stress-rig characters (1,000 joints each: 11 parts), 3 % of snapshot datagrams lost, and
    // once a second one character's entry corrupted in a datagram that also carries others.
    WorldConfig wc;
    wc.characters = 2;
    wc.seed = 3;
    const std::string path = ks::test::scratch_path("e2e_stress.ksrec");
    ServerHarness h(wc, {}, path, 0, "stress");
    UdpClient c(h.port());
    std::mt19937 rng(11);
    int corrupted = 0;
    std::vector<std::pair<uint32_t, uint16_t>> corrupt_ticks;  // (tick, character)
    double last_corrupt = 0;
    c.inbound = [&](std::vector<uint8_t>& d) {
        if (d.size() < net::kSnapshotHeaderBytes || c.session.state() != ConnectionState::Connected) return true;
        const auto p = net::decode_packet(d);
        if (!p || p->type != net::MessageType::Snapshot) return true;
        if (rng() % 100 < 3) return false;  // lost
        uint16_t id = 0;
        if (c.now() - last_corrupt > 1.0 && p->snapshot().tick > 120 && corrupt_entry(d, 1, &id)) {
            last_corrupt = c.now();
            ++corrupted;
            corrupt_ticks.push_back({p->snapshot().tick, id});
        }
        return true;
    };
    c.session.connect(c.now());
    ASSERT_TRUE(c.run_until([&] { return c.session.skeletons_ready(); }));
    struct Got {
        uint16_t id;
        uint32_t tick;
        JointRange joints;
        std::vector<QJoint> q;
    };
    std::vector<Got> got;
    size_t poses = 0;
    std::map<uint32_t, size_t> arrived;  // entries by part (its first joint)
    // Until three corruptions were refused and resynchronized, parts waited for the budget, and
    // every part of both characters kept arriving (more than 100 entries each) as whole poses.
    c.run_until([&] {
        for (const auto& r : c.session.take_received()) {
            got.push_back({r.id, r.tick, r.joints, {r.state->joints.begin() + r.joints.first, r.state->joints.begin() + r.joints.end()}});
            ++arrived[r.joints.first];
        }
        poses += c.session.take_poses().size();
        if (corrupted < 3 || poses <= 150 || arrived.size() < plan_parts(1000).size()) return false;
        for (const auto& [first, n] : arrived)
            if (n <= 100) return false;
        const net::ServerStats st = h.live_stats();
        return c.session.stats().entries_refused >= size_t(corrupted) && st.resyncs >= 1 && st.unsent_by_reason[0] > 0;
    });
    h.stop();
    EXPECT_GE(corrupted, 3);
    EXPECT_GE(c.session.stats().entries_refused, size_t(corrupted)) << "each corrupt entry refused";
    EXPECT_GE(c.session.stats().resyncs_sent, 1u);
    EXPECT_GE(h.final_stats.resyncs, 1u) << "the server heard the requests";
    // Two 1,000-joint characters need more than the client's 256 kbit/s: parts wait their turn,
    // and the server's exported counters say so.
    EXPECT_GT(h.final_stats.unsent_by_reason[0], 0u) << "budget";
    EXPECT_EQ(h.final_stats.unsent_by_reason[1] + h.final_stats.unsent_by_reason[2], 0u) << "nothing too large, no unknown skeleton";
    EXPECT_EQ(c.session.stats().snapshot_errors, 0u) << "no datagram was refused whole";
    // The others in a corrupted datagram were applied: for each corrupted tick, some entry of that
    // tick from another character or part was decoded.
    for (const auto& corrupt : corrupt_ticks) {
        const uint32_t tick = corrupt.first;  // not a structured binding: clang 14 cannot capture one
        const bool others = std::any_of(got.begin(), got.end(), [&](const Got& g) { return g.tick == tick; });
        EXPECT_TRUE(others) << "tick " << tick;
    }
    // Every entry decoded is exactly what the server recorded, and every part of both characters
    // kept arriving, as whole poses.
    const RecordingReadResult rec = read_recording(path);
    std::map<uint32_t, const RecordedFrame*> by_tick;
    for (const RecordedFrame& f : rec.frames) by_tick[f.tick] = &f;
    ASSERT_EQ(rec.header.skeletons[0].size(), 1000);
    const SkeletonPrecision prec = plan_precision(rec.header.skeletons[0], rec.header.metres_per_unit[0]);
    std::map<uint32_t, size_t> per_part;
    for (const Got& g : got) {
        ASSERT_TRUE(by_tick.count(g.tick));
        const RecordedCharacter& rc = by_tick[g.tick]->characters[g.id];
        const QCharacter expect = quantize_character(rc.pose, rec.header.skeletons[0], prec, rc.epoch);
        for (uint32_t j = 0; j < g.joints.count; ++j) ASSERT_EQ(g.q[j], expect.joints[g.joints.first + j]) << "joint " << g.joints.first + j;
        ++per_part[g.joints.first];
    }
    EXPECT_EQ(per_part.size(), plan_parts(1000).size());
    for (const auto& [first, n] : per_part) EXPECT_GT(n, 100u) << "part at joint " << first;
    EXPECT_GT(poses, 150u);
}

// The server plans a join's definitions once for every client that joins while the roster stands
// still (Server::plans_for): a client that joins after a character was added is sent it, and one
// that joins after a character left is not, whether or not anyone was connected meanwhile.
TEST(ServerE2E, ClientsJoiningAfterTheRosterChangedAreSentTheRosterAsItIs) {
    quiet_server_logger();
    StreamServerConfig sc;
    sc.port = 0;
    StreamServer server(sc);
    const Skeleton body = builtin_skeleton();
    const uint16_t sk = server.add_skeleton("body", body, 1.0f);
    std::vector<uint16_t> chars{server.add_character(sk, "first")};
    std::atomic<int> want{1}, have{1};  // characters asked for by the test, in the roster
    std::atomic<bool> stop{false};
    std::thread ticker([&] {  // the game's thread: every roster change and pose from here
        const Pose pose(body.size());
        while (!stop) {
            if (want > have && have == 1) chars.push_back(server.add_character(sk, "second"));
            if (want < have) {
                server.remove_character(chars.front());
                chars.erase(chars.begin());
            }
            have = int(chars.size());
            for (uint16_t c : chars) server.set_pose(c, pose);
            server.end_tick();
            std::this_thread::sleep_for(std::chrono::milliseconds(16));
        }
    });
    auto join = [&](size_t characters) {
        auto c = std::make_unique<UdpClient>(server.port());
        c->session.connect(c->now());
        const bool ok = c->run_until([&] { return c->session.skeletons_ready() && c->session.characters().size() == characters; });
        EXPECT_TRUE(ok) << c->session.characters().size() << " characters, " << characters << " expected";
        return c;
    };
    {
        const auto a = join(1);
        a->session.disconnect(a->now());
        a->pump();
        ASSERT_TRUE(wait_until([&] { return server.stats().clients.empty(); }));
    }
    want = 2;  // added with nobody connected: no plan made for the change
    ASSERT_TRUE(wait_until([&] { return have == 2; }));
    const auto c = join(2), b = join(2);  // b with c's plan
    want = 1;  // removed: the clients are told by an event, no plan made
    ASSERT_TRUE(wait_until([&] { return have == 1; }));
    const auto d = join(1);
    stop = true;
    ticker.join();
    EXPECT_EQ(d->session.characters(), std::vector<uint16_t>{chars.front()}) << "the one that stayed";
}
