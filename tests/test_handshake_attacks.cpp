// Attacks on the handshake (schema/PROTOCOL.md, "Handshake" and "Admission"), each carried out
// against an in-process server (tests/support/in_process_server.h: spoofed sources, the test's
// clock) while a real ClientSession connects, and each also run in a broken variant that shows
// the test can fail:
//   1. an injector beside the client's link answers every ConnectRequest with a forged Challenge
//      before the server's, 30 ms later, arrives;
//   2. spoofed ConnectRequests from the client's own /24 at 10,000 and 50,000 a second;
//   3. a spoofed spray over 16,384 /24s at the rate one server thread reads (100,000 a second), and
//      a spray of cookie-valid ChallengeResponses from 4,096 addresses that really receive.
//   4. (found in review) an on-path attacker resends the client's ConnectRequest from addresses of
//      its own and relays the server's genuine Challenges to them, before the client's own;
//   5. (found in an attack run) the same relay, placed by an attacker who predicts the client's
//      sample of a round's Challenges from the salt it sees (the broken variant: a generator
//      seeded with the salt), and a blind injector of verified Challenges at 100 times its rate.
// The figures (tries to connect, share of requests answered, seconds) are printed.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

#include <cstdio>
#include "client/src/challenge_sample.h"
#include "tests/support/in_process_server.h"

using namespace ks;
using namespace ks::net;
using namespace ks::test;

namespace {

// `count` Challenges for the request's salt, each with a random cookie and a mac: random, or made
// with the server-to-client key when the attacker has it (the broken variant: what every forged
// Challenge would be to a client that did not check the mac).
Injector challenge_forger(std::mt19937_64& rng, const Key* server_to_client, int count) {
    return [&rng, server_to_client, count](std::span<const uint8_t> d) -> std::vector<std::vector<uint8_t>> {
        const auto p = decode_packet(d);
        if (!p || p->type != MessageType::ConnectRequest) return {};
        const uint64_t salt = p->message<wire::ConnectRequest>()->client_salt();
        std::vector<std::vector<uint8_t>> out;
        for (int i = 0; i < count; ++i) {
            Cookie cookie{};
            for (auto& b : cookie) b = uint8_t(rng());
            ChallengeMac mac{};
            for (auto& b : mac) b = uint8_t(rng());
            if (server_to_client) mac = challenge_mac(*server_to_client, salt, cookie);
            out.push_back(build_challenge({0, 0, 0}, salt, cookie, &mac));
        }
        return out;
    };
}

// The request `d` resent from `count` addresses of the attacker's (192.0.2.x), and the server's
// genuine Challenges to them (valid macs; cookies bound to, and naming, those addresses).
std::vector<std::vector<uint8_t>> relayed_challenges(InProcess& p, std::span<const uint8_t> d, size_t count) {
    std::vector<std::vector<uint8_t>> challenges;
    for (size_t i = 0; i < count; ++i) {
        const auto relay = v4(0xC0000200u + uint32_t(i), 9000);
        p.server->inject(relay, d);
        for (auto it = p.out.begin(); it != p.out.end();)
            if (it->first == relay) {
                challenges.push_back(std::move(it->second));
                it = p.out.erase(it);
            } else {
                ++it;
            }
    }
    return challenges;
}

// Resends each ConnectRequest from `relays` addresses of its own and hands the server's genuine
// Challenges to them (valid macs; cookies bound to the relays' addresses) to the client at once.
Injector request_relay(InProcess& p, int relays) {
    return [&p, relays](std::span<const uint8_t> d) {
        std::vector<std::vector<uint8_t>> challenges;
        const auto m = decode_packet(d);
        if (!m || m->type != MessageType::ConnectRequest) return challenges;
        return relayed_challenges(p, d, size_t(relays));
    };
}

// The old sampler, kept as the broken variant: a linear congruential generator seeded with the
// handshake's salt, which every ConnectRequest carries in clear.
uint64_t lcg_step(uint64_t& state) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
}
ChallengeSample::Draw lcg_seeded_by_salt(uint64_t salt) {
    return [state = salt](uint64_t bound) mutable { return lcg_step(state) % bound; };
}

