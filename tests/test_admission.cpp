// Admission (kinesync/server/admission_config.h): who may start a handshake and how often. An
// in-process server (tests/support/in_process_server.h: datagrams from any address, the test's
// clock) sprayed with handshakes from thousands of addresses while a real client connects; the
// global budget before the cookie, the per-address and per-prefix limits after it; the table of
// used tokens. The attacks of tests/test_handshake_attacks.cpp build on these.
#include <gtest/gtest.h>

#include "tests/support/in_process_server.h"

using namespace ks;
using namespace ks::net;
using namespace ks::test;

TEST(ServerAdmission, RequestsAreAnsweredFromOneBudgetWithNothingKeptPerPrefix) {
    ServerConfig sc;
    sc.admission.challenge_rate = 10;
    sc.admission.challenge_burst = 20;
    InProcess p(sc);
    // 200 requests at once, alternating between two /24s (many addresses and ports in each): the
    // burst of 20 is shared evenly, whatever prefix asks more.
    auto from = [](int i) { return ep((i % 2 ? "198.51.100." : "203.0.113.") + std::to_string(i / 2 % 250), uint16_t(6000 + i)); };
    auto challenges = [&](int first, int count, int parity) {
        size_t n = 0;
        for (int i = first; i < first + count; ++i) n += i % 2 == parity && p.sent_to(from(i), MessageType::Challenge);
        return n;
    };
    for (uint16_t i = 0; i < 200; ++i) p.server->inject(from(i), build_connect_request({}, i + 1));
    EXPECT_EQ(challenges(0, 200, 0), 10u) << "half the burst";
    EXPECT_EQ(challenges(0, 200, 1), 10u) << "half the burst";
    EXPECT_EQ(p.limited(AdmissionLimit::ChallengeAll), 180u);
    // A second later, 100 more: the rate's 10.
    p.t += 1.0;
    for (uint16_t i = 200; i < 300; ++i) p.server->inject(from(i), build_connect_request({}, i + 1));
    EXPECT_EQ(challenges(200, 100, 0) + challenges(200, 100, 1), 10u) << "a second's rate";
    EXPECT_EQ(p.limited(AdmissionLimit::ChallengeAll), 270u);
}

TEST(ServerAdmission, OneAddressWithGoodCookiesGetsABurstOfHandshakesThenItsRate) {
    ServerConfig sc;
    sc.admission.handshake_rate = 1;
    sc.admission.handshake_burst = 5;
    sc.max_sessions_per_address = 100;
    InProcess p(sc);
    for (uint16_t i = 0; i < 50; ++i) p.server->inject(ep("198.51.100.7", uint16_t(6000 + i)), build_connect_request({}, i + 1));
    ASSERT_EQ(p.out.size(), 50u) << "one address, under its prefix's burst";
    for (uint16_t i = 0; i < 50; ++i) {
        const auto from = ep("198.51.100.7", uint16_t(6000 + i));
        p.server->inject(from, build_challenge_response({0, 0, 0}, i + 1, *p.cookie_for(from)));
        if (i == 39) p.t += 3.0;  // the last ten, three seconds later: three more
    }
    EXPECT_EQ(p.server->stats().connects, 5u + 3u) << "the burst, then the rate";
    EXPECT_EQ(p.limited(AdmissionLimit::HandshakeAddress), 50u - 8u);
}

TEST(ServerAdmission, ASessionFloodingPingsGetsAtMostItsBurstOfPongs) {
    ServerConfig sc;
    sc.session_rate = 50;
    sc.session_burst = 100;
    sc.secret_seed = 5;
    InProcess p(sc);
    const auto a = ep("198.51.100.9", 7000);
    p.server->inject(a, build_connect_request({}, 77));
    ASSERT_EQ(p.out.size(), 1u);
    p.server->inject(a, build_challenge_response({0, 0, 0}, 77, *p.cookie_for(a)));
    ASSERT_EQ(p.sent_to(a, MessageType::Accept), 1u);
    for (uint16_t i = 0; i < 1000; ++i) p.server->inject(a, build_ping({uint16_t(i + 1), 0, 0}, i, i));
    const size_t pongs = p.sent_to(a, MessageType::Pong);
    EXPECT_LE(pongs, 100u) << "the burst";
    EXPECT_GE(pongs, 99u);
    EXPECT_EQ(p.server->stats().rate_limited, 1000u - pongs);
    // A second later, its rate.
    p.t += 1.0;
    for (uint16_t i = 1000; i < 1200; ++i) p.server->inject(a, build_ping({uint16_t(i + 1), 0, 0}, i, i));
    EXPECT_EQ(p.sent_to(a, MessageType::Pong), pongs + 50u);
}

