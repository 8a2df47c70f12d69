// libFuzzer target for the server's whole datagram handling (built with -DKS_FUZZ=ON and clang):
//   ./kinesync-fuzz-server -max_total_time=20
// Each input is a script for a fresh net::Server (in-process transport, no socket) streaming two
// characters: a mode byte, then records of [u8 op][u16 length][bytes]. op & 0x80: a real handshake from peer
// (op & 3) (ConnectRequest, the server's Challenge echoed back), so later records reach a live
// session; otherwise the bytes are a datagram from peer (op & 3), and every fourth record the
// server publishes a tick (snapshots, resends, timeouts). Any crash, sanitizer report or exception
// escaping the server is a finding; so is a reply to an unauthenticated peer larger than what it sent.
// When the input's first byte is odd the server requires connect tokens: handshakes present a fresh
// token (the Challenge's sealed cookie opened with its key), and records with op & 0x40 from a peer
// with a session are sealed with that session's key, so fuzzed bytes also reach the decoder and
// the session state machine through the authenticated path.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <spdlog/spdlog.h>
#include <vector>

#include "common/src/codec/precision.h"
#include "common/src/net/connect_token.h"
#include "server/src/net/server.h"

namespace {

using namespace ks;

struct Peer {
    asio::ip::udp::endpoint ep;
    uint64_t salt;
    std::optional<net::PacketSealer> sealer;  // token mode, after a handshake
};

const net::Key kKey = [] {
    net::Key k;
    k.fill(0x42);
    return k;
}();

ks::Skeleton arm() {
    ks::Skeleton s;
    s.names = {"root", "a", "b"};
    s.parents = {-1, 0, 1};
    s.offsets = {{0, 0, 0}, {0, 1, 0}, {0, 1, 0}};
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server"));  // silent
    net::Roster roster;
    roster.skeletons[0] = {"arm", arm(), 0.01f, plan_precision(arm(), 0.01f)};
    roster.characters[0] = {0, "a"};
    roster.characters[1] = {0, "b"};
    std::vector<std::pair<asio::ip::udp::endpoint, std::vector<uint8_t>>> out;
    const bool tokens = size > 0 && (data[0] & 1);
    net::ServerConfig sc;
    sc.secret_seed = 1;
    if (tokens) {
        sc.private_key = kKey;
        sc.public_address = "10.0.0.2:40000";
    }
    sc.worker_threads = 0;
    sc.transport = [&out](const asio::ip::udp::endpoint& to, std::span<const uint8_t> b) { out.push_back({to, {b.begin(), b.end()}}); };
    asio::io_context io;
    net::Server server(io, sc, roster);
    Peer peers[4];
    for (int i = 0; i < 4; ++i) peers[i] = {{asio::ip::make_address("10.0.0.1"), uint16_t(5000 + i)}, uint64_t(i + 1), {}};
    Pose pose(3);
    uint32_t tick = 0;
    size_t pos = 1, records = 0;  // data[0]: the mode
    while (pos + 3 <= size) {
        const uint8_t op = data[pos];
        const size_t len = std::min<size_t>(size - pos - 3, size_t(data[pos + 1]) | size_t(data[pos + 2]) << 8);
        const std::span<const uint8_t> bytes(data + pos + 3, len);
        pos += 3 + len;
        Peer& p = peers[op & 3];
        out.clear();
        if (op & 0x80) {
            std::optional<net::ConnectToken> token;
            net::TokenField tf;
            if (tokens) {
                token = net::parse_connect_token(net::issue_connect_token(kKey, {op, {"10.0.0.2:40000"}, 60, {}}, net::unix_now_s()));
                tf = {token->expire_s, token->private_token};
            }
            server.inject(p.ep, net::build_connect_request({0, 0, 0}, p.salt, token ? &tf : nullptr));
            for (const auto& [to, d] : out) {
                const auto c = net::decode_packet(d);
                if (!c || c->type != net::MessageType::Challenge) continue;
                net::Cookie cookie{};
                const auto* m = c->message<net::wire::Challenge>();
                std::copy(m->cookie()->begin(), m->cookie()->end(), cookie.begin());
                // Peers 2 and 3 offer the arm's skeleton (the server then sends it by reference).
                std::vector<net::SkeletonHash> known;
                if (op & 2) known.push_back(net::skeleton_hash(arm(), 0.01f));
                net::HandshakeProof proof{};
                if (token) {
                    proof = net::handshake_proof(token->client_to_server, cookie, p.salt,
                                                 {known.empty() ? nullptr : known[0].data(), known.size() * net::kSkeletonHashBytes});
                    p.sealer.emplace(token->client_to_server);
                }
                out.clear();
                server.inject(p.ep, net::build_challenge_response({1, 0, 0}, p.salt, cookie, token ? &proof : nullptr, known));
                break;
            }
        } else if ((op & 0x40) && p.sealer && bytes.size() + net::kMaxSealOverhead <= net::kMaxDatagram) {
            server.inject(p.ep, p.sealer->seal(bytes));
        } else {
            server.inject(p.ep, bytes);
            // Nothing an unauthenticated peer sends may get it more bytes back than it sent.
            bool has_session = false;
            for (const auto& c : server.clients()) has_session = has_session || c.endpoint == p.ep.address().to_string() + ":" + std::to_string(p.ep.port());
            if (!has_session)
                for (const auto& [to, d] : out)
                    if (d.size() > bytes.size()) std::abort();
        }
        if (++records % 4 == 0) {
            pose.pos[0] = {float(tick), 0, 0};
            net::TickFrame f;
            f.tick = ++tick;
            f.characters = {{0, 0, &pose}, {1, 0, &pose}};
            server.publish(f);
        }
    }
    return 0;
}
