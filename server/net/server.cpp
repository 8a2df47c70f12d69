#include "server/net/server.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <spdlog/spdlog.h>

namespace ks::net {

namespace {
constexpr uint64_t kTagSnapshot = 1ull << 60, kTagReliable = 2ull << 60, kTagMask = 0xFFFFFFFFFFFFFFull;

std::string endpoint_text(const asio::ip::udp::endpoint& ep) { return ep.address().to_string() + ":" + std::to_string(ep.port()); }

uint64_t random_seed() {
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
}
}  // namespace

struct Server::Session {
    asio::ip::udp::endpoint ep;
    std::string key;
    uint32_t id = 0;
    uint64_t salt = 0;
    AckTracker received;
    SentPacketLog sent;
    uint16_t next_sequence = 0;
    std::array<double, SentPacketLog::kWindow> sent_time{};
    SnapshotBuilder builder;
    struct SnapshotMeta {
        uint32_t tick = 0;
        std::vector<uint16_t> characters;
    };
    std::array<SnapshotMeta, SentPacketLog::kWindow> snapshot_meta;
    struct Reliable {
        uint32_t message_id;
        std::function<std::vector<uint8_t>(const PacketHeader&)> build;
        double last_sent = -1e9;
        bool acked = false;
        bool skeletons = false;
    };
    std::vector<Reliable> reliable;
    bool skeletons_acked = false;
    double last_heard = 0;
    double rtt_ms = 0;
    uint64_t bytes_sent = 0, snapshots_sent = 0;
    double bytes_window_start = 0;
    uint64_t bytes_window = 0;
    double bytes_per_s = 0;
};

Server::Server(asio::io_context& io, World& world, const ServerConfig& cfg, TickHook on_tick)
    : io_(io), world_(world), cfg_(cfg), on_tick_(std::move(on_tick)), socket_(io), tick_timer_(io),
      cookies_(cfg.secret_seed ? cfg.secret_seed : random_seed()), history_(256) {
    for (size_t s = 0; s < world.library().skeletons.size(); ++s)
        precisions_.push_back(plan_precision(world.library().skeletons[s], world.library().metres_per_unit[s]));
}

Server::~Server() { stop(); }

double Server::now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
uint64_t Server::now_us() const {
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count());
}

void Server::start() {
    const asio::ip::udp::endpoint ep(asio::ip::make_address(cfg_.bind), cfg_.port);
    // No reuse_address: a second server on a busy port must fail, not share it silently.
    asio::error_code ec;
    socket_.open(ep.protocol(), ec);
    if (!ec) socket_.bind(ep, ec);
    if (ec) {
        asio::error_code ignored;
        socket_.close(ignored);
        throw std::runtime_error("cannot listen on UDP " + cfg_.bind + ":" + std::to_string(cfg_.port) + ": " + ec.message());
    }
    start_ = std::chrono::steady_clock::now();
    running_ = true;
    spdlog::get("server")->info("listening on {}:{} ({} characters, {} Hz ticks, {} Hz snapshots, {:.0f} kbit/s per client)",
                                cfg_.bind, port(), world_.characters().size(), world_.config().tick_hz, cfg_.snapshot_hz,
                                cfg_.bandwidth_bps / 1000.0);
    receive();
    schedule_tick();
}

void Server::stop() {
    if (!running_) return;
    running_ = false;
    for (auto& [key, s] : sessions_)
        send(*s, [](const PacketHeader& h) { return build_disconnect(h, "server shutting down"); }, 0);
    asio::error_code ec;
    tick_timer_.cancel();
    socket_.close(ec);
}

uint16_t Server::port() const {
    asio::error_code ec;
    const auto ep = socket_.local_endpoint(ec);
    return ec ? cfg_.port : ep.port();
}

void Server::receive() {
    socket_.async_receive_from(asio::buffer(rx_), rx_from_, [this](const asio::error_code& ec, size_t n) {
        if (!running_) return;
        if (!ec) {
            ++stats_.datagrams_in;
            stats_.bytes_in += n;
            on_datagram(rx_from_, std::span<const uint8_t>(rx_.data(), n));
        }
        receive();
    });
}