TEST(ServerAdmission, ACapturedRequestSprayedFromTenThousandAddressesOpensAtMostTheBudgetAndARealClientStillGetsIn) {
    const Key key = random_key();
    ServerConfig sc = keyed(key);
    sc.admission.challenge_rate = 2000;  // a sixth of the spray answered
    sc.admission.challenge_burst = 200;
    InProcess p(sc);
    // 10,000 spoofed addresses spread over many /24s, 12,000 datagrams a second, for 0.3 s before
    // the real client starts and all the while it connects.
    Flood spray{&p, {captured_request(token(key, 1))}, [](uint64_t i) { return v4(0x0A000001u + uint32_t(i % 10000) * 256, uint16_t(1024 + i % 60000)); }, 12};
    spray_for(p, spray, 300);
    EXPECT_LE(p.server->stats().tokens_opened, 200u + 600u + 1u) << "the budget bounds the decryptions";
    EXPECT_GE(p.server->stats().tokens_opened, 200u + 600u - 3u);
    const double took = connect_seconds(p, ep("203.0.113.50", 5000), token(key, 2), std::ref(spray));
    EXPECT_GE(took, 0.0) << "the real client did not get in within 2 s";
    EXPECT_EQ(p.server->stats().connects, 1u);
    EXPECT_GT(spray.sent, 3000u);
}

TEST(ServerAdmission, ForgedCookiesFromManyAddressesOpenNoToken) {
    const Key key = random_key();
    InProcess p(keyed(key));
    const std::optional<ConnectToken> t = parse_connect_token(token(key, 1));
    const HandshakeProof proof = handshake_proof(t->client_to_server, Cookie{}, 1);
    const std::vector<uint8_t> forged = build_challenge_response({0, 0, 0}, 1, Cookie{}, &proof);
    for (size_t i = 0; i < 10000; ++i) p.server->inject(ep("10.1." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256), 4000), forged);
    EXPECT_EQ(p.server->stats().tokens_opened, 0u);
    EXPECT_EQ(p.server->stats().refused, 10000u);
    EXPECT_EQ(p.server->stats().connects, 0u);
}

TEST(ServerAdmission, ACopiedTokenWithoutItsKeysOpensNothingAndStaysGoodForItsHolder) {
    const Key key = random_key();
    InProcess p(keyed(key));
    const std::vector<uint8_t> tok = token(key, 7);
    // A thief who copied the token off the wire handshakes from its own address: it gets a cookie
    // (the token opens), but cannot make the proof, which needs the token's client-to-server key.
    const auto thief = ep("198.51.100.66", 6666);
    const std::optional<ConnectToken> t = parse_connect_token(tok);
    const TokenField tf{t->expire_s, t->private_token};
    p.server->inject(thief, build_connect_request({0, 0, 0}, 3, &tf));
    const std::optional<Cookie> cookie = p.cookie_for(thief);
    ASSERT_TRUE(cookie);
    const HandshakeProof guess = handshake_proof(random_key(), *cookie, 3);
    p.server->inject(thief, build_challenge_response({0, 0, 0}, 3, *cookie, &guess));
    EXPECT_EQ(p.server->stats().connects, 0u);
    EXPECT_EQ(p.server->stats().tokens_refused, 1u);
    EXPECT_EQ(p.sent_to(thief, MessageType::Disconnect), 0u) << "refused in silence";
    p.out.clear();
    EXPECT_GE(connect_seconds(p, ep("203.0.113.9", 5000), tok), 0.0) << "the token is still unused";
}

TEST(ServerAdmission, TokensThatLiveLongerThanTheTableRemembersAreRefusedUnopened) {
    const Key key = random_key();
    ServerConfig sc = keyed(key);
    sc.admission.max_token_lifetime_s = 600;
    InProcess p(sc);
    const auto from = ep("198.51.100.3", 5000);
    p.server->inject(from, captured_request(token(key, 1, 3600)));
    EXPECT_EQ(p.sent_to(from, MessageType::Disconnect), 1u);
    EXPECT_EQ(p.server->stats().tokens_refused, 1u);
    EXPECT_EQ(p.server->stats().tokens_opened, 0u);
    p.out.clear();
    EXPECT_GE(connect_seconds(p, from, token(key, 1, 600)), 0.0);
}