// Relays each ConnectRequest from addresses of its own (as request_relay), as many as it takes to
// throw the client's own Challenge away: it mirrors the client's generator from the salt (right
// only for the broken variant), relays the round's first `keep` and then n more, n chosen so the
// draw that falls on the client's own Challenge, arriving after them, drops it.
Injector predicting_relay(InProcess& p, size_t keep, std::vector<size_t>* relayed_per_round) {
    struct Mirror {
        uint64_t salt = 0, state = 0;
    };
    auto mirror = std::make_shared<Mirror>();
    return [&p, keep, relayed_per_round, mirror](std::span<const uint8_t> d) {
        const auto m = decode_packet(d);
        if (!m || m->type != MessageType::ConnectRequest) return std::vector<std::vector<uint8_t>>{};
        const uint64_t salt = m->message<wire::ConnectRequest>()->client_salt();
        if (salt != mirror->salt) *mirror = {salt, salt};
        size_t n = 0;
        for (;; ++n) {
            uint64_t s = mirror->state;
            for (size_t i = 0; i < n; ++i) lcg_step(s);
            if (lcg_step(s) % (keep + n + 1) >= keep || n == 64) break;
        }
        for (size_t i = 0; i < n + 1; ++i) lcg_step(mirror->state);  // the relayed ones past `keep`, then the client's own
        relayed_per_round->push_back(keep + n);
        return relayed_challenges(p, d, keep + n);
    };
}

struct Tally {
    int connected = 0, tries = 0;
    double worst_s = 0;
    uint64_t requests = 0, challenges = 0, forged = 0;
    void add(const Attempt& a) {
        ++tries;
        connected += a.seconds >= 0;
        worst_s = std::max(worst_s, a.seconds < 0 ? 1e9 : a.seconds);
        requests += a.stats.connect_requests;
        challenges += a.stats.challenges;
        forged += a.stats.challenges_forged;
    }
    double answered() const { return requests ? double(challenges) / double(requests) : 0; }
    std::string text() const {
        char worst[32] = "some never";
        if (connected == tries) std::snprintf(worst, sizeof worst, "worst %.3f s", worst_s);
        char b[200];
        std::snprintf(b, sizeof b, "%d of %d connected (%s); %llu requests, %.2f answered, %llu forged Challenges refused",
                      connected, tries, worst, (unsigned long long)requests, answered(), (unsigned long long)forged);
        return b;
    }
};

// A request with a token that opens (a captured one), and one sealed under another key (refused
// after it is opened): both cost the server a decryption, and the first a full Challenge.
std::vector<std::vector<uint8_t>> flood_requests(const Key& key) {
    return {captured_request(token(key, 999)), captured_request(token(random_key(), 998))};
}

// Ten tries of a newcomer at `where` (a fresh server each, flooded for 0.3 s first), 5 s each.
template <class MakeFlood>
Tally ten_tries(const ServerConfig& sc, const Key& key, const asio::ip::udp::endpoint& where, MakeFlood make_flood) {
    Tally t;
    for (int i = 0; i < 10; ++i) {
        InProcess p(sc);
        Flood flood = make_flood(p);
        spray_for(p, flood, 300);
        t.add(attempt(p, where, token(key, uint64_t(i) + 1), std::ref(flood), 5.0));
    }
    return t;
}

}  // namespace

TEST(HandshakeAttack, AClientConnectsThroughAStreamOfForgedChallenges) {
    // 500 forged Challenges for every ConnectRequest, all before the server's (30 ms later).
    const Key key = random_key();
    std::mt19937_64 rng(7);
    Tally honest, broken;
    for (int i = 0; i < 10; ++i) {
        InProcess p(keyed(key));
        const std::vector<uint8_t> tok = token(key, uint64_t(i) + 1);
        honest.add(attempt(p, ep("198.51.100.7", uint16_t(5000 + i)), tok, kNoSpray, 1.0, 0.030, challenge_forger(rng, nullptr, 500)));
        // Broken variant: the forger has the token's server-to-client key, so its Challenges pass
        // the client's check, as every forged Challenge would if the client did not check: the
        // genuine one is then one among 501, answered in a round with odds of 8/501.
        InProcess q(keyed(key));
        const Key s2c = parse_connect_token(tok)->server_to_client;
        broken.add(attempt(q, ep("198.51.100.7", uint16_t(5000 + i)), tok, kNoSpray, 1.0, 0.030, challenge_forger(rng, &s2c, 500)));
    }
    std::printf("500 forged Challenges per request, 30 ms ahead of the server's: %s\n  forger with the key (broken variant): %s\n",
                honest.text().c_str(), broken.text().c_str());
    EXPECT_EQ(honest.connected, 10);
    EXPECT_LT(honest.worst_s, 1.0);
    EXPECT_GE(honest.forged, 5000u) << "each try met its forged Challenges";
    EXPECT_LT(broken.connected, 8) << "Challenges the client cannot tell from the server's drown the genuine one: the test can fail";
}