void Server::send_raw(const asio::ip::udp::endpoint& to, std::vector<uint8_t> bytes) {
    ++stats_.datagrams_out;
    stats_.bytes_out += bytes.size();
    auto buf = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    socket_.async_send_to(asio::buffer(*buf), to, [buf](const asio::error_code&, size_t) {});
}

void Server::send(Session& s, const std::function<std::vector<uint8_t>(const PacketHeader&)>& build, uint64_t tag) {
    const uint16_t seq = s.next_sequence++;
    std::vector<uint8_t> bytes = build(s.received.header(seq));
    s.sent.on_sent(seq, tag);
    s.sent_time[seq % SentPacketLog::kWindow] = now_s();
    s.bytes_sent += bytes.size() + 28;
    s.bytes_window += bytes.size() + 28;
    send_raw(s.ep, std::move(bytes));
}

void Server::on_datagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes) {
    DecodeError err = DecodeError::None;
    const std::optional<DecodedPacket> p = decode_packet(bytes, &err);
    if (!p) {
        ++stats_.malformed;
        ++stats_.malformed_by_reason[size_t(err)];
        return;
    }
    const std::string key = endpoint_text(from);
    auto it = sessions_.find(key);
    if (it != sessions_.end() && p->type != MessageType::ChallengeResponse) {
        on_session_packet(*it->second, *p);
        return;
    }
    const uint64_t window = uint64_t(now_s() / 10.0);
    if (p->type == MessageType::ConnectRequest) {
        // Stateless reply, never larger than the (full-size) request.
        const uint64_t salt = p->message<wire::ConnectRequest>()->client_salt();
        const Cookie cookie = cookies_.make(from.address().to_string(), from.port(), salt, window);
        send_raw(from, build_challenge({0, 0, 0}, salt, cookie));
        return;
    }
    if (p->type == MessageType::ChallengeResponse) {
        const auto* r = p->message<wire::ChallengeResponse>();
        Cookie cookie{};
        std::copy(r->cookie()->begin(), r->cookie()->end(), cookie.begin());
        if (!cookies_.check(cookie, from.address().to_string(), from.port(), r->client_salt(), window)) {
            ++stats_.refused;
            return;
        }
        if (it != sessions_.end()) {
            if (it->second->salt == r->client_salt()) return;  // a duplicate of the response we accepted
            drop(it->second->id, "reconnected");              // same address, new client instance
        }
        if (int(sessions_.size()) >= cfg_.max_clients) {
            ++stats_.refused;
            send_raw(from, build_disconnect({0, 0, 0}, "server full"));
            return;
        }
        auto s = std::make_unique<Session>();
        s->ep = from;
        s->key = key;
        s->id = next_client_id_++;
        s->salt = r->client_salt();
        s->last_heard = now_s();
        s->bytes_window_start = now_s();
        BuilderConfig bc;
        bc.tick_hz = world_.config().tick_hz;
        bc.snapshot_hz = cfg_.snapshot_hz;
        bc.bandwidth_bps = cfg_.bandwidth_bps;
        bc.max_payload_bytes = std::min<size_t>(1100, max_snapshot_data_bytes());
        s->builder = SnapshotBuilder(bc);
        s->received.on_received(p->sequence);
        Session& sr = *s;
        sessions_[key] = std::move(s);
        ++stats_.connects;
        AcceptInfo info{sr.id, uint16_t(world_.config().tick_hz), uint16_t(cfg_.snapshot_hz), world_.tick(), now_us()};
        send(sr, [info](const PacketHeader& h) { return build_accept(h, info); }, 0);
        // Skeleton definitions, reliably (possibly several messages).
        const ClipLibrary& lib = world_.library();
        std::vector<SkeletonDefInput> defs;
        for (size_t k = 0; k < lib.skeletons.size(); ++k)
            defs.push_back({uint16_t(k), lib.skeleton_names[k], &lib.skeletons[k], lib.metres_per_unit[k], 0, -1});
        std::vector<CharacterInfoInput> chars;
        for (size_t c = 0; c < world_.characters().size(); ++c)
            chars.push_back({uint16_t(c), uint16_t(world_.characters()[c].skeleton()), {}});
        for (const SkeletonDefsPlan& plan : plan_skeleton_defs(defs, chars)) {
            const uint32_t mid = next_message_id_++;
            sr.reliable.push_back({mid, [plan, mid](const PacketHeader& h) { return build_skeleton_defs(h, mid, plan.defs, plan.characters); },
                                   -1e9, false, true});
        }
        send_reliable(sr, true);
        spdlog::get("server")->info("client {} connected from {} ({} of {})", sr.id, key, sessions_.size(), cfg_.max_clients);
        return;
    }
    ++stats_.unexpected;  // anything else from a peer without a session
}

