#include "server/src/net/server.h"
#include "server/src/net/server_session.h"

#include <kinesync/common/errors.h>
#include <kinesync/common/net/disconnect_code.h>
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
constexpr uint8_t kDcNotAcknowledging = uint8_t(DisconnectCode::NotAcknowledging);

}  // namespace

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
    s.rate.on_sent(seq, now_s(), wire, (tag & ~kTagMask) == kTagSnapshot);  // snapshots are acknowledged at once: round trips
    s.bytes_sent += wire;
    s.bytes_window += wire;
    send_raw(s.ep, bytes);
    return bytes.size();
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

void Server::on_session_packet(Session& s, const DecodedPacket& p) {
    s.last_heard = now_s();
    s.heard_since_accept = true;
    s.received.on_received(p.sequence);
    std::vector<SentPacketLog::Acked> acked;
    s.sent.on_ack(p.ack, p.ack_bits, acked);
    for (const auto& a : acked) s.rate.on_acked(a.sequence, rx_at_s_, a.sequence == p.ack);
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
            const uint32_t rate = uint32_t(std::min(s.rate.rate_bps(), 4e9));
            send(s, [=](const PacketHeader& h) { return build_pong(h, ct, pid, st, tick, clock_us, held_us, rate); }, 0);
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
    follow_paths();
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

// Each client's rate from what its path did since the last tick (rate_control.h): what its
// snapshots may spend.
void Server::follow_paths() {
    const double t = now_s();
    for (auto& [key, s] : sessions_) {
        s->rate.update(t);
        s->builder.set_bandwidth(float(s->rate.rate_bps()));
        const auto& c = s->rate.changes();
        stats_.rate_lowered_delay += c[size_t(RateChange::Delay)] - s->rate_counted[size_t(RateChange::Delay)];
        stats_.rate_lowered_loss += c[size_t(RateChange::Loss)] - s->rate_counted[size_t(RateChange::Loss)];
        stats_.rate_silences += c[size_t(RateChange::Silence)] - s->rate_counted[size_t(RateChange::Silence)];
        stats_.rate_recovered += c[size_t(RateChange::Recovered)] - s->rate_counted[size_t(RateChange::Recovered)];
        s->rate_counted = c;
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
    for (const auto& [key, s] : sessions_)
        out.push_back({s->id, key, s->bytes_per_s, s->rtt_ms, s->snapshots_sent, s->bytes_sent, s->rate.rate_bps(),
                       rate_change_name(s->rate.last_change()), s->rate.queue_delay_s() * 1000.0});
    std::sort(out.begin(), out.end(), [](const ClientReport& a, const ClientReport& b) { return a.id < b.id; });
    return out;
}

}  // namespace ks::net