TEST(HandshakeAttack, AClientConnectsThroughItsRequestsRelayedFromOtherAddresses) {
    const Key key = random_key();
    auto ten = [&](int relays, double limit_s, const ClientSessionConfig& cc) {
        Tally t;
        for (int i = 0; i < 10; ++i) {
            InProcess p(keyed(key));
            t.add(attempt(p, ep("198.51.100.7", uint16_t(5000 + i)), token(key, uint64_t(i) + 1), kNoSpray, limit_s, 0.030,
                          request_relay(p, relays), cc));
        }
        return t;
    };
    const Tally few = ten(4, 1.0, {}), many = ten(30, 5.0, {});
    ClientSessionConfig first_only;
    first_only.challenges_per_round = 1;
    const Tally broken = ten(30, 0.5, first_only);
    std::printf("each request relayed from 4 addresses: %s\n  from 30: %s\n  from 30, one Challenge answered a round "
                "(broken variant), 0.5 s: %s\n",
                few.text().c_str(), many.text().c_str(), broken.text().c_str());
    EXPECT_EQ(few.connected, 10);
    EXPECT_LT(few.worst_s, 1.0) << "fewer relayed Challenges than a round answers: all answered at once";
    EXPECT_EQ(many.connected, 10) << "more than a round answers: a fair sample is, each round";
    EXPECT_LT(broken.connected, 8) << "answering only the first Challenge (or one a round) is what the relay defeats";
}

TEST(HandshakeAttack, ASpoofedFloodIntoTheClientsSlash24LocksNoOneOut) {
    const Key key = random_key();
    const auto where = ep("198.51.100.7", 5000);
    std::mt19937_64 rng(11);
    auto from_the_slash24 = [&rng](uint64_t) { return v4(0xC6336400u + uint32_t(rng() % 256), uint16_t(1024 + rng() % 60000)); };
    for (const size_t per_s : {size_t(10000), size_t(50000)}) {
        const Tally t = ten_tries(keyed(key), key, where, [&](InProcess& p) { return Flood{&p, flood_requests(key), from_the_slash24, per_s / 1000}; });
        std::printf("%zu spoofed ConnectRequests/s from the client's /24: %s\n", per_s, t.text().c_str());
        EXPECT_GE(t.connected, 9) << per_s << "/s";
    }
    // Broken variant: a budget far below the flood (what a per-prefix limit is to a spoofer of the
    // prefix) leaves the client a share too small to get in within 5 s.
    ServerConfig starved = keyed(key);
    starved.admission.challenge_rate = 100;
    starved.admission.challenge_burst = 10;
    const Tally t = ten_tries(starved, key, where, [&](InProcess& p) { return Flood{&p, flood_requests(key), from_the_slash24, 50}; });
    std::printf("  with a budget of 100/s (broken variant): %s\n", t.text().c_str());
    EXPECT_LT(t.connected, 9) << "the test can fail";
}

TEST(HandshakeAttack, ASprayOverSixteenThousandPrefixesAtTheReadCeilingSlowsNewcomersLittle) {
    const Key key = random_key();
    std::mt19937_64 rng(13);
    auto any_of_16384 = [&rng](uint64_t) { return v4(0x0A000000u + uint32_t(rng() % (16384 * 256)), uint16_t(1024 + rng() % 60000)); };
    const Tally t = ten_tries(keyed(key), key, ep("203.0.113.9", 5000),
                              [&](InProcess& p) { return Flood{&p, flood_requests(key), any_of_16384, 100}; });
    std::printf("100,000 spoofed ConnectRequests/s over 16,384 /24s: %s\n", t.text().c_str());
    EXPECT_GE(t.connected, 9);
    EXPECT_GT(t.answered(), 0.1) << "about the budget's share of the spray (20,000 of 100,000)";
}

