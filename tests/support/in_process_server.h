#pragma once
// An in-process server for handshake and admission tests: datagrams injected from any address, as
// a spoofer would send them, replies collected, and the server's clock the test's own (its token
// buckets refill only when the test moves it). Real clients (ClientSession) talk to it through
// the same calls.
#include <deque>
#include <functional>
#include <random>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/src/net/connect_token.h"
#include "common/src/net/observed_address.h"
#include "common/src/net/secure_channel.h"
#include "tests/support/udp_harness.h"

namespace ks::test {

using namespace ks::net;

constexpr const char* kPublic = "192.0.2.1:40000";

struct InProcess {
    Roster roster;
    std::vector<std::pair<asio::ip::udp::endpoint, std::vector<uint8_t>>> out;
    asio::io_context io;
    double t = 1.0;  // the server's clock, s
    std::unique_ptr<Server> server;
    explicit InProcess(ServerConfig sc) {
        quiet_server_logger();
        Skeleton s;
        s.names = {"root", "a"};
        s.parents = {-1, 0};
        s.offsets = {{0, 0, 0}, {0, 1, 0}};
        roster.skeletons[0] = {"arm", s, 0.01f, plan_precision(s, 0.01f)};
        roster.characters[0] = {0, "a"};
        sc.worker_threads = 0;
        sc.transport = [this](const asio::ip::udp::endpoint& to, std::span<const uint8_t> b) { out.push_back({to, {b.begin(), b.end()}}); };
        sc.clock = [this] { return t; };
        server = std::make_unique<Server>(io, sc, roster);
    }
    size_t sent_to(const asio::ip::udp::endpoint& ep, MessageType type) const {
        size_t n = 0;
        for (const auto& [to, b] : out) {
            const auto p = decode_packet(b);
            n += to == ep && p && p->type == type;
        }
        return n;
    }
    // The cookie of the newest Challenge sent to `ep`.
    std::optional<Cookie> cookie_for(const asio::ip::udp::endpoint& ep) const {
        for (auto it = out.rbegin(); it != out.rend(); ++it) {
            const auto p = decode_packet(it->second);
            if (it->first != ep || !p || p->type != MessageType::Challenge) continue;
            Cookie c{};
            std::copy(p->message<wire::Challenge>()->cookie()->begin(), p->message<wire::Challenge>()->cookie()->end(), c.begin());
            return c;
        }
        return std::nullopt;
    }
    uint64_t limited(AdmissionLimit l) const { return server->stats().admission_limited[size_t(l)]; }
};

inline asio::ip::udp::endpoint ep(const std::string& addr, uint16_t port) { return {asio::ip::make_address(addr), port}; }

inline ServerConfig keyed(const Key& key) {
    ServerConfig sc;
    sc.private_key = key;
    sc.public_address = kPublic;
    return sc;
}

inline std::vector<uint8_t> token(const Key& key, uint64_t client_id, uint32_t valid_for = 60) {
    TokenRequest r;
    r.client_id = client_id;
    r.servers = {kPublic};
    r.valid_for_s = valid_for;
    return issue_connect_token(key, r, unix_now_s());
}

struct Attempt {
    double seconds = -1;  // to connect; -1: not within the limit
    ClientSessionStats stats;
};

// Sees each datagram the client sends; may answer it at once (an attacker nearer than the server).
using Injector = std::function<std::vector<std::vector<uint8_t>>(std::span<const uint8_t>)>;
// Sends a millisecond's worth of attack, calling client_turn() once, at a random place within it:
// the client's datagrams arrive among the attacker's, not always before or after them.
using Spray = std::function<void(const std::function<void()>& client_turn)>;
inline const Spray kNoSpray = [](const std::function<void()>& client_turn) { client_turn(); };

// A real client at `where` connecting with `tok` to the in-process server; `spray` runs at each
// millisecond step of the shared clock; the server's replies reach the client `delay_s` later.
// `knows_address`: the client knows `where` is its own (no NAT between it and the server).
inline Attempt attempt(InProcess& p, const asio::ip::udp::endpoint& where, const std::vector<uint8_t>& tok, const Spray& spray,
                       double limit_s, double delay_s = 0, const Injector& injector = {}, const ClientSessionConfig& cc = {},
                       bool knows_address = false) {
    ClientSession c(cc);
    if (knows_address) c.set_local_addresses({observed_address(where)});
    Attempt a;
    if (!c.set_connect_token(tok)) return a;
    std::deque<std::pair<double, std::vector<uint8_t>>> in_flight;
    const double start = p.t;
    c.connect(p.t);
    for (; p.t - start < limit_s; p.t += 0.001) {
        c.update(p.t);
        spray([&] {
            for (const auto& d : c.take_outgoing()) {
                if (injector)
                    for (const auto& forged : injector(d)) c.on_datagram(forged, p.t);
                p.server->inject(where, d);
            }
        });
        for (auto& [to, d] : p.out)
            if (to == where) in_flight.emplace_back(p.t + delay_s, std::move(d));
        p.out.clear();
        while (!in_flight.empty() && in_flight.front().first <= p.t + 1e-9) {
            c.on_datagram(in_flight.front().second, p.t);
            in_flight.pop_front();
        }
        if (c.state() == ClientSession::State::Connected) {
            a.seconds = p.t - start;
            break;
        }
    }
    a.stats = c.stats();
    return a;
}

// The seconds a client took to connect, or -1 when it did not within `limit_s`.
inline double connect_seconds(InProcess& p, const asio::ip::udp::endpoint& where, const std::vector<uint8_t>& tok,
                              const Spray& spray = kNoSpray, double limit_s = 2.0) {
    return attempt(p, where, tok, spray, limit_s).seconds;
}

// Each flood its own random stream, so repeated tries are independent.
inline uint64_t next_flood_seed() {
    static uint64_t n = 0;
    return 0x9E3779B97F4A7C15ull * ++n;
}

inline asio::ip::udp::endpoint v4(uint32_t address, uint16_t port) { return {asio::ip::address_v4(address), port}; }

// Datagrams from spoofed sources: `per_ms` a millisecond, from source(i) with i counting on.
struct Flood {
    InProcess* p;
    std::vector<std::vector<uint8_t>> datagrams;  // taken in turn
    std::function<asio::ip::udp::endpoint(uint64_t)> source;
    size_t per_ms;
    uint64_t sent = 0;
    std::mt19937_64 rng{next_flood_seed()};
    void operator()(const std::function<void()>& client_turn = {}) {
        const size_t turn = rng() % (per_ms + 1);
        for (size_t k = 0; k <= per_ms; ++k) {
            if (k == turn && client_turn) client_turn();
            if (k < per_ms) p->server->inject(source(sent), datagrams[sent % datagrams.size()]), ++sent;
        }
    }
};

// Sprays for `ms` milliseconds of the server's clock.
template <class F>
void spray_for(InProcess& p, F& spray, int ms) {
    for (int i = 0; i < ms; ++i, p.t += 0.001) {
        spray();
        p.out.clear();
    }
}

// A ConnectRequest with a valid, unused token, as captured off the wire.
inline std::vector<uint8_t> captured_request(const std::vector<uint8_t>& tok) {
    const std::optional<ConnectToken> t = parse_connect_token(tok);
    const TokenField tf{t->expire_s, t->private_token};
    return build_connect_request({0, 0, 0}, 0x5EED, &tf);
}

}  // namespace ks::test