TEST(ServerAdmission, OnePrefixHoldsAtMostItsShareOfSessions) {
    ServerConfig sc;
    sc.admission.max_sessions_per_prefix = 3;
    InProcess p(sc);
    for (uint16_t i = 1; i <= 5; ++i) {
        const auto from = ep("198.51.100." + std::to_string(i), 5000);
        p.server->inject(from, build_connect_request({}, i));
        p.server->inject(from, build_challenge_response({0, 0, 0}, i, *p.cookie_for(from)));
    }
    EXPECT_EQ(p.server->stats().connects, 3u);
    EXPECT_EQ(p.sent_to(ep("198.51.100.5", 5000), MessageType::Disconnect), 1u);
    const auto other = ep("203.0.113.1", 5000);
    p.server->inject(other, build_connect_request({}, 9));
    p.server->inject(other, build_challenge_response({0, 0, 0}, 9, *p.cookie_for(other)));
    EXPECT_EQ(p.server->stats().connects, 4u) << "another prefix is not affected";
}

TEST(ServerAdmission, SessionsOpenAtTheGlobalRate) {
    ServerConfig sc;
    sc.admission.session_open_rate = 1;
    sc.admission.session_open_burst = 4;
    sc.max_clients = 64;
    InProcess p(sc);
    for (uint16_t i = 1; i <= 20; ++i) {
        const auto from = ep("10." + std::to_string(i) + ".0.1", 5000);
        p.server->inject(from, build_connect_request({}, i));
        p.server->inject(from, build_challenge_response({0, 0, 0}, i, *p.cookie_for(from)));
        if (i == 15) p.t += 2.0;  // the last five, two seconds later: two more
    }
    EXPECT_EQ(p.server->stats().connects, 4u + 2u) << "the burst, then the rate";
    EXPECT_EQ(p.limited(AdmissionLimit::SessionOpen), 20u - 6u);
}

TEST(Admission, TheUsedTokenTableIsSizedFromLifetimeAndRateAndSaysWhenFull) {
    AdmissionConfig cfg;
    cfg.session_open_rate = 0.5;
    cfg.session_open_burst = 2;
    cfg.max_token_lifetime_s = 4;
    Admission a(cfg, 32, false);
    EXPECT_EQ(a.token_capacity(), 4u) << "burst + rate x lifetime";
    for (uint8_t i = 0; i < 4; ++i) {
        TokenTag t{};
        t[0] = i;
        ASSERT_EQ(a.token_use(t), Admission::TokenUse::Fresh);
        a.remember_token(t, 1000 + i);
    }
    TokenTag used{}, fresh{};
    fresh[0] = 9;
    EXPECT_EQ(a.token_use(used), Admission::TokenUse::Used);
    EXPECT_EQ(a.token_use(fresh), Admission::TokenUse::TableFull);
    a.forget_expired_tokens(1002);  // the first two have expired
    EXPECT_EQ(a.tokens_remembered(), 2u);
    EXPECT_EQ(a.token_use(fresh), Admission::TokenUse::Fresh);
    EXPECT_EQ(a.token_use(used), Admission::TokenUse::Fresh) << "forgotten once expired (and refused as expired anyway)";
}

TEST(Admission, NonsenseSettingsAreRefusedNamingTheField) {
    auto field_of = [](AdmissionConfig cfg) {
        try {
            Admission a(cfg, 32, false);
        } catch (const Error& e) {
            return e.field();
        }
        return std::string("accepted");
    };
    AdmissionConfig c;
    c.challenge_rate = 0;
    EXPECT_EQ(field_of(c), "config.admission.challenge_rate");
    c = {};
    c.prefix_handshake_burst = std::nan("");
    EXPECT_EQ(field_of(c), "config.admission.prefix_handshake_burst");
    c = {};
    c.max_token_lifetime_s = 0;
    EXPECT_EQ(field_of(c), "config.admission.max_token_lifetime_s");
    c = {};
    c.max_sessions_per_prefix = 0;
    EXPECT_EQ(field_of(c), "config.admission.max_sessions_per_prefix");
    EXPECT_EQ(field_of({}), "accepted");
}

