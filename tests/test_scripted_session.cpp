// A client session against a scripted server: the server's side of the handshake, skeleton
// definitions (one of 200 joints, sent in parts), and a goodbye, written with the protocol's own
// builders and fed to ClientSession datagram by datagram. Built into the client-side tests
// (tests/client_side) too, so the Windows client runs it under Wine.
#include <gtest/gtest.h>

#include "client/src/session.h"
#include "common/src/net/protocol.h"
#include "tests/support/synthetic.h"

using namespace ks;

namespace {

Skeleton chain(int joints) {
    Skeleton s;
    for (int j = 0; j < joints; ++j) {
        std::string name = "j";  // (not "j" + ...: GCC 12's -Wrestrict false positive at -O3)
        name += std::to_string(j);
        s.names.push_back(name);
        s.parents.push_back(j - 1);
        s.offsets.push_back(j == 0 ? vec3{} : vec3{0, 0.05f, 0});
    }
    return s;
}

// What the session sent since the last call, decoded.
std::vector<net::MessageType> sent_types(ClientSession& session, uint64_t* salt = nullptr) {
    std::vector<net::MessageType> out;
    for (const auto& d : session.take_outgoing()) {
        const auto p = net::decode_packet(d);
        if (!p) continue;
        out.push_back(p->type);
        if (salt && p->type == net::MessageType::ConnectRequest) *salt = p->message<net::wire::ConnectRequest>()->client_salt();
    }
    return out;
}

bool has(const std::vector<net::MessageType>& v, net::MessageType t) { return std::find(v.begin(), v.end(), t) != v.end(); }

struct ScriptedServer {
    uint16_t seq = 1;
    uint32_t mid = 1;
    net::PacketHeader header() { return {seq++, 0, 0}; }
};

}  // namespace

TEST(ScriptedSession, HandshakeSkeletonsInPartsAndAGoodbye) {
    test::Rng rng(3);
    const Skeleton small = chain(5), large = test::random_skeleton(200, rng);  // random offsets: no repeats to code away
    ClientSession session;
    ScriptedServer server;
    double t = 0;
    session.connect(t);
    session.update(t);
    uint64_t salt = 0;
    ASSERT_TRUE(has(sent_types(session, &salt), net::MessageType::ConnectRequest));
    ASSERT_NE(salt, 0u);

    // A Challenge for another salt is not ours; the one for ours gets a ChallengeResponse.
    const net::Cookie cookie{1, 2, 3};
    session.on_datagram(net::build_challenge(server.header(), salt + 1, cookie), t);
    session.update(t += 0.01);
    EXPECT_FALSE(has(sent_types(session), net::MessageType::ChallengeResponse));
    session.on_datagram(net::build_challenge(server.header(), salt, cookie), t);
    session.update(t += 0.01);
    EXPECT_TRUE(has(sent_types(session), net::MessageType::ChallengeResponse));
    EXPECT_EQ(session.state(), ClientSession::State::Challenged);

    session.on_datagram(net::build_accept(server.header(), {7, 60, 30, 0, 0}), t);
    session.update(t += 0.01);
    ASSERT_EQ(session.state(), ClientSession::State::Connected) << session.state_name();
    EXPECT_EQ(session.client_id(), 7u);
    EXPECT_FLOAT_EQ(session.tick_hz(), 60.0f);
    EXPECT_FLOAT_EQ(session.snapshot_hz(), 30.0f);

    const net::SkeletonDefInput defs[] = {{0, "small", &small, 1.0f, 0, -1}, {1, "large", &large, 0.01f, 0, -1}};
    const net::CharacterInfoInput chars[] = {{0, 0, "a"}, {1, 1, "b"}};
    const auto plans = net::plan_skeleton_defs(defs, chars);
    ASSERT_GT(plans.size(), 1u) << "a 200-joint skeleton should take more than one datagram";
    for (size_t i = 0; i < plans.size(); ++i) {
        EXPECT_FALSE(session.skeletons_ready()) << "ready before part " << i;
        session.on_datagram(net::build_skeleton_defs(server.header(), server.mid++, plans[i].defs, plans[i].characters), t);
        session.update(t += 0.01);
    }
    ASSERT_TRUE(session.skeletons_ready());
    EXPECT_EQ(session.characters(), (std::vector<uint16_t>{0, 1}));
    EXPECT_EQ(session.character_name(1), "b");
    ASSERT_EQ(session.skeleton_of(1), 1);
    const net::ReceivedSkeleton* got = session.skeleton(1);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->name, "large");
    EXPECT_FLOAT_EQ(got->metres_per_unit, 0.01f);
    EXPECT_EQ(got->skeleton.parents, large.parents);
    EXPECT_EQ(got->skeleton.names, large.names);
    // The reliable messages are acknowledged.
    session.update(t += 0.1);
    EXPECT_TRUE(has(sent_types(session), net::MessageType::Ack));

    session.on_datagram(net::build_disconnect(server.header(), "server shutting down", uint8_t(DisconnectCode::ServerShutdown)), t);
    session.update(t += 0.01);
    EXPECT_EQ(session.state(), ClientSession::State::Disconnected);
    EXPECT_EQ(session.disconnect_code(), DisconnectCode::ServerShutdown);
}

TEST(ScriptedSession, ASilentServerTimesOutAndGarbageIsCountedNotApplied) {
    ClientSessionConfig cfg;
    cfg.timeout_s = 1.0;
    ClientSession session(cfg);
    double t = 0;
    session.connect(t);
    session.update(t);
    const std::vector<uint8_t> junk(64, 0x5A);
    session.on_datagram(junk, t);
    EXPECT_GT(session.stats().malformed, 0u);
    EXPECT_EQ(session.state(), ClientSession::State::Connecting);
    for (int i = 0; i < 30; ++i) session.update(t += 0.05);
    EXPECT_EQ(session.state(), ClientSession::State::Disconnected);
    EXPECT_EQ(session.disconnect_code(), DisconnectCode::NoAnswer);
}
