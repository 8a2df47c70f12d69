#include "server/src/net/server.h"

#include <kinesync/common/errors.h>
#include <kinesync/common/net/disconnect_code.h>
#include "common/src/net/observed_address.h"
#include "common/src/net/round_trip.h"
#include "common/src/platform/udp.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <stdexcept>
#include <spdlog/spdlog.h>

namespace ks::net {

static_assert(kUnsentReasons == size_t(Unsent::kCount), "ServerStats::unsent_by_reason has one entry per Unsent");

const char* unsent_reason_name(size_t reason) { return reason < kUnsentReasons ? unsent_name(Unsent(reason)) : "?"; }

namespace {

static_assert(kDecodeErrorKinds == size_t(DecodeError::Count), "ServerStats::malformed_by_reason has one entry per DecodeError");

constexpr uint8_t kDcServerShutdown = uint8_t(DisconnectCode::ServerShutdown);
constexpr uint8_t kDcVersionMismatch = uint8_t(DisconnectCode::VersionMismatch);
constexpr uint8_t kDcServerFull = uint8_t(DisconnectCode::ServerFull);
constexpr uint8_t kDcTooManyFromAddress = uint8_t(DisconnectCode::TooManyFromAddress);
constexpr uint8_t kDcNotAcknowledging = uint8_t(DisconnectCode::NotAcknowledging);
constexpr uint8_t kDcSessionInUse = uint8_t(DisconnectCode::SessionInUse);

constexpr uint64_t kTagSnapshot = 1ull << 60, kTagReliable = 2ull << 60, kTagMask = 0xFFFFFFFFFFFFFFull;

std::string endpoint_text(const asio::ip::udp::endpoint& ep) { return ep.address().to_string() + ":" + std::to_string(ep.port()); }

}  // namespace

struct Server::Session {
    asio::ip::udp::endpoint ep;
    std::string key;
    uint32_t id = 0;
    uint64_t salt = 0;
    AckTracker received;
    SentPacketLog sent;
    uint16_t next_sequence = 0;
    SnapshotBuilder builder;
    struct SnapshotMeta {
        uint32_t tick = 0;
        double sent_s = 0;
        std::vector<UnitKey> units;
    };
    std::array<SnapshotMeta, SentPacketLog::kWindow> snapshot_meta;
    struct Reliable {
        uint32_t message_id;
        std::function<std::vector<uint8_t>(const PacketHeader&)> build;
        double last_sent = -1e9, first_sent = -1;
        int sends = 0;
        bool acked = false;
        std::vector<uint16_t> defines;  // characters this message defines
        size_t bytes = 0;               // datagram size (before sealing)
        std::vector<uint16_t> skeletons;  // skeletons (or pieces of them) this message carries
    };
    std::vector<Reliable> reliable;
    std::vector<SkeletonHash> client_skeletons;  // skeletons the client holds (its handshake said)
    // A character's snapshots go out once its definition and every piece of its skeleton were sent
    // (known), right behind them: waiting for their acknowledgement cost a joining client a round
    // trip. They become baselines only once the client acknowledged the definition (confirmed),
    // and only those sent after the latest sending of the definition and its skeletons (the value):
    // the client had those before them, whichever sending it received.
    std::set<uint16_t> known;
    std::map<uint16_t, double> confirmed;
    std::map<uint16_t, double> def_sent_s, skeleton_sent_s;  // acknowledged: their latest sending
    std::set<uint16_t> defined;  // characters acknowledged, waiting for the rest of their skeleton
    std::map<uint16_t, uint16_t> skeleton_base;  // a skeleton sent coded against another: that one
    std::optional<vec3> viewpoint;  // where the client watches from (metres), once it said
    double last_heard = 0;
    bool heard_since_accept = false;  // a packet of the session arrived: the client has our Accept
    double last_accept_s = -1e9;
    double rtt_ms = 0;
    uint64_t bytes_sent = 0, snapshots_sent = 0;
    double bytes_window_start = 0;
    uint64_t bytes_window = 0;
    double bytes_per_s = 0;
    std::optional<PacketSealer> sealer;  // connect tokens: our packets, sealed
    std::optional<PacketOpener> opener;  // and the client's, opened and checked for replays
    uint64_t user_id = 0;                // the token's client id (the backend's player id)
    RateBucket rx;                       // incoming datagram rate
    double reliable_allowance = 0, allowance_last = 0;  // bytes reliable messages may still send now
    std::array<uint64_t, kUnsentReasons> unsent_counted{};  // the builder's counts already in ServerStats
    std::array<uint64_t, 3> needless_counted{};  // the builder's at-rest, held and late counts already in ServerStats
};

namespace {
// Ticks from one snapshot to the next (the snapshots go out on the ticks that are multiples of it).
uint32_t snapshot_every(float tick_hz, float snapshot_hz) { return uint32_t(std::max(1L, std::lround(tick_hz / snapshot_hz))); }
// The history keeps only the snapshots' ticks (a slot each), when they are that close together.
uint32_t history_stride(const ServerConfig& cfg) {
    const uint32_t every = snapshot_every(cfg.tick_hz, cfg.snapshot_hz);
    return every <= kHistoryTicks ? every : 1;
}
}  // namespace

Server::Server(asio::io_context& io, const ServerConfig& cfg, const Roster& roster)
    : cfg_(cfg), roster_(roster), socket_(io), cookies_(cfg.secret_seed),
      admission_(cfg.admission, cfg.max_clients, cfg.limit_loopback),
      history_(kHistoryTicks, history_stride(cfg)) {
    if (cfg_.worker_threads != 0) pool_ = std::make_unique<WorkerPool>(cfg_.worker_threads);
    start_ = std::chrono::steady_clock::now();
    if (cfg_.transport) {  // in-process: no socket
        resolve_security();
        return;
    }
    asio::error_code ec;
    const asio::ip::address address = asio::ip::make_address(cfg_.bind, ec);
    const std::string where = "UDP " + cfg_.bind + ":" + std::to_string(cfg_.port);
    if (ec) throw Error(Errc::Network, "cannot listen on " + where + ": bad address (" + ec.message() + ")", "config.bind");
    const asio::ip::udp::endpoint ep(address, cfg_.port);
    // No reuse_address: a second server on a busy port must fail, not share it silently.
    socket_.open(ep.protocol(), ec);
    if (!ec) socket_.bind(ep, ec);
    if (!ec) socket_.non_blocking(true, ec);
    if (ec) {
        asio::error_code ignored;
        socket_.close(ignored);
        throw Error(Errc::Network, "cannot listen on " + where + ": " + ec.message(), "config.port");
    }
    port_ = socket_.local_endpoint().port();
    resolve_security();
    if (!enable_receive_timestamps(socket_.native_handle()))  // then arrivals are when they are read
        if (const auto log = spdlog::get("server")) log->warn("UDP receive timestamps unavailable: round trips include read delays");
    if (cfg_.receive_buffer_bytes) {
        // Not fatal: the kernel's default buffer still works, it just drops more in a burst.
        const auto log = spdlog::get("server");
        asio::socket_base::receive_buffer_size got;
        socket_.set_option(asio::socket_base::receive_buffer_size(int(std::min(cfg_.receive_buffer_bytes, size_t(1) << 30))), ec);
        if (!ec) socket_.get_option(got, ec);
        if (!ec) receive_buffer_bytes_ = size_t(got.value());  // on Linux asio halves what the kernel reports (its bookkeeping)
        if (log && ec)
            log->warn("UDP receive buffer of {} KiB not set: {}", cfg_.receive_buffer_bytes / 1024, ec.message());
        else if (log && receive_buffer_bytes_ < cfg_.receive_buffer_bytes)
            log->warn("UDP receive buffer: asked {} KiB, the kernel granted {} KiB (capped by net.core.rmem_max; raise it with "
                      "sysctl -w net.core.rmem_max={})", cfg_.receive_buffer_bytes / 1024, receive_buffer_bytes_ / 1024,
                      cfg_.receive_buffer_bytes);
        else if (log)
            log->info("UDP receive buffer: {} KiB", receive_buffer_bytes_ / 1024);
    }
}

Server::~Server() { stop(); }

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

double Server::now_s() const {
    return cfg_.clock ? cfg_.clock() : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

uint64_t Server::server_time_us() const {
    const double tick_s = 1.0 / double(cfg_.tick_hz);
    const double since = std::clamp(now_s() - tick_wall_s_, 0.0, tick_s);
    return uint64_t(1e6 * (double(tick_) * tick_s + since));
}

void Server::start() {
    if (running_ || !socket_.is_open()) return;
    running_ = true;
    spdlog::get("server")->info("listening on {}:{} ({} Hz ticks, {} Hz snapshots, {:.0f} kbit/s per client)", cfg_.bind, port_,
                                cfg_.tick_hz, cfg_.snapshot_hz, cfg_.bandwidth_bps / 1000.0);
    receive();
}

void Server::stop() {
    for (auto& [key, s] : sessions_)
        send(*s, [](const PacketHeader& h) { return build_disconnect(h, "server shutting down", kDcServerShutdown); }, 0);
    sessions_.clear();
    running_ = false;
    asio::error_code ec;
    socket_.close(ec);
}

void Server::receive() {
    socket_.async_wait(asio::ip::udp::socket::wait_read, [this](const asio::error_code& ec) {
        if (!running_) return;
        if (!ec) read_socket();
        receive();
    });
}

void Server::read_socket() {
    // At most a burst's worth per wake, so a flood cannot keep the thread from its ticks.
    TimedDatagram d;
    for (int n = 0; n < 256 && receive_timed(socket_.native_handle(), rx_.data(), rx_.size(), d); ++n) {
        asio::ip::udp::endpoint from;
        if (d.from_len == 0 || d.from_len > from.capacity()) continue;
        std::memcpy(from.data(), &d.from, d.from_len);
        from.resize(d.from_len);
        inject(from, std::span<const uint8_t>(rx_.data(), d.size), d.age_s);
    }
}

void Server::inject(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes, double age_s) {
    rx_at_s_ = now_s() - std::clamp(age_s, 0.0, 1.0);
    ++stats_.datagrams_in;
    stats_.bytes_in += bytes.size();
    try {
        on_datagram(from, bytes);
    } catch (const std::exception& e) {
        // A datagram must never take the server down: count it, say why, go on.
        ++stats_.unexpected;
        spdlog::get("server")->warn("datagram from {} dropped: {}", endpoint_text(from), e.what());
    }
}

void Server::send_raw(const asio::ip::udp::endpoint& to, const std::vector<uint8_t>& bytes) {
    // Synchronous and non-blocking: a datagram the kernel will not take now is dropped (and
    // counted), as the network would.
    asio::error_code ec;
    if (cfg_.transport) cfg_.transport(to, bytes);
    else socket_.send_to(asio::buffer(bytes), to, 0, ec);
    if (ec) {
        ++stats_.send_failures;
        return;
    }
    ++stats_.datagrams_out;
    stats_.bytes_out += bytes.size();
}

size_t Server::send(Session& s, const std::function<std::vector<uint8_t>(const PacketHeader&)>& build, uint64_t tag) {
    const uint16_t seq = s.next_sequence++;
    std::vector<uint8_t> bytes = build(s.received.header(seq));
    if (s.sealer) bytes = s.sealer->seal(bytes);
    s.sent.on_sent(seq, tag);
    // The budget and the stats count the same wire bytes. A snapshot's were counted by the
    // builder as it filled the datagram; everything else is charged here.
    const size_t wire = bytes.size() + kIpUdpHeaderBytes;
    if ((tag & ~kTagMask) != kTagSnapshot) s.builder.charge(wire);
    s.bytes_sent += wire;
    s.bytes_window += wire;
    send_raw(s.ep, bytes);
    return bytes.size();
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

void Server::on_datagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes) {
    const std::string key = endpoint_text(from);
    auto it = sessions_.find(key);
    if (it != sessions_.end()) {
        Session& s = *it->second;
        // The session's datagram rate. With tokens it counts authenticated datagrams only, so a
        // spoofer flooding from the client's address cannot use up the client's allowance.
        auto over_rate = [&] {
            const bool ok = s.rx.take(now_s(), cfg_.session_rate, cfg_.session_burst);
            if (!ok) ++stats_.rate_limited;
            return !ok;
        };
        if (s.opener && looks_sealed(bytes)) {
            switch (s.opener->open(bytes, opened_)) {
                case PacketOpener::Result::Ok: break;
                case PacketOpener::Result::Replayed: ++stats_.replayed; return;
                default: ++stats_.forged; return;
            }
            if (over_rate()) return;
            DecodeError err = DecodeError::None;
            const std::optional<DecodedPacket> p = decode_packet(opened_, &err);
            if (!p) {
                ++stats_.malformed;
                ++stats_.malformed_by_reason[size_t(err)];
            } else if (p->type == MessageType::ConnectRequest || p->type == MessageType::ChallengeResponse) {
                ++stats_.unexpected;  // the handshake is never sealed
            } else {
                on_session_packet(s, *p);
            }
            return;
        }
        if (!s.opener && over_rate()) return;
    }
    if (secure_ && looks_sealed(bytes)) {
        ++stats_.unauthenticated;  // sealed, but for no session here (e.g. one that just ended)
        return;
    }
    DecodeError err = DecodeError::None;
    const std::optional<DecodedPacket> p = decode_packet(bytes, &err);
    if (!p) {
        ++stats_.malformed;
        ++stats_.malformed_by_reason[size_t(err)];
        // A full-size datagram of another version is a ConnectRequest we cannot read: say why, in
        // our version, in a reply much smaller than the request (no amplification).
        if (err == DecodeError::UnknownVersion && bytes.size() == kMinConnectRequestBytes && admitted(admission_.challenge(now_s())))
            send_raw(from, build_disconnect({0, 0, 0}, "version mismatch", kDcVersionMismatch));
        return;
    }
    if (p->type == MessageType::ConnectRequest) {
        // A late duplicate of the handshake is ignored; another salt from a connected address is
        // answered, and its ChallengeResponse refused while the session lives.
        if (it != sessions_.end() && it->second->salt == p->message<wire::ConnectRequest>()->client_salt()) return;
        if (admitted(admission_.challenge(now_s()))) on_connect_request(from, *p);
        return;
    }
    if (p->type == MessageType::ChallengeResponse) {
        on_challenge_response(from, key, *p);
        return;
    }
    if (secure_) {
        // Clear datagrams mean nothing once tokens are on: a spoofed Disconnect, forged acks.
        ++stats_.unauthenticated;
        return;
    }
    if (it != sessions_.end()) {
        on_session_packet(*it->second, *p);
        return;
    }
    ++stats_.unexpected;  // anything else from a peer without a session
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

void Server::queue_definitions(Session& s, std::span<const uint16_t> skeletons, std::span<const uint16_t> characters) {
    if (skeletons.empty() && characters.empty()) return;
    std::vector<SkeletonDefInput> defs;
    std::vector<SkeletonRefInput> refs;
    for (uint16_t id : skeletons) {
        const Roster::SkeletonEntry& e = roster_.skeletons.at(id);
        if (!s.client_skeletons.empty()) {
            const SkeletonHash& h = skeleton_hash_of(id);
            if (std::find(s.client_skeletons.begin(), s.client_skeletons.end(), h) != s.client_skeletons.end()) {
                refs.push_back({id, e.name, h});
                continue;
            }
        }
        defs.push_back({id, e.name, &e.skeleton, e.metres_per_unit, 0, -1});
    }
    stats_.skeletons_by_reference += refs.size();
    stats_.skeletons_in_full += defs.size();
    std::vector<CharacterInfoInput> chars;
    for (uint16_t id : characters) {
        const Roster::CharacterEntry& e = roster_.characters.at(id);
        chars.push_back({id, e.skeleton, e.name});
    }
    for (const auto& plan : plans_for(defs, chars, refs)) {
        const uint32_t mid = next_message_id_++;
        std::vector<uint16_t> defines;
        for (const CharacterInfoInput& c : plan->plan.characters) defines.push_back(c.character_id);
        // The plan's skeletons point into the roster, which keeps every skeleton; it owns its names.
        s.reliable.push_back({mid, [plan, mid](const PacketHeader& h) { return build_skeleton_defs(h, mid, plan->plan); },
                              -1e9, -1, 0, false, std::move(defines), 0, {}});
        s.reliable.back().bytes = s.reliable.back().build({}).size();
        for (const SkeletonDefInput& d : plan->plan.defs) {
            s.reliable.back().skeletons.push_back(d.skeleton_id);
            if (d.base_id >= 0) s.skeleton_base[d.skeleton_id] = uint16_t(d.base_id);
        }
        for (const SkeletonRefInput& r : plan->plan.refs) s.reliable.back().skeletons.push_back(r.skeleton_id);
    }
}

// Clients that join while the roster stands still are sent the same definitions: planned (and
// their joints coded) once, for the first of them.
const std::vector<std::shared_ptr<const Server::OwnedPlan>>& Server::plans_for(std::span<const SkeletonDefInput> defs,
                                                                                std::span<const CharacterInfoInput> chars,
                                                                                std::span<const SkeletonRefInput> refs) {
    PlanKey key;
    for (const SkeletonDefInput& d : defs) key.defs.push_back(d.skeleton_id);
    for (const SkeletonRefInput& r : refs) key.refs.push_back(r.skeleton_id);
    for (const CharacterInfoInput& c : chars) key.characters.emplace_back(c.character_id, c.skeleton_id, std::string(c.name));
    if (key == plan_key_ && !plans_.empty()) return plans_;
    plans_.clear();
    // Sealing adds up to kMaxSealOverhead bytes to every datagram.
    for (SkeletonDefsPlan& p : plan_skeleton_defs(defs, chars, secure_ ? kMaxDatagram - kMaxSealOverhead : kMaxDatagram, refs)) {
        auto owned = std::make_shared<OwnedPlan>();
        owned->plan = std::move(p);
        auto own = [&](std::string_view& v) { v = owned->names.emplace_back(v); };  // a deque keeps its elements in place
        for (SkeletonDefInput& d : owned->plan.defs) own(d.name);
        for (CharacterInfoInput& c : owned->plan.characters) own(c.name);
        for (SkeletonRefInput& r : owned->plan.refs) own(r.name);
        plans_.push_back(std::move(owned));
    }
    plan_key_ = std::move(key);
    return plans_;
}

// Skeleton ids are never reused for another skeleton, so a hash computed once holds.
const SkeletonHash& Server::skeleton_hash_of(uint16_t id) {
    auto it = skeleton_hashes_.find(id);
    if (it == skeleton_hashes_.end()) {
        const Roster::SkeletonEntry& e = roster_.skeletons.at(id);
        it = skeleton_hashes_.emplace(id, skeleton_hash(e.skeleton, e.metres_per_unit)).first;
    }
    return it->second;
}

void Server::on_session_packet(Session& s, const DecodedPacket& p) {
    s.last_heard = now_s();
    s.heard_since_accept = true;
    s.received.on_received(p.sequence);
    std::vector<SentPacketLog::Acked> acked;
    s.sent.on_ack(p.ack, p.ack_bits, acked);
    // Definitions first: a snapshot acknowledged with its character's definition is a baseline if it
    // was sent after the definition.
    for (const auto& a : acked)
        if ((a.tag & ~kTagMask) == kTagReliable) mark_acked(s, uint32_t(a.tag & kTagMask));
    if (p.type == MessageType::Ack)
        if (const auto* ids = p.message<wire::Ack>()->reliable_ids())
            for (uint32_t id : *ids) mark_acked(s, id);
    confirm_definitions(s);
    for (const auto& a : acked) {
        if ((a.tag & ~kTagMask) != kTagSnapshot) continue;
        const auto& meta = s.snapshot_meta[a.sequence % SentPacketLog::kWindow];
        // A state sent before the sending of its definition the client acknowledged may have
        // reached it before the definition did (the earlier sending lost): not a baseline.
        std::vector<UnitKey> units;
        for (UnitKey u : meta.units)
            if (const auto c = s.confirmed.find(unit_character(u)); c != s.confirmed.end() && meta.sent_s > c->second) units.push_back(u);
        s.builder.on_delivered(meta.tick, units);
    }
    switch (p.type) {
        case MessageType::Ack:
            break;  // its reliable ids are marked above
        case MessageType::Ping: {
            const auto* m = p.message<wire::Ping>();
            const uint64_t ct = m->client_time_us();
            const uint32_t pid = m->ping_id();
            const uint64_t st = server_time_us();
            const uint32_t tick = tick_;
            on_ping_echo(s, m->echo_server_clock_us(), m->echo_held_us());
            const double now = now_s();
            const uint64_t clock_us = uint64_t(now * 1e6) + 1;  // never 0 (0: no echo)
            const uint64_t held_us = uint64_t(std::max(0.0, now - rx_at_s_) * 1e6);
            send(s, [=](const PacketHeader& h) { return build_pong(h, ct, pid, st, tick, clock_us, held_us); }, 0);
            break;
        }
        case MessageType::Viewpoint: {
            const auto* m = p.message<wire::Viewpoint>();  // finite and bounded (checked by decode_packet)
            s.viewpoint = vec3{m->x(), m->y(), m->z()};
            break;
        }
        case MessageType::Resync: {
            // Only for a character this client was sent, and a tick already streamed: anything
            // else is a confused or hostile peer (counted, ignored).
            const auto* m = p.message<wire::Resync>();
            if (!s.known.count(m->character_id()) || m->tick() > tick_) {
                ++stats_.unexpected;
                break;
            }
            ++stats_.resyncs;
            s.builder.resync(m->character_id(), m->first_joint(), m->tick());
            break;
        }
        case MessageType::Disconnect:
            drop(s.id, "client disconnected");
            return;
        case MessageType::ConnectRequest:
            break;  // a late duplicate of the handshake: already connected
        default:
            ++stats_.unexpected;
            break;
    }
}

void Server::mark_acked(Session& s, uint32_t message_id) {
    for (auto& r : s.reliable)
        if (r.message_id == message_id) r.acked = true;
}

// Acknowledged definitions confirm their characters (unless removed since) once every piece of
// their skeleton, and of the skeletons it is coded against, is acknowledged too (a large skeleton
// spans several messages).
void Server::confirm_definitions(Session& s) {
    for (const auto& r : s.reliable) {
        if (!r.acked) continue;
        for (uint16_t c : r.defines)
            if (roster_.characters.count(c)) {
                s.defined.insert(c);
                s.def_sent_s[c] = std::max(s.def_sent_s[c], r.last_sent);
            }
        for (uint16_t k : r.skeletons) s.skeleton_sent_s[k] = std::max(s.skeleton_sent_s[k], r.last_sent);
    }
    s.reliable.erase(std::remove_if(s.reliable.begin(), s.reliable.end(), [](const auto& r) { return r.acked; }), s.reliable.end());
    const std::set<uint16_t> queued = skeletons_queued(s, false);
    for (auto it = s.defined.begin(); it != s.defined.end();) {
        const auto c = roster_.characters.find(*it);
        if (c != roster_.characters.end() && chain_pending(s, c->second.skeleton, queued)) {
            ++it;
            continue;
        }
        if (c != roster_.characters.end()) {
            s.known.insert(*it);
            s.confirmed[*it] = std::max(s.def_sent_s[*it], chain_sent_s(s, c->second.skeleton));
        }
        s.def_sent_s.erase(*it);
        it = s.defined.erase(it);
    }
}

// The skeletons a queued reliable message carries (a piece of), of the messages not sent exactly
// once if `not_once`.
std::set<uint16_t> Server::skeletons_queued(const Session& s, bool not_once) {
    std::set<uint16_t> out;
    for (const auto& r : s.reliable)
        if (!not_once || r.sends != 1) out.insert(r.skeletons.begin(), r.skeletons.end());
    return out;
}

// The latest acknowledged sending of a message carrying (a piece of) the skeleton or one it is coded
// against.
double Server::chain_sent_s(const Session& s, uint16_t skeleton) {
    double latest = 0;
    for (size_t depth = 0; depth <= s.skeleton_base.size(); ++depth) {
        if (const auto it = s.skeleton_sent_s.find(skeleton); it != s.skeleton_sent_s.end()) latest = std::max(latest, it->second);
        const auto b = s.skeleton_base.find(skeleton);
        if (b == s.skeleton_base.end()) break;
        skeleton = b->second;
    }
    return latest;
}

// Whether the skeleton, or one it is coded against (the chain the plans made), is in `queued`.
bool Server::chain_pending(const Session& s, uint16_t skeleton, const std::set<uint16_t>& queued) {
    for (size_t depth = 0; depth <= s.skeleton_base.size(); ++depth) {
        if (queued.count(skeleton)) return true;
        const auto it = s.skeleton_base.find(skeleton);
        if (it == s.skeleton_base.end()) return false;
        skeleton = it->second;
    }
    return true;  // a cycle, which no plan makes: never ready
}

// Characters whose definition and whole skeleton chain have been sent once, and not yet again, are
// known: their snapshots may follow unconfirmed. A definition sent again was not acknowledged in
// time (lost, or a client that does not acknowledge): its character's snapshots wait for the
// confirmation.
void Server::mark_sent_definitions(Session& s) {
    const std::set<uint16_t> not_once = skeletons_queued(s, true);
    for (const auto& r : s.reliable)
        for (uint16_t c : r.defines) {
            const auto it = roster_.characters.find(c);
            if (it == roster_.characters.end() || s.confirmed.count(c)) continue;
            if (r.sends == 1 && !chain_pending(s, it->second.skeleton, not_once)) s.known.insert(c);
            else s.known.erase(c);
        }
    for (uint16_t c : s.defined) {  // acknowledged, a piece of its skeleton chain not
        const auto it = roster_.characters.find(c);
        if (it != roster_.characters.end() && chain_pending(s, it->second.skeleton, not_once)) s.known.erase(c);
    }
}

double Server::reliable_burst_bytes() const {
    return std::max(double(kMaxDatagram + kIpUdpHeaderBytes), cfg_.bandwidth_bps / 8.0 / std::max(1.0f, cfg_.snapshot_hz));
}

// The round trip as the client measures it: our Pong's send time, echoed, to the Ping's arrival,
// less the time the client held the Pong. Smoothed as the client smooths its own.
void Server::on_ping_echo(Session& s, uint64_t echo_clock_us, uint64_t echo_held_us) {
    if (echo_clock_us == 0) return;
    const double rtt = rx_at_s_ - double(echo_clock_us - 1) * 1e-6 - double(echo_held_us) * 1e-6;
    if (!(rtt >= 0 && rtt < 10)) {  // a forged or stale echo: not a round trip
        if (stats_.echoes_refused++ == 0)
            spdlog::get("server")->warn("a Ping's echo gave a round trip of {:.3f} s: ignored (kinesync_echoes_refused_total)", rtt);
        return;
    }
    s.rtt_ms = smoothed_rtt_ms(s.rtt_ms, rtt);
}

void Server::send_reliable(Session& s, bool force) {
    const double t = now_s();
    // Reliable messages share the client's bandwidth budget with its snapshots: they spend an
    // allowance that refills at the budget's rate (a snapshot's or a datagram's worth banked, so a
    // burst cannot overrun the budget), and what they send is taken from the next snapshots'
    // budget (send()). A message goes while the allowance is positive and may leave it in debt by
    // up to its own size, repaid at the budget's rate: waiting for a whole message's worth instead
    // left the allowance full and unused for part of every wait (joining skeletons went at three
    // quarters of the budget).
    const double per_s = cfg_.bandwidth_bps / 8.0;
    const double bank = reliable_burst_bytes();
    s.reliable_allowance = std::min(bank, s.reliable_allowance + (t - s.allowance_last) * per_s);
    s.allowance_last = t;
    for (auto& r : s.reliable) {
        // Each resend waits twice as long as the one before (0.5, 1, 2 s at most): a client
        // that stops acknowledging costs less and less, and is dropped (see publish) soon.
        const double wait = std::min(cfg_.reliable_resend_s * double(1u << std::min(r.sends, 3)), 2.0);
        if (r.acked || (!force && t - r.last_sent < wait)) continue;
        const double cost = double(r.bytes + kIpUdpHeaderBytes + (s.sealer ? kMaxSealOverhead : 0));
        if (s.reliable_allowance <= 0) break;  // in order: later messages wait too
        s.reliable_allowance -= cost;
        r.last_sent = t;
        if (r.first_sent < 0) r.first_sent = t;
        ++r.sends;
        send(s, r.build, kTagReliable | r.message_id);
    }
    mark_sent_definitions(s);
}

void Server::drop(uint32_t id, const char* why) {
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
        if (it->second->id != id) continue;
        spdlog::get("server")->info("client {} ({}) left: {}", id, it->first, why);
        ++stats_.disconnects;
        sessions_.erase(it);
        return;
    }
}

void Server::publish(const TickFrame& frame) {
    tick_ = frame.tick;
    tick_wall_s_ = now_s();
    ++stats_.ticks;
    prune_admission();
    // Roster changes first: new definitions, then removals (stop sending at once; tell reliably).
    std::vector<EventInfo> events = frame.events;
    for (uint16_t id : frame.removed_characters) {
        events.push_back({id, 0, wire::EventKind::Removed, frame.tick});
        for (int why = 0; why < int(Unsent::kCount); ++why) unsent_logged_.erase({id, why});  // a new one under this id is logged anew
    }
    for (auto& [key, s] : sessions_) {
        queue_definitions(*s, frame.added_skeletons, frame.added_characters);
        for (uint16_t id : frame.removed_characters) {
            s->known.erase(id);
            s->confirmed.erase(id);
            s->def_sent_s.erase(id);
            s->defined.erase(id);
            s->builder.forget(id);
        }
        for (size_t i = 0; i < events.size(); i += kMaxEvents) {
            std::vector<EventInfo> batch(events.begin() + std::ptrdiff_t(i),
                                         events.begin() + std::ptrdiff_t(std::min(events.size(), i + kMaxEvents)));
            const uint32_t mid = next_message_id_++;
            s->reliable.push_back({mid, [batch, mid](const PacketHeader& h) { return build_events(h, mid, batch); }, -1e9, -1, 0, false, {}, 0, {}});
            s->reliable.back().bytes = s->reliable.back().build({}).size();
        }
    }
    // Snapshot ticks only (nothing else reads the quantized states): quantize every character once
    // for all clients, keep the states for later baselines, send.
    if (frame.tick % snapshot_every(cfg_.tick_hz, cfg_.snapshot_hz) == 0) {
        quantize_frame(frame);
        history_.add(frame.tick, now_, pool_.get());
        send_snapshots(frame.tick);
    }
    const double t = now_s();
    std::vector<uint32_t> timed_out, drop_later;
    for (auto& [key, s] : sessions_) {
        send_reliable(*s, false);
        if (t - s->bytes_window_start >= 1.0) {
            s->bytes_per_s = double(s->bytes_window) / (t - s->bytes_window_start);
            s->bytes_window = 0;
            s->bytes_window_start = t;
        }
        if (t - s->last_heard > cfg_.timeout_s) timed_out.push_back(s->id);
        // Alive but not acknowledging (or far behind): a reliable message unacknowledged for
        // reliable_timeout_s, or more queued than max_reliable_queue, ends the session.
        const bool stale = !s->reliable.empty() && s->reliable.front().first_sent >= 0 &&
                           t - s->reliable.front().first_sent > cfg_.reliable_timeout_s;
        if ((stale || s->reliable.size() > cfg_.max_reliable_queue) && !(t - s->last_heard > cfg_.timeout_s)) {
            ++stats_.stalled;
            drop_later.push_back(s->id);
        }
    }
    for (uint32_t id : timed_out) {
        ++stats_.timeouts;
        drop(id, "timed out");
    }
    for (uint32_t id : drop_later) {
        for (auto& [key, s] : sessions_)
            if (s->id == id) send(*s, [](const PacketHeader& h) { return build_disconnect(h, "not acknowledging", kDcNotAcknowledging); }, 0);
        drop(id, "not acknowledging reliable messages");
    }
}

vec3 Server::root_metres(const CharacterSnapshot& c) const {
    const Roster::SkeletonEntry& sk = roster_.skeletons.at(c.skeleton);
    const QJoint& root = c.state.joints[0];
    return vec3{float(root.pos[0]), float(root.pos[1]), float(root.pos[2])} * (sk.precision.joints[0].pos_step * sk.metres_per_unit);
}

void Server::quantize_frame(const TickFrame& frame) {
    std::vector<const TickFrame::CharacterPose*> known;
    for (const TickFrame::CharacterPose& c : frame.characters)
        if (roster_.characters.count(c.id)) known.push_back(&c);
    now_.resize(known.size());  // the states of the last snapshot's characters: their memory is reused
    auto quantize = [&](size_t i) {
        const TickFrame::CharacterPose& c = *known[i];
        const uint16_t skeleton = roster_.characters.at(c.id).skeleton;
        const Roster::SkeletonEntry& sk = roster_.skeletons.at(skeleton);
        now_[i].id = c.id;
        now_[i].skeleton = skeleton;
        QCharacter& q = now_[i].state;
        quantize_character_into(q, c.ahead ? *c.ahead : *c.pose, sk.skeleton, sk.precision, c.epoch);
        q.ahead = c.planned;
        q.ahead_ticks = c.ahead ? uint16_t(std::clamp<long>(std::lround(double(c.ahead_s) * cfg_.tick_hz), 0, long(kMaxAheadTicks))) : 0;
        q.plan = c.plan;
    };
    if (pool_) pool_->parallel_for(known.size(), quantize);
    else for (size_t i = 0; i < known.size(); ++i) quantize(i);
}

void Server::send_snapshots(uint32_t tick) {
    const PrecisionLookup lookup = [this](uint16_t id) {
        const auto it = roster_.skeletons.find(id);
        return it == roster_.skeletons.end() ? nullptr : &it->second.precision;
    };
    // Each client's snapshot is built on its own (builders, shared history and encodings are safe
    // to use from several threads), on every core; then sent from this thread, in order.
    std::vector<Session*> ready;
    for (auto& [key, s] : sessions_) ready.push_back(s.get());
    std::vector<std::vector<SnapshotPart>> parts(ready.size());
    // Every character's root in metres, once per tick for all clients that sent a viewpoint.
    std::unordered_map<uint16_t, vec3> roots_m;
    if (std::any_of(ready.begin(), ready.end(), [](const Session* s) { return s->viewpoint.has_value(); }))
        for (const CharacterSnapshot& c : now_) roots_m[c.id] = root_metres(c);
    auto build = [&](size_t i) {
        Session& s = *ready[i];
        // Only characters whose definitions went out to this client.
        const bool all = std::all_of(now_.begin(), now_.end(), [&](const CharacterSnapshot& c) { return s.known.count(c.id) > 0; });
        std::vector<CharacterSnapshot> visible;
        if (!all)
            for (const CharacterSnapshot& c : now_)
                if (s.known.count(c.id)) visible.push_back(c);
        const std::vector<CharacterSnapshot>& mine = all ? now_ : visible;
        if (mine.empty()) {
            s.builder.idle();
            return;
        }
        // Relevance from the client's viewpoint: the nearest first, the far ones now and then.
        std::function<float(uint16_t)> priority;
        std::unordered_map<uint16_t, float> by_id;
        if (s.viewpoint) {
            std::vector<vec3> roots;
            for (const CharacterSnapshot& c : mine) roots.push_back(roots_m.at(c.id));
            const std::vector<float> p = relevance_priorities(roots, *s.viewpoint, cfg_.relevance);
            for (size_t k = 0; k < mine.size(); ++k) by_id[mine[k].id] = p[k];
            priority = [&by_id](uint16_t id) { return by_id[id]; };
        }
        std::function<int(uint16_t)> hold;
        if (s.viewpoint && cfg_.relevance.far_hold_depth >= 0)
            hold = [&by_id, this](uint16_t id) { return relevance_is_near(by_id[id], cfg_.relevance) ? -1 : cfg_.relevance.far_hold_depth; };
        parts[i] = s.builder.build(tick, mine, history_, lookup, priority, cfg_.share_encodings ? &encode_cache_ : nullptr, hold);
    };
    if (pool_) pool_->parallel_for(ready.size(), build);
    else for (size_t i = 0; i < ready.size(); ++i) build(i);
    for (Session* s : ready) account_unsent(*s);
    for (size_t i = 0; i < ready.size(); ++i) {
        Session& s = *ready[i];
        for (size_t k = 0; k < parts[i].size(); ++k) {
            const SnapshotPart& part = parts[i][k];
            const uint16_t seq = s.next_sequence;
            auto& meta = s.snapshot_meta[seq % SentPacketLog::kWindow];
            meta.tick = tick;
            meta.sent_s = now_s();
            meta.units = part.units;
            const uint8_t idx = uint8_t(k), count = uint8_t(parts[i].size());
            send(s, [&part, idx, count](const PacketHeader& h) { return build_snapshot(h, part.tick, idx, count, part.data); },
                 kTagSnapshot | seq);
            ++s.snapshots_sent;
        }
    }
}

// What a client's builder could not send: counted by reason, and logged once per character.
void Server::account_unsent(Session& s) {
    const BuilderStats& b = s.builder.stats();
    for (size_t r = 0; r < kUnsentReasons; ++r) {
        stats_.unsent_by_reason[r] += b.unsent[r] - s.unsent_counted[r];
        s.unsent_counted[r] = b.unsent[r];
    }
    stats_.entries_at_rest += b.units_at_rest - s.needless_counted[0];
    stats_.entries_held += b.units_held - s.needless_counted[1];
    stats_.entries_late += b.units_late - s.needless_counted[2];
    s.needless_counted = {b.units_at_rest, b.units_held, b.units_late};
    for (const UnsentReport& u : s.builder.take_unsent_reports()) {
        if (!unsent_logged_.insert({u.character, int(u.why)}).second) continue;
        const auto log = spdlog::get("server");
        switch (u.why) {
            case Unsent::TooLarge:
                log->warn("character {}: a part of {} joints codes to {} bytes, more than a datagram's {}: not sent", u.character,
                          u.joints, u.bytes, s.builder.config().max_payload_bytes);
                break;
            case Unsent::NoPrecision:
                log->warn("character {}: no precision plan for its skeleton ({} joints): not sent", u.character, u.joints);
                break;
            case Unsent::Starved:
                log->warn("character {}: a part of {} joints has not fitted a client's budget for over two seconds "
                          "(raise the bandwidth, or lower the number or size of characters)", u.character, u.joints);
                break;
            default: break;
        }
    }
}

std::vector<ClientReport> Server::clients() const {
    std::vector<ClientReport> out;
    for (const auto& [key, s] : sessions_) out.push_back({s->id, key, s->bytes_per_s, s->rtt_ms, s->snapshots_sent, s->bytes_sent});
    std::sort(out.begin(), out.end(), [](const ClientReport& a, const ClientReport& b) { return a.id < b.id; });
    return out;
}

}  // namespace ks::net
