// kinesync-bench: what a handshake flood costs the server per datagram. A ConnectRequest carrying
// a valid token, captured and sprayed from ever new spoofed addresses (answered with a cookie, the
// token never opened), and ChallengeResponses with forged cookies (refused after one hash); beside
// them, for scale, the cost of opening one token.
#include <benchmark/benchmark.h>

#include <asio.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/src/net/connect_token.h"
#include "server/src/net/server.h"

using namespace ks;
using namespace ks::net;

namespace {

constexpr const char* kPublic = "192.0.2.1:40000";

struct Bench {
    Key key = random_key();
    Roster roster;
    asio::io_context io;
    size_t replies = 0;
    std::unique_ptr<Server> server;  // last: its destructor still calls the transport, which counts replies
    Bench() {
        if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server", std::make_shared<spdlog::sinks::null_sink_mt>()));
        ServerConfig sc;
        sc.private_key = key;
        sc.public_address = kPublic;
        sc.worker_threads = 0;
        sc.admission.challenge_rate = sc.admission.challenge_burst = 1e12;  // time the work, not the limits
        sc.admission.prefix_challenge_rate = sc.admission.prefix_challenge_burst = 1e12;
        sc.transport = [this](const asio::ip::udp::endpoint&, std::span<const uint8_t>) { ++replies; };
        server = std::make_unique<Server>(io, sc, roster);
    }
    std::optional<ConnectToken> token() const {
        TokenRequest r;
        r.client_id = 1;
        r.servers = {kPublic};
        return parse_connect_token(issue_connect_token(key, r, unix_now_s()));
    }
};

asio::ip::udp::endpoint spoofed(uint64_t i) { return {asio::ip::address_v4(uint32_t(0x0A000000u + (i & 0xFFFFFF))), uint16_t(1024 + i % 60000)}; }

void BM_SprayedConnectRequest(benchmark::State& state) {
    Bench b;
    const auto t = b.token();
    const TokenField tf{t->expire_s, t->private_token};
    const std::vector<uint8_t> req = build_connect_request({0, 0, 0}, 7, &tf);
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), req);
    if (b.server->stats().tokens_opened != 0 || b.replies != i) state.SkipWithError("a spoofed request opened a token or went unanswered");
    state.counters["tokens_opened"] = double(b.server->stats().tokens_opened);
}

void BM_ForgedChallengeResponse(benchmark::State& state) {
    Bench b;
    const auto t = b.token();
    const TokenField tf{t->expire_s, t->private_token};
    const HandshakeProof proof{};
    const std::vector<uint8_t> resp = build_challenge_response({0, 0, 0}, 7, Cookie{}, &tf, &proof);
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), resp);
    if (b.server->stats().tokens_opened != 0) state.SkipWithError("a forged cookie opened a token");
}

void BM_OpenToken(benchmark::State& state) {
    Bench b;
    const auto t = b.token();
    for (auto _ : state) benchmark::DoNotOptimize(open_private_token(b.key, t->expire_s, t->private_token));
}

}  // namespace

BENCHMARK(BM_SprayedConnectRequest);
BENCHMARK(BM_ForgedChallengeResponse);
BENCHMARK(BM_OpenToken);
