// Server's handshake path: security setup, ConnectRequest -> Challenge (stateless cookie, token
// checks) -> ChallengeResponse -> Accept, session refusals and admission limits.
#include "server/src/net/server.h"
#include "server/src/net/server_session.h"

#include <kinesync/common/errors.h>
#include <kinesync/common/net/disconnect_code.h>
#include "common/src/net/observed_address.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <spdlog/spdlog.h>

namespace ks::net {

namespace {

constexpr uint8_t kDcServerFull = uint8_t(DisconnectCode::ServerFull);
constexpr uint8_t kDcTooManyFromAddress = uint8_t(DisconnectCode::TooManyFromAddress);
constexpr uint8_t kDcSessionInUse = uint8_t(DisconnectCode::SessionInUse);

}  // namespace

void Server::resolve_security() {
    asio::error_code ec;
    const asio::ip::address bind = asio::ip::make_address(cfg_.bind, ec);
    const bool loopback = !ec && bind.is_loopback();
    if (!cfg_.private_key) {
        if (!cfg_.insecure_dev && !loopback && !cfg_.transport)
            throw Error(Errc::InvalidConfig, "refusing to serve " + cfg_.bind + " without authentication: give the servers' private key " +
                                     "(connect tokens; kinesync-server --key-file) or ask for the unauthenticated dev mode explicitly, " +
                                     "twice (insecure_dev and insecure_dev_public; --insecure-dev --insecure-dev-public)");
        return;
    }
    secure_ = true;
    ensure_crypto();
    if (!cfg_.public_address.empty()) {
        public_address_ = canonical_address(cfg_.public_address);
        if (public_address_.empty())
            throw Error(Errc::InvalidConfig, "public address \"" + cfg_.public_address + "\" is not a numeric address:port", "config.public_address");
    } else {
        if (ec || bind.is_unspecified())
            throw Error(Errc::InvalidConfig, "connect tokens name the server's address: binding " + cfg_.bind +
                                     ", give the public address:port clients reach (public_address; --public-address)");
        public_address_ = canonical_address((bind.is_v6() ? "[" + cfg_.bind + "]" : cfg_.bind) + ":" + std::to_string(port_ ? port_ : cfg_.port));
    }
}

bool Server::admitted(std::optional<AdmissionLimit> limit) {
    if (!limit) return true;
    ++stats_.admission_limited[size_t(*limit)];
    return false;
}

void Server::prune_admission() {
    const double t = now_s();
    if (t - last_prune_s_ < 1.0) return;
    last_prune_s_ = t;
    admission_.forget_expired_tokens(unix_now_s());
}

const char* Server::precheck_token(uint64_t expire_s, const flatbuffers::Vector<uint8_t>* sealed, DisconnectCode& code) const {
    const uint64_t now = unix_now_s();
    if (!sealed) return code = DisconnectCode::TokenRequired, "connect token required";
    if (expire_s <= now) return code = DisconnectCode::TokenExpired, "connect token expired";
    // Used tokens are remembered until they expire: one that lives longer could be replayed after
    // the table forgot it, and the table is sized for this lifetime.
    if (expire_s - now > admission_.max_token_lifetime_s()) return code = DisconnectCode::TokenInvalid, "connect token lives too long";
    return nullptr;
}

std::optional<PrivateToken> Server::open_token(uint64_t expire_s, const flatbuffers::Vector<uint8_t>& sealed, const char*& why,
                                               DisconnectCode& code) {
    ++stats_.tokens_opened;
    std::optional<PrivateToken> t = open_private_token(*cfg_.private_key, expire_s, {sealed.data(), sealed.size()});
    if (!t) {
        why = "connect token invalid";
        code = DisconnectCode::TokenInvalid;
        return std::nullopt;
    }
    if (std::find(t->servers.begin(), t->servers.end(), public_address_) == t->servers.end()) {
        why = "connect token for another server";
        code = DisconnectCode::TokenWrongServer;
        return std::nullopt;
    }
    return t;
}

void Server::refuse_request(const asio::ip::udp::endpoint& from, const char* why, DisconnectCode code) {
    ++stats_.tokens_refused;
    spdlog::get("server")->debug("handshake from {} refused: {}", endpoint_text(from), why);
    send_raw(from, build_disconnect({0, 0, 0}, why, uint8_t(code)));
}

void Server::on_connect_request(const asio::ip::udp::endpoint& from, const DecodedPacket& p) {
    // Stateless: nothing is kept, the reply is never larger than the (full-size) request, and it
    // was admitted from the budget everyone shares. With tokens the token is opened here, once:
    // the cookie carries what the handshake needs of it, and the Challenge's mac (under the
    // token's server-to-client key) shows the client that it comes from a server that could.
    const auto* m = p.message<wire::ConnectRequest>();
    CookieContents c;
    c.window = uint64_t(now_s() / kCookieWindowS);
    std::optional<ChallengeMac> mac;
    if (secure_) {
        DisconnectCode code = DisconnectCode::Unspecified;
        if (const char* why = precheck_token(m->token_expire_s(), m->token(), code)) return refuse_request(from, why, code);
        TokenTag tag{};
        std::copy(m->token()->end() - std::ptrdiff_t(kSealTagBytes), m->token()->end(), tag.begin());
        if (admission_.token_use(tag) == Admission::TokenUse::Used)  // known without opening it
            return refuse_request(from, "connect token already used", DisconnectCode::TokenUsed);
        const char* why = "";
        const std::optional<PrivateToken> t = open_token(m->token_expire_s(), *m->token(), why, code);
        if (!t) return refuse_request(from, why, code);
        c.token_expire_s = m->token_expire_s();
        c.client_id = t->client_id;
        c.token_tag = t->mac;
        c.client_to_server = t->client_to_server;
        c.server_to_client = t->server_to_client;
    }
    const uint64_t salt = m->client_salt();
    const Cookie cookie = cookies_.seal(c, from, salt);
    const ObservedAddress observed = observed_address(from);
    if (secure_) mac = challenge_mac(c.server_to_client, salt, cookie, observed);
    send_raw(from, build_challenge({0, 0, 0}, salt, cookie, mac ? &*mac : nullptr, &observed));
}

void Server::send_accept(Session& s) {
    s.last_accept_s = now_s();
    const AcceptInfo info{s.id, uint16_t(std::lround(cfg_.tick_hz)), uint16_t(std::lround(cfg_.snapshot_hz)), tick_, server_time_us()};
    send(s, [info](const PacketHeader& h) { return build_accept(h, info); }, 0);
}

bool Server::refuse_session(const asio::ip::udp::endpoint& from, const std::optional<PrivateToken>& token) {
    const auto log = spdlog::get("server");
    // A token opens one session, once: replaying its handshake later (even from the same address
    // and port, after that session ended) is refused until it expires.
    if (token) {
        Admission::TokenUse use = admission_.token_use(token->mac);
        if (use == Admission::TokenUse::TableFull) {
            admission_.forget_expired_tokens(unix_now_s());
            use = admission_.token_use(token->mac);
        }
        if (use == Admission::TokenUse::Used) {
            ++stats_.tokens_refused;
            send_raw(from, build_disconnect({0, 0, 0}, "connect token already used", uint8_t(DisconnectCode::TokenUsed)));
            return true;
        }
        if (use == Admission::TokenUse::TableFull) {
            ++stats_.used_tokens_full;
            if (!token_table_full_logged_)
                log->error("the table of used connect tokens is full ({} tokens, sized from admission.session_open_rate and "
                           "max_token_lifetime_s): good tokens are refused until some expire (has the wall clock stepped back?)",
                           admission_.token_capacity());
            token_table_full_logged_ = true;
            send_raw(from, build_disconnect({0, 0, 0}, "server busy: retry", uint8_t(DisconnectCode::ServerFull)));
            return true;
        }
    }
    // A live session is never replaced by a handshake: whoever can send from its address (or
    // holds another token for its player) could otherwise evict it. A client that restarted gets
    // in once its old session times out (timeout_s of silence).
    const bool same_player = token && std::any_of(sessions_.begin(), sessions_.end(), [&](const auto& e) {
        return e.second->sealer && e.second->user_id == token->client_id;
    });
    if (sessions_.count(endpoint_text(from)) || same_player) {
        ++stats_.sessions_in_use;
        send_raw(from, build_disconnect({0, 0, 0}, "a session from this address or for this player is live: retry once it ends",
                                        kDcSessionInUse));
        return true;
    }
    if (int(sessions_.size()) >= cfg_.max_clients) {
        ++stats_.refused;
        send_raw(from, build_disconnect({0, 0, 0}, "server full", kDcServerFull));
        return true;
    }
    // One address (or network) may not take every slot from many ports (or addresses).
    const int per_address = cfg_.max_sessions_per_address >= 0 ? cfg_.max_sessions_per_address
                            : from.address().is_loopback() && !cfg_.limit_loopback ? cfg_.max_clients
                                                                                   : std::max(4, cfg_.max_clients / 4);
    int same = 0, near = 0;
    for (const auto& [k, other] : sessions_) {
        same += other->ep.address() == from.address();
        near += same_prefix(other->ep.address(), from.address());
    }
    if (same >= per_address || near >= admission_.sessions_per_prefix(from.address())) {
        ++stats_.refused;
        send_raw(from, build_disconnect({0, 0, 0}, same >= per_address ? "too many from your address" : "too many from your network",
                                        kDcTooManyFromAddress));
        return true;
    }
    return false;
}

std::optional<PrivateToken> Server::check_token_handshake(const asio::ip::udp::endpoint& from,
                                                          const CookieContents& c, const Cookie& cookie,
                                                          const wire::ChallengeResponse& r) {
    // Only the token's holder knows its client-to-server key: a cookie (or token) copied off the
    // wire opens nothing. A wrong proof is dropped in silence (the cookie's owner saw the reasons a
    // ConnectRequest gets); past it, a token's handshakes have their own budget, before anything
    // replies or counts sessions, so a holder whose session is refused spends only its own.
    const auto* known = r.known_skeletons();
    const std::span<const uint8_t> known_bytes = known ? std::span<const uint8_t>(known->data(), known->size()) : std::span<const uint8_t>();
    if (!r.proof() ||
        !check_handshake_proof(c.client_to_server, cookie, r.client_salt(), {r.proof()->data(), r.proof()->size()}, known_bytes)) {
        ++stats_.tokens_refused;
        return std::nullopt;
    }
    if (!admitted(admission_.token_handshake(c.token_tag, now_s()))) return std::nullopt;
    const bool expired = c.token_expire_s <= unix_now_s();
    if (expired || admission_.token_use(c.token_tag) == Admission::TokenUse::Used) {
        refuse_request(from, expired ? "connect token expired" : "connect token already used",
                       expired ? DisconnectCode::TokenExpired : DisconnectCode::TokenUsed);
        return std::nullopt;
    }
    PrivateToken t;
    t.client_id = c.client_id;
    t.client_to_server = c.client_to_server;
    t.server_to_client = c.server_to_client;
    t.mac = c.token_tag;
    return t;
}

void Server::on_challenge_response(const asio::ip::udp::endpoint& from, const std::string& key, const DecodedPacket& p) {
    const auto* r = p.message<wire::ChallengeResponse>();
    Cookie cookie{};
    std::copy(r->cookie()->begin(), r->cookie()->end(), cookie.begin());
    // The cookie first: it proves the sender receives at its address, and opening it costs about
    // what a hash does (no token is opened at this stage).
    const std::optional<CookieContents> c = cookies_.open(cookie, from, r->client_salt(), uint64_t(now_s() / kCookieWindowS));
    if (!c) {
        ++stats_.refused;
        return;
    }
    const auto it = sessions_.find(key);
    if (it != sessions_.end() && it->second->salt == r->client_salt()) {
        // A duplicate of the response we accepted: our Accept was lost (answered at most every
        // 100 ms), unless the session has spoken since (then it is a replay, and a live session
        // changes only through its own packets).
        Session& s = *it->second;
        if (s.heard_since_accept) ++stats_.unexpected;
        else if (now_s() - s.last_accept_s >= 0.1) send_accept(s);
        return;
    }
    std::optional<PrivateToken> token;
    if (secure_) {
        token = check_token_handshake(from, *c, cookie, *r);
        if (!token) return;
    } else if (!admitted(admission_.handshake(from.address(), now_s()))) {
        return;
    }
    if (refuse_session(from, token)) return;
    // With tokens the per-address and per-prefix limits come after the checks that hold a token's
    // holder to its own budget, so only a fresh token can spend them, once.
    if (secure_ && !admitted(admission_.handshake(from.address(), now_s()))) return;
    if (!admitted(admission_.open_session(now_s()))) return;
    auto s = std::make_unique<Session>();
    s->ep = from;
    s->key = key;
    s->id = next_client_id_++;
    s->salt = r->client_salt();
    s->last_heard = now_s();
    s->bytes_window_start = now_s();
    s->reliable_allowance = reliable_burst_bytes();
    s->allowance_last = now_s();
    if (const auto* known = r->known_skeletons())  // whole hashes, at most kMaxKnownSkeletons (decode_packet)
        for (size_t i = 0; i + kSkeletonHashBytes <= known->size(); i += kSkeletonHashBytes) {
            SkeletonHash h{};
            std::copy_n(known->data() + i, kSkeletonHashBytes, h.begin());
            s->client_skeletons.push_back(h);
        }
    if (token) {
        s->sealer.emplace(token->server_to_client);
        s->opener.emplace(token->client_to_server);
        s->user_id = token->client_id;
        admission_.remember_token(token->mac, c->token_expire_s);
    }
    BuilderConfig bc;
    bc.tick_hz = cfg_.tick_hz;
    bc.snapshot_hz = cfg_.snapshot_hz;
    bc.bandwidth_bps = cfg_.bandwidth_bps;
    bc.max_payload_bytes = std::min<size_t>(1100, max_snapshot_data_bytes());
    bc.datagram_overhead_bytes = kSnapshotHeaderBytes + (token ? kMaxSealOverhead : 0) + kIpUdpHeaderBytes;
    s->builder = SnapshotBuilder(bc);
    s->rate = RateControl(session_rate_config(cfg_.bandwidth_bps, cfg_.min_bandwidth_bps, cfg_.follow_path));
    s->received.on_received(p.sequence);
    Session& sr = *s;
    sessions_[key] = std::move(s);
    ++stats_.connects;
    send_accept(sr);
    // Every skeleton and character there is now, reliably (possibly several messages).
    std::vector<uint16_t> skeletons, characters;
    for (const auto& [id, sk] : roster_.skeletons) skeletons.push_back(id);
    for (const auto& [id, c] : roster_.characters) characters.push_back(id);
    queue_definitions(sr, skeletons, characters);
    send_reliable(sr, true);
    spdlog::get("server")->info("client {} connected from {}{} ({} of {})", sr.id, key,
                                token ? " with token of player " + std::to_string(sr.user_id) : std::string(), sessions_.size(),
                                cfg_.max_clients);
}

}  // namespace ks::net