TEST(HandshakeAttack, ASprayOfCookieValidResponsesFromFourThousandAddressesSpendsNothingANewcomerNeeds) {
    // The attacker is a player with two tokens of its own and 4,096 addresses that really receive,
    // 16 of them in the newcomer's /24: each gets a cookie, then all spray ChallengeResponses,
    // 50,000 a second: a third with a wrong proof, a third with the first token's right one (its one
    // session opens, then the token is used), a third with the second token's (its session is
    // refused: the player has one).
    const Key key = random_key();
    std::vector<std::optional<ConnectToken>> own = {parse_connect_token(token(key, 5000)), parse_connect_token(token(key, 5000))};
    auto attacker = [](uint64_t i) { return v4((i < 16 ? 0xCB007100u : 0xC0A80000u + uint32_t(i / 250) * 256) + uint32_t(1 + i % 250), 7000); };
    Tally tally;
    uint64_t opened_by_spray = 0, limited = 0, token_limited = 0, in_use = 0;
    for (int k = 0; k < 10; ++k) {
        InProcess p(keyed(key));
        std::vector<std::vector<uint8_t>> responses;
        for (uint64_t i = 0; i < 4096; ++i) {
            const uint64_t salt = 100 + i;
            const ConnectToken& t = *own[i % 3 == 2 ? 1 : 0];
            const TokenField tf{t.expire_s, t.private_token};
            p.server->inject(attacker(i), build_connect_request({0, 0, 0}, salt, &tf));
            if (i % 1000 == 999) p.t += 0.1;  // within the budget
            const std::optional<Cookie> cookie = p.cookie_for(attacker(i));
            ASSERT_TRUE(cookie) << i;
            const HandshakeProof proof = i % 3 ? handshake_proof(t.client_to_server, *cookie, salt) : HandshakeProof{};
            responses.push_back(build_challenge_response({0, 0, 0}, salt, *cookie, &proof));
            p.out.clear();
        }
        const uint64_t opened = p.server->stats().tokens_opened;
        Flood spray{&p, responses, [&attacker](uint64_t n) { return attacker(n % 4096); }, 50};
        const Attempt a = attempt(p, ep("203.0.113.9", 5000), token(key, uint64_t(k) + 1), std::ref(spray), 5.0);
        tally.add(a);
        // The newcomer's own requests open a token each (at most one per request it sent).
        opened_by_spray += std::max<int64_t>(0, int64_t(p.server->stats().tokens_opened - opened) - int64_t(a.stats.connect_requests));
        limited += p.limited(AdmissionLimit::HandshakePrefix) + p.limited(AdmissionLimit::HandshakeAddress);
        token_limited += p.limited(AdmissionLimit::HandshakeToken);
        in_use += p.server->stats().sessions_in_use;
    }
    std::printf("50,000 cookie-valid ChallengeResponses/s from 4,096 addresses: %s; tokens opened by them %llu, held by "
                "per-address and per-prefix limits %llu, by the tokens' own %llu, refused as in use %llu\n",
                tally.text().c_str(), (unsigned long long)opened_by_spray, (unsigned long long)limited, (unsigned long long)token_limited,
                (unsigned long long)in_use);
    EXPECT_GE(tally.connected, 9);
    EXPECT_EQ(opened_by_spray, 0u) << "no ChallengeResponse opens a token";
    EXPECT_EQ(limited, 0u) << "wrong proofs, a used token and a refused one never reach the limits they could spend";
    EXPECT_GT(token_limited, 0u) << "each token's handshakes are held to its own budget";
    EXPECT_GT(in_use, 0u) << "the second token's session was refused";
}