void Server::on_session_packet(Session& s, const DecodedPacket& p) {
    s.last_heard = now_s();
    s.received.on_received(p.sequence);
    std::vector<SentPacketLog::Acked> acked;
    s.sent.on_ack(p.ack, p.ack_bits, acked);
    for (const auto& a : acked) {
        if (a.sequence == p.ack) s.rtt_ms = s.rtt_ms == 0 ? 1000.0 * (now_s() - s.sent_time[a.sequence % SentPacketLog::kWindow])
                                                          : 0.9 * s.rtt_ms + 100.0 * (now_s() - s.sent_time[a.sequence % SentPacketLog::kWindow]);
        if ((a.tag & ~kTagMask) == kTagSnapshot) {
            const auto& meta = s.snapshot_meta[a.sequence % SentPacketLog::kWindow];
            s.builder.on_delivered(meta.tick, meta.characters);
        } else if ((a.tag & ~kTagMask) == kTagReliable) {
            for (auto& r : s.reliable)
                if (r.message_id == uint32_t(a.tag & kTagMask)) r.acked = true;
        }
    }
    switch (p.type) {
        case MessageType::Ack: {
            const auto* m = p.message<wire::Ack>();
            if (m->reliable_ids())
                for (uint32_t id : *m->reliable_ids())
                    for (auto& r : s.reliable)
                        if (r.message_id == id) r.acked = true;
            break;
        }
        case MessageType::Ping: {
            const auto* m = p.message<wire::Ping>();
            const uint64_t ct = m->client_time_us();
            const uint32_t pid = m->ping_id();
            const uint64_t st = now_us();
            const uint32_t tick = world_.tick();
            send(s, [=](const PacketHeader& h) { return build_pong(h, ct, pid, st, tick); }, 0);
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
    // Skeletons acknowledged: snapshots may start.
    bool all = true;
    for (const auto& r : s.reliable)
        if (r.skeletons && !r.acked) all = false;
    s.skeletons_acked = all;
    s.reliable.erase(std::remove_if(s.reliable.begin(), s.reliable.end(), [](const auto& r) { return r.acked; }), s.reliable.end());
}

void Server::send_reliable(Session& s, bool force) {
    const double t = now_s();
    for (auto& r : s.reliable) {
        if (r.acked || (!force && t - r.last_sent < cfg_.reliable_resend_s)) continue;
        r.last_sent = t;
        send(s, r.build, kTagReliable | r.message_id);
    }
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

void Server::schedule_tick() {
    // Drift-free: deadlines are start + n / tick_hz, never "now + period".
    const auto period = std::chrono::duration<double>(1.0 / double(world_.config().tick_hz));
    tick_timer_.expires_at(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * double(tick_index_ + 1)));
    tick_timer_.async_wait([this](const asio::error_code& ec) {
        if (ec || !running_) return;
        on_tick();
        schedule_tick();
    });
}

void Server::on_tick() {
    const auto t0 = std::chrono::steady_clock::now();
    // Catch up if we fell behind (count what was missed; the world still steps every tick).
    const double behind = now_s() * double(world_.config().tick_hz) - double(tick_index_ + 1);
    if (behind > 1.0) stats_.missed_ticks += uint64_t(behind);
    ++tick_index_;
    world_.step();
    ++stats_.ticks;
    if (on_tick_) on_tick_(world_);
    for (size_t c = 0; c < world_.characters().size(); ++c)
        for (const CharacterEvent& e : world_.characters()[c].events())
            pending_events_.push_back({uint16_t(c), e.epoch, e.kind == CharacterEvent::Kind::Teleport ? wire::EventKind::Teleport : wire::EventKind::Reset, e.tick});
    const int every = std::max(1, int(std::lround(world_.config().tick_hz / cfg_.snapshot_hz)));
    if (world_.tick() % uint32_t(every) == 0) send_snapshots(world_.tick());
    const double t = now_s();
    std::vector<uint32_t> timed_out;
    for (auto& [key, s] : sessions_) {
        if (!pending_events_.empty()) {
            for (size_t i = 0; i < pending_events_.size(); i += kMaxEvents) {
                std::vector<EventInfo> batch(pending_events_.begin() + std::ptrdiff_t(i),
                                             pending_events_.begin() + std::ptrdiff_t(std::min(pending_events_.size(), i + kMaxEvents)));
                const uint32_t mid = next_message_id_++;
                s->reliable.push_back({mid, [batch, mid](const PacketHeader& h) { return build_events(h, mid, batch); }, -1e9, false, false});
            }
        }
        send_reliable(*s, false);
        if (t - s->bytes_window_start >= 1.0) {
            s->bytes_per_s = double(s->bytes_window) / (t - s->bytes_window_start);
            s->bytes_window = 0;
            s->bytes_window_start = t;
        }
        if (t - s->last_heard > cfg_.timeout_s) timed_out.push_back(s->id);
    }
    pending_events_.clear();
    for (uint32_t id : timed_out) {
        ++stats_.timeouts;
        drop(id, "timed out");
    }
    tick_times_us_.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
}

void Server::send_snapshots(uint32_t tick) {
    now_.clear();
    for (size_t c = 0; c < world_.characters().size(); ++c) {
        const Character& ch = world_.characters()[c];
        const Skeleton& skel = world_.library().skeletons[size_t(ch.skeleton())];
        now_.push_back({uint16_t(c), uint16_t(ch.skeleton()), quantize_character(ch.pose(), skel, precisions_[size_t(ch.skeleton())], ch.epoch())});
    }
    history_.add(tick, now_);
    const PrecisionLookup lookup = [this](uint16_t s) { return s < precisions_.size() ? &precisions_[s] : nullptr; };
    for (auto& [key, s] : sessions_) {
        if (!s->skeletons_acked) continue;
        const std::vector<SnapshotPart> parts = s->builder.build(tick, now_, history_, lookup);
        for (size_t i = 0; i < parts.size(); ++i) {
            const SnapshotPart& part = parts[i];
            const uint16_t seq = s->next_sequence;
            auto& meta = s->snapshot_meta[seq % SentPacketLog::kWindow];
            meta.tick = tick;
            meta.characters = part.characters;
            const uint8_t idx = uint8_t(i), count = uint8_t(parts.size());
            send(*s, [&part, idx, count](const PacketHeader& h) { return build_snapshot(h, part.tick, idx, count, part.data); },
                 kTagSnapshot | seq);
            ++s->snapshots_sent;
        }
    }
}

std::vector<ClientReport> Server::clients() const {
    std::vector<ClientReport> out;
    for (const auto& [key, s] : sessions_) out.push_back({s->id, key, s->bytes_per_s, s->rtt_ms, s->snapshots_sent});
    std::sort(out.begin(), out.end(), [](const ClientReport& a, const ClientReport& b) { return a.id < b.id; });
    return out;
}

void Server::take_tick_times(double& p50_us, double& p99_us) {
    if (tick_times_us_.empty()) {
        p50_us = p99_us = 0;
        return;
    }
    std::sort(tick_times_us_.begin(), tick_times_us_.end());
    p50_us = tick_times_us_[tick_times_us_.size() / 2];
    p99_us = tick_times_us_[std::min(tick_times_us_.size() - 1, size_t(0.99 * double(tick_times_us_.size())))];
    tick_times_us_.clear();
}

}  // namespace ks::net