TEST(Admission, PrefixesAreTheSlash24AndTheSlash64) {
    using asio::ip::make_address;
    EXPECT_TRUE(same_prefix(make_address("198.51.100.1"), make_address("198.51.100.254")));
    EXPECT_FALSE(same_prefix(make_address("198.51.100.1"), make_address("198.51.101.1")));
    EXPECT_TRUE(same_prefix(make_address("198.51.100.1"), make_address("::ffff:198.51.100.9"))) << "IPv4-mapped is IPv4";
    EXPECT_TRUE(same_prefix(make_address("2001:db8:1:2::1"), make_address("2001:db8:1:2:ffff::1")));
    EXPECT_FALSE(same_prefix(make_address("2001:db8:1:2::1"), make_address("2001:db8:1:3::1")));
    EXPECT_FALSE(same_prefix(make_address("0.0.0.1"), make_address("::1"))) << "families never share a prefix";
}

TEST(ServerAdmission, AReplayedChallengeResponseNeverTouchesASessionThatHasSpoken) {
    InProcess p(ServerConfig{});
    const auto a = ep("198.51.100.20", 7000);
    p.server->inject(a, build_connect_request({}, 5));
    const std::vector<uint8_t> response = build_challenge_response({0, 0, 0}, 5, *p.cookie_for(a));
    p.server->inject(a, response);
    p.server->inject(a, response);  // at once: our Accept answers it (at most every 100 ms)
    p.t += 0.1;
    p.server->inject(a, response);  // before the session spoke: our Accept may have been lost
    EXPECT_EQ(p.sent_to(a, MessageType::Accept), 2u);
    p.server->inject(a, build_ping({1, 0, 0}, 1, 1));  // the session speaks: it has its Accept
    const size_t sent = p.out.size();
    const uint64_t unexpected = p.server->stats().unexpected;
    for (int i = 0; i < 10; ++i) p.server->inject(a, response);  // a replay, from its very address
    EXPECT_EQ(p.out.size(), sent) << "nothing sent in the session's name";
    EXPECT_EQ(p.server->stats().unexpected, unexpected + 10);
    EXPECT_EQ(p.server->stats().connects, 1u);
}

// Snapshot bytes a real client receives over 120 ticks while `pings_per_tick` clear pings arrive
// from its address (dev mode: they are its own packets), each answered by a Pong.
size_t snapshot_bytes_with_pings(int pings_per_tick, size_t* pongs) {
    ServerConfig sc;
    sc.tick_hz = 30;
    sc.snapshot_hz = 30;
    sc.bandwidth_bps = 16000;
    sc.session_rate = sc.session_burst = 1e6;
    InProcess p(sc);
    const auto where = ep("198.51.100.30", 5000);
    ClientSession c;
    Pose pose(p.roster.skeletons[0].skeleton);
    size_t bytes = 0;
    *pongs = 0;
    for (uint32_t t = 1; t <= 180; ++t) {
        const double now = t / 30.0;
        p.t = now;
        for (int i = 0; i < pings_per_tick && t > 60; ++i) p.server->inject(where, build_ping({uint16_t(t * 8 + i), 0, 0}, t, i));
        pose.pos[0].x = 0.01f * float(t);
        pose.vel[0].x = 0.3f;
        const TickFrame::CharacterPose cp{0, 0, &pose};
        TickFrame f;
        f.tick = t;
        f.characters = {cp};
        p.server->publish(f);
        if (t == 1) c.connect(now);
        c.update(now);
        for (const auto& d : c.take_outgoing()) p.server->inject(where, d);
        for (const auto& [to, d] : p.out) {
            if (to != where) continue;
            const auto dp = decode_packet(d);
            if (dp && dp->type == MessageType::Snapshot && t > 60) bytes += d.size();
            if (dp && dp->type == MessageType::Pong) ++*pongs;
            c.on_datagram(d, now);
        }
        p.out.clear();
    }
    EXPECT_EQ(c.state(), ClientSession::State::Connected);
    return bytes;
}

TEST(ServerAdmission, PongsShareTheClientsBudgetWithItsSnapshots) {
    size_t pongs_quiet = 0, pongs_flood = 0;
    const size_t quiet = snapshot_bytes_with_pings(0, &pongs_quiet);
    const size_t flood = snapshot_bytes_with_pings(4, &pongs_flood);
    EXPECT_GT(quiet, 500u) << "snapshots flowed";
    EXPECT_GE(pongs_flood, 400u);
    // 4 pongs a tick (about 88 bytes each) take more than the whole 2 kB/s budget: the snapshots
    // give way instead of the client receiving budget plus pongs.
    EXPECT_LT(double(flood), 0.5 * double(quiet)) << "snapshot bytes with pongs " << flood << " vs " << quiet;
}