TEST(HandshakeAttack, AnObserverWhoPredictsTheSampleKeepsTheClientOutOnlyWhenTheSampleIsSeededFromTheWire) {
    // Each round the attacker relays the round's first 8 Challenges and as many more as its
    // prediction needs, all 30 ms ahead of the client's own (the attack run's faster path).
    const Key key = random_key();
    std::vector<size_t> relayed;
    auto ten = [&](double limit_s, const ClientSessionConfig& cc, bool knows_address) {
        Tally t;
        for (int i = 0; i < 10; ++i) {
            InProcess p(keyed(key));
            t.add(attempt(p, ep("198.51.100.7", uint16_t(5000 + i)), token(key, uint64_t(i) + 1), kNoSpray, limit_s, 0.030,
                          predicting_relay(p, 8, &relayed), cc, knows_address));
        }
        return t;
    };
    ClientSessionConfig seeded;
    seeded.sample_draw_for_tests = lcg_seeded_by_salt;
    const Tally broken = ten(3.0, seeded, false);
    const double mean_broken = relayed.empty() ? 0 : double(std::accumulate(relayed.begin(), relayed.end(), size_t(0))) / double(relayed.size());
    relayed.clear();
    const Tally os = ten(1.0, {}, false);
    const double mean_os = relayed.empty() ? 0 : double(std::accumulate(relayed.begin(), relayed.end(), size_t(0))) / double(relayed.size());
    const Tally own = ten(1.0, {}, true);
    std::printf("a relay that predicts the sample from the salt (%.1f relayed a round):\n  sample seeded with the salt (broken "
                "variant), 3 s: %s\n  sample from the OS (%.1f relayed a round), 1 s: %s\n  the client knows its address, 1 s: %s\n",
                mean_broken, broken.text().c_str(), mean_os, os.text().c_str(), own.text().c_str());
    EXPECT_EQ(broken.connected, 0) << "an observer who knows the generator and the salt keeps the client out: the test can fail";
    EXPECT_EQ(os.connected, 10);
    EXPECT_LT(os.worst_s, 1.0);
    EXPECT_EQ(own.connected, 10);
    EXPECT_LT(own.worst_s, 0.1) << "its own Challenge, named by its address, is answered as it arrives";
}

TEST(HandshakeAttack, ABlindInjectorAtAHundredTimesTheRateDelaysTheClientByTheSamplesShare) {
    // 1,100 verified Challenges a round (made with the token's server-to-client key, as relayed
    // ones are), all ahead of the client's own, which is then kept with odds 8 / 1,101 a round:
    // 138 rounds, 13.8 s, on average. A client that knows its address answers its own at once.
    const Key key = random_key();
    std::mt19937_64 rng(17);
    auto tries = [&](int n, double limit_s, bool knows_address) {
        Tally t;
        double sum = 0;
        for (int i = 0; i < n; ++i) {
            InProcess p(keyed(key));
            const std::vector<uint8_t> tok = token(key, uint64_t(i) + 1);
            const Key s2c = parse_connect_token(tok)->server_to_client;
            const Attempt a = attempt(p, ep("198.51.100.7", uint16_t(5000 + i)), tok, kNoSpray, limit_s, 0.030,
                                      challenge_forger(rng, &s2c, 1100), {}, knows_address);
            t.add(a);
            sum += a.seconds < 0 ? limit_s : a.seconds;
        }
        return std::make_pair(t, sum / n);
    };
    const auto [own, own_mean] = tries(10, 1.0, true);
    const auto [blind, blind_mean] = tries(5, 60.0, false);
    std::printf("1,100 verified Challenges a round, ahead of the client's own:\n  the client knows its address: %s\n  behind a NAT: %s, "
                "mean %.1f s (the sample's share, 8 / 1,101 a round: 13.8 s expected)\n",
                own.text().c_str(), blind.text().c_str(), blind_mean);
    (void)own_mean;
    EXPECT_EQ(own.connected, 10);
    EXPECT_LT(own.worst_s, 0.1);
    EXPECT_GE(blind.connected, 3) << "odds of 0.013 a try of more than 60 s";
}

TEST(ChallengeSample, TheLastOfARoundsChallengesIsKeptWithOddsKeepOverSeen) {
    // The client's own Challenge after 1,100 relayed ones: kept at the round's end with odds
    // 8 / 1,101, 21.8 times in 3,000 rounds (sd 4.7). Broken variants: a draw that always says
    // bound - 1 (first come, first kept: never) and one that always says 0 (the last always).
    auto kept_own = [](ChallengeSample::Draw draw) {
        ChallengeSample sample(8, std::move(draw));
        int kept = 0;
        for (int round = 0; round < 3000; ++round) {
            const uint64_t own_at = 1100;
            for (uint64_t i = 0; i < 1101; ++i) {
                net::Cookie c{};
                for (int b = 0; b < 8; ++b) c[size_t(b)] = uint8_t(i >> (8 * b));
                c[8] = i == own_at;
                sample.offer(c);
            }
            for (const net::Cookie& c : sample.kept()) kept += c[8];
            sample.next_round();
        }
        return kept;
    };
    const int os = kept_own({}), first = kept_own([](uint64_t bound) { return bound - 1; }),
              last = kept_own([](uint64_t) { return uint64_t(0); });
    std::printf("the client's own Challenge after 1,100 others kept in %d of 3,000 rounds (21.8 expected); broken variants: "
                "first come first kept %d, the last always %d\n", os, first, last);
    EXPECT_GE(os, 6);
    EXPECT_LE(os, 42);
    EXPECT_LT(first, 6) << "a biased sample is caught";
    EXPECT_GT(last, 42) << "a biased sample is caught";
}

