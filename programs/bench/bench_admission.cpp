// kinesync-bench: what a handshake flood costs the server per datagram, which sizes the budget of
// answered ConnectRequests (AdmissionConfig::challenge_rate). A ConnectRequest with a valid token,
// captured and sprayed from ever new spoofed addresses (the token opened, a cookie sealed, a
// Challenge authenticated); one whose token does not open (refused); one over the budget (dropped
// after decoding); ChallengeResponses with forged cookies (refused after one failed AEAD check);
// beside them, for scale, the cost of opening one token.
#include <benchmark/benchmark.h>

#include <algorithm>

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
    explicit Bench(double challenge_rate = 1e12) {
        if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server", std::make_shared<spdlog::sinks::null_sink_mt>()));
        ServerConfig sc;
        sc.private_key = key;
        sc.public_address = kPublic;
        sc.worker_threads = 0;
        sc.admission.challenge_rate = challenge_rate;  // by default, time the work, not the limits
        sc.admission.challenge_burst = std::max(1.0, challenge_rate);
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

std::vector<uint8_t> request(const ConnectToken& t) {
    const TokenField tf{t.expire_s, t.private_token};
    return build_connect_request({0, 0, 0}, 7, &tf);
}

void BM_AnsweredConnectRequest(benchmark::State& state) {
    Bench b;
    const std::vector<uint8_t> req = request(*b.token());
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), req);
    if (b.server->stats().tokens_opened != i || b.replies != i) state.SkipWithError("a request went unanswered");
}

void BM_RefusedConnectRequest(benchmark::State& state) {
    Bench b, other;
    const std::vector<uint8_t> req = request(*other.token());  // sealed under another key
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), req);
    if (b.server->stats().tokens_refused != i) state.SkipWithError("a token of another key was not refused");
}

void BM_ConnectRequestOverBudget(benchmark::State& state) {
    Bench b(1e-6);  // one request answered, then none
    const std::vector<uint8_t> req = request(*b.token());
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), req);
    if (b.server->stats().tokens_opened > 1) state.SkipWithError("requests over the budget opened tokens");
}

void BM_ForgedChallengeResponse(benchmark::State& state) {
    Bench b;
    const HandshakeProof proof{};
    const std::vector<uint8_t> resp = build_challenge_response({0, 0, 0}, 7, Cookie{}, &proof);
    uint64_t i = 0;
    for (auto _ : state) b.server->inject(spoofed(i++), resp);
    if (b.server->stats().refused != i) state.SkipWithError("a forged cookie was not refused");
}

void BM_OpenToken(benchmark::State& state) {
    Bench b;
    const auto t = b.token();
    for (auto _ : state) benchmark::DoNotOptimize(open_private_token(b.key, t->expire_s, t->private_token));
}

}  // namespace

BENCHMARK(BM_AnsweredConnectRequest);
BENCHMARK(BM_RefusedConnectRequest);
BENCHMARK(BM_ConnectRequestOverBudget);
BENCHMARK(BM_ForgedChallengeResponse);
BENCHMARK(BM_OpenToken);