TEST(ChallengeSample, DrawsAreUniformAndBoundsAreChecked) {
    EXPECT_THROW(os_random_below(0), std::invalid_argument);
    std::array<int, 3> counts{};
    for (int i = 0; i < 3000; ++i) ++counts[size_t(os_random_below(3))];
    for (int c : counts) {
        EXPECT_GT(c, 850);   // 1,000 expected, sd 26
        EXPECT_LT(c, 1150);
    }
}

TEST(HandshakeAttack, AChallengeWhoseNamedAddressWasChangedIsRefusedAsForged) {
    // A genuine Challenge relayed to 192.0.2.1 renamed to the client's own address, its mac kept:
    // the mac covers the address, so the client refuses it. Broken variant: the same Challenge
    // unchanged is taken, into the sample (it names another address).
    const Key key = random_key();
    const auto client_at = ep("198.51.100.7", 5000), relay = v4(0xC0000201u, 9000);
    const std::vector<uint8_t> tok = token(key, 1);
    InProcess p(keyed(key));
    ClientSession c;
    ASSERT_TRUE(c.set_connect_token(tok));
    c.set_local_addresses({observed_address(client_at)});
    c.connect(p.t);
    std::vector<std::vector<uint8_t>> out = c.take_outgoing();
    ASSERT_EQ(out.size(), 1u);
    p.server->inject(relay, out[0]);
    const std::optional<Cookie> cookie = p.cookie_for(relay);
    ASSERT_TRUE(cookie);
    const auto genuine = decode_packet(p.out.back().second);
    ASSERT_TRUE(genuine && genuine->type == MessageType::Challenge);
    const auto* g = genuine->message<wire::Challenge>();
    ChallengeMac mac{};
    std::copy(g->mac()->begin(), g->mac()->end(), mac.begin());
    ObservedAddress named{};
    std::copy(g->observed()->begin(), g->observed()->end(), named.begin());
    EXPECT_EQ(named, observed_address(relay)) << "the server names where the request came from";
    const ObservedAddress renamed = observed_address(client_at);
    c.on_datagram(build_challenge({0, 0, 0}, g->client_salt(), *cookie, &mac, &renamed), p.t);
    EXPECT_EQ(c.stats().challenges_forged, 1u);
    EXPECT_EQ(c.stats().challenges_own, 0u);
    c.on_datagram(p.out.back().second, p.t);
    EXPECT_EQ(c.stats().challenges, 1u) << "the unchanged one checks";
    EXPECT_EQ(c.stats().challenges_own, 0u) << "and names another address";
}

TEST(HandshakeAttack, CopiesOfTheRequestFromTheClientsOwnAddressGetNoMoreAnswersThanARoundsShare) {
    // A spoofer sends 50 copies of the client's request from the client's own address: the server's
    // 50 Challenges all name it, and any one gets in, so a round answers at most 8 of them. With a
    // share of 50 (the broken variant: no cap), all 50 are answered.
    const Key key = random_key();
    const auto client_at = ep("198.51.100.7", 5000);
    auto responses = [&](int per_round) {
        InProcess p(keyed(key));
        ClientSessionConfig cc;
        cc.challenges_per_round = per_round;
        ClientSession c(cc);
        EXPECT_TRUE(c.set_connect_token(token(key, 1)));
        c.set_local_addresses({observed_address(client_at)});
        c.connect(p.t);
        const std::vector<std::vector<uint8_t>> request = c.take_outgoing();
        for (int i = 0; i < 50; ++i) p.server->inject(client_at, request.at(0));
        for (const auto& [to, d] : p.out) c.on_datagram(d, p.t);
        return std::make_pair(c.stats().challenge_responses, c.stats().challenges_own);
    };
    const auto [capped, own] = responses(8);
    const auto [uncapped, own_uncapped] = responses(50);
    EXPECT_EQ(own, 8u);
    EXPECT_EQ(capped, 8u);
    EXPECT_EQ(uncapped, 50u) << "the test sees answers beyond the share";
    (void)own_uncapped;
}
