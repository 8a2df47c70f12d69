#include "client/src/session.h"
#include "common/src/net/round_trip.h"
#include "common/src/platform/random.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

namespace ks {

using namespace ks::net;

ClientSession::ClientSession(ClientSessionConfig cfg) : cfg_(cfg) {}

namespace {
// A handshake's salt: from the operating system's random source, never from a seed or the clock,
// so no one can predict it and two processes never share one.
uint64_t os_random_salt() {
    uint64_t v = 0;
    while (v == 0) {
        std::array<uint8_t, 8> b{};
        platform::random_bytes(b);
        for (uint8_t byte : b) v = v << 8 | byte;
    }
    return v;
}
}  // namespace

const char* ClientSession::state_name() const {
    switch (state_) {
        case State::Idle: return "idle";
        case State::Connecting: return "connecting";
        case State::Challenged: return "challenged";
        case State::Connected: return "connected";
        case State::Disconnected: return "disconnected";
    }
    return "?";
}

namespace {
DisconnectCode wire_code(uint8_t c) {
    return c == 0 || c > uint8_t(DisconnectCode::SessionInUse) ? DisconnectCode::Unspecified : DisconnectCode(c);
}
}  // namespace

void ClientSession::connect(double now_s) {
    // A fresh start: new salt, no skeletons, no history (the server forgets us too).
    salt_ = os_random_salt();
    sample_ = ChallengeSample(size_t(std::max(1, cfg_.challenges_per_round)),
                              cfg_.sample_draw_for_tests ? cfg_.sample_draw_for_tests(salt_) : ChallengeSample::Draw{});
    own_cookies_.clear();
    state_ = State::Connecting;
    connect_started_ = now_s;
    last_connect_send_ = -1e9;
    last_heard_ = now_s;
    received_ = {};
    assembler_ = {};
    offered_ = std::min(known_.size(), kMaxKnownSkeletons);
    stats_.skeletons_offered += offered_;
    skeletons_.clear();
    precisions_.clear();
    character_skeleton_.clear();
    character_names_.clear();
    reliable_seen_.clear();
    reliable_to_ack_.clear();
    decoder_ = SnapshotDecoder();
    poses_ = SnapshotAssembler();
    resyncs_.clear();
    any_tick_ = false;
    loss_.restart();
    clock_ = {};
    refusal_.clear();
    refusal_code_ = DisconnectCode::None;
    sealer_.reset();
    opener_.reset();
    if (token_) {
        if (token_->expire_s <= unix_now_s()) {
            reason_ = "connect token expired (checked before sending it)";
            code_ = DisconnectCode::TokenExpired;
            state_ = State::Disconnected;
            return;
        }
        sealer_.emplace(token_->client_to_server);
        opener_.emplace(token_->server_to_client);
    }
    update(now_s);
}

bool ClientSession::set_connect_token(std::span<const uint8_t> token, std::string* error) {
    std::optional<ConnectToken> t = parse_connect_token(token, error);
    if (!t) return false;
    token_ = std::move(t);
    return true;
}

void ClientSession::disconnect(double, const std::string& reason) {
    // With a token, only an established session can be told goodbye (sealed).
    if (state_ == State::Connected || (state_ == State::Challenged && !token_))
        send([&](const PacketHeader& h) { return build_disconnect(h, reason.substr(0, kMaxReasonBytes)); });
    state_ = State::Disconnected;
    reason_ = reason;
    code_ = DisconnectCode::ClientClosed;
}

void ClientSession::send(const std::function<std::vector<uint8_t>(const PacketHeader&)>& build, bool handshake) {
    std::vector<uint8_t> bytes = build(received_.header(next_sequence_++));
    if (sealer_ && !handshake) bytes = sealer_->seal(bytes);
    ++stats_.datagrams_out;
    stats_.bytes_out += bytes.size();
    outgoing_.push_back(std::move(bytes));
}

void ClientSession::send_ack() {
    const uint32_t tick = newest_tick_;
    std::vector<uint32_t> ids(reliable_to_ack_.begin(),
                              reliable_to_ack_.begin() + std::ptrdiff_t(std::min(reliable_to_ack_.size(), kMaxAckIds)));
    reliable_to_ack_.erase(reliable_to_ack_.begin(), reliable_to_ack_.begin() + std::ptrdiff_t(ids.size()));
    send([&](const PacketHeader& h) { return build_ack(h, tick, ids); });
}

void ClientSession::send_challenge_response(const Cookie& cookie) {
    std::vector<SkeletonHash> offer;
    for (size_t i = 0; i < offered_; ++i) offer.push_back(known_[i].hash);
    HandshakeProof proof{};
    if (token_)
        proof = handshake_proof(token_->client_to_server, cookie, salt_, {offer.empty() ? nullptr : offer[0].data(), offer.size() * kSkeletonHashBytes});
    send([&](const PacketHeader& h) { return build_challenge_response(h, salt_, cookie, token_ ? &proof : nullptr, offer); }, true);
    ++stats_.challenge_responses;
}

void ClientSession::handshake_round(double now_s) {
    // Challenged, the ConnectRequest goes on too: each round brings a genuine Challenge of its own.
    last_connect_send_ = now_s;
    TokenField tf;
    if (token_) tf = {token_->expire_s, token_->private_token};
    send([&](const PacketHeader& h) { return build_connect_request(h, salt_, token_ ? &tf : nullptr); }, true);
    ++stats_.connect_requests;
    for (const Cookie& c : own_cookies_) send_challenge_response(c);
    for (const Cookie& c : sample_.kept()) send_challenge_response(c);
    sample_.next_round();
    own_cookies_.clear();
}

void ClientSession::on_challenge(const wire::Challenge& m, double now_s) {
    Cookie cookie{};
    std::copy(m.cookie()->begin(), m.cookie()->end(), cookie.begin());
    if (names_local_address(m)) {
        // Ours for certain: a relayed Challenge names the address it was relayed from. Any one of
        // them gets in, so a round answers at most challenges_per_round (a spoofer sending copies
        // of our request from our address gets no more answers out of us than the sample gives).
        if (std::find(own_cookies_.begin(), own_cookies_.end(), cookie) != own_cookies_.end() ||
            own_cookies_.size() >= size_t(std::max(1, cfg_.challenges_per_round)))
            return;
        own_cookies_.push_back(cookie);
        ++stats_.challenges;
        ++stats_.challenges_own;
        send_challenge_response(cookie);
    } else {
        const ChallengeSample::Offer o = sample_.offer(cookie);
        if (o == ChallengeSample::Offer::Duplicate) return;
        ++stats_.challenges;
        if (o == ChallengeSample::Offer::AnswerNow) send_challenge_response(cookie);
    }
    last_heard_ = now_s;
    if (state_ == State::Connecting) {
        state_ = State::Challenged;
        last_connect_send_ = now_s;  // the next round after a whole round's wait
    }
}

bool ClientSession::names_local_address(const wire::Challenge& c) const {
    if (!c.observed() || c.observed()->size() != kObservedAddressBytes) return false;
    ObservedAddress a{};
    std::copy(c.observed()->begin(), c.observed()->end(), a.begin());
    return std::find(local_addresses_.begin(), local_addresses_.end(), a) != local_addresses_.end();
}

void ClientSession::update(double now_s) {
    switch (state_) {
        case State::Connecting:
        case State::Challenged:
            if (now_s - last_connect_send_ >= cfg_.connect_resend_s) handshake_round(now_s);
            break;
        case State::Connected:
            if (!reliable_to_ack_.empty() || now_s - last_ack_ >= cfg_.ack_interval_s) {
                last_ack_ = now_s;
                send_ack();
            }
            if (has_viewpoint_ && (now_s - last_viewpoint_ >= cfg_.viewpoint_interval_s || length(viewpoint_ - viewpoint_sent_) > 1.0f)) {
                last_viewpoint_ = now_s;
                viewpoint_sent_ = viewpoint_;
                send([&](const PacketHeader& h) { return build_viewpoint(h, viewpoint_.x, viewpoint_.y, viewpoint_.z); });
            }
            if (now_s - last_ping_ >= cfg_.ping_interval_s) {
                last_ping_ = now_s;
                const uint64_t t_us = uint64_t(now_s * 1e6);
                const uint32_t id = next_ping_id_++;
                const uint64_t echo = pong_server_clock_us_;
                const uint64_t held_us = echo ? uint64_t(std::max(0.0, now_s - pong_arrived_s_) * 1e6) : 0;
                send([&](const PacketHeader& h) { return build_ping(h, t_us, id, echo, held_us); });
            }
            break;
        default:
            break;
    }
    if ((state_ == State::Connected || state_ == State::Challenged || state_ == State::Connecting) &&
        now_s - last_heard_ > cfg_.timeout_s) {
        if (state_ == State::Connected) {
            reason_ = "timed out";
            code_ = DisconnectCode::TimedOut;
        } else if (refusal_.empty()) {
            reason_ = "no answer from the server: it is not running, the address or port is wrong, or UDP to it is blocked";
            code_ = DisconnectCode::NoAnswer;
        } else {
            reason_ = "refused by the server: " + refusal_;
            code_ = refusal_code_;
        }
        state_ = State::Disconnected;
    }
}

void ClientSession::on_datagram(std::span<const uint8_t> bytes, double now_s) {
    ++stats_.datagrams_in;
    stats_.bytes_in += bytes.size();
    DecodeError err;
    if (opener_ && looks_sealed(bytes) && (state_ == State::Challenged || state_ == State::Connected)) {
        switch (opener_->open(bytes, opened_)) {
            case PacketOpener::Result::Ok: break;
            case PacketOpener::Result::Replayed: ++stats_.replayed; return;
            default: ++stats_.forged; return;
        }
        const std::optional<DecodedPacket> p = decode_packet(opened_, &err);
        if (!p) {
            ++stats_.malformed;
            return;
        }
        on_packet(*p, now_s, true);
        return;
    }
    const std::optional<DecodedPacket> p = decode_packet(bytes, &err);
    if (!p) {
        ++stats_.malformed;
        // In clear and unauthenticated, so only noted, like a refusal: reported if the handshake
        // then times out.
        if (err == DecodeError::UnknownVersion && (state_ == State::Connecting || state_ == State::Challenged)) {
            refusal_ = "it speaks another protocol version than this client (" + std::to_string(kProtocolVersion) + ")";
            refusal_code_ = DisconnectCode::VersionMismatch;
        }
        return;
    }
    on_packet(*p, now_s, false);
}

void ClientSession::on_packet(const DecodedPacket& p, double now_s, bool sealed) {
    if (token_ && !sealed && !admit_clear(p)) return;
    // A Challenge belongs to a handshake under way: one arriving later (late, duplicated or
    // spoofed) changes nothing, not even when the server was last heard.
    if (p.type == MessageType::Challenge && state_ != State::Connecting && state_ != State::Challenged) {
        ++stats_.unexpected;
        return;
    }
    if (!on_handshake(p, now_s)) return;
    last_heard_ = now_s;
    received_.on_received(p.sequence);
    if (p.type != MessageType::Snapshot) loss_.on_datagram(p.sequence);
    switch (p.type) {
        case MessageType::SkeletonDefs: on_skeleton_defs(p); break;
        case MessageType::Events: on_events(p); break;
        case MessageType::Snapshot: {
            const DecodedPacket::SnapshotView m = p.snapshot();
            if (on_snapshot(m, now_s)) count_snapshot(p.sequence, m.tick);
            else loss_.on_unused_snapshot(p.sequence);
            break;
        }
        case MessageType::Pong: on_pong(p, now_s); break;
        case MessageType::Disconnect: {
            const auto* d = p.message<wire::Disconnect>();
            reason_ = d->reason() ? d->reason()->str() : std::string("server disconnected");
            code_ = wire_code(d->code());
            state_ = State::Disconnected;
            break;
        }
        case MessageType::Accept: break;
        default: ++stats_.unexpected; break;
    }
    copy_loss_counts();
}

bool ClientSession::admit_clear(const DecodedPacket& p) {
    // Only the Challenge comes in clear. A clear Disconnect may be the server's refusal ("server
    // full", "connect token expired") or a spoof: noted, and the handshake goes on until it times
    // out (reporting it).
    if (p.type == MessageType::Disconnect && state_ != State::Connected) {
        const auto* d = p.message<wire::Disconnect>();
        refusal_ = d->reason() ? d->reason()->str() : std::string("refused");
        refusal_code_ = wire_code(d->code());
        return false;
    }
    if (p.type != MessageType::Challenge || (state_ != State::Connecting && state_ != State::Challenged)) {
        ++stats_.unauthenticated;
        return false;
    }
    return true;
}

bool ClientSession::challenge_verified(const wire::Challenge& c) const {
    if (!token_) return true;  // dev mode: nothing to check it with
    const std::span<const uint8_t> observed = c.observed() ? std::span<const uint8_t>(c.observed()->data(), c.observed()->size())
                                                           : std::span<const uint8_t>();
    return c.mac() && check_challenge_mac(token_->server_to_client, c.client_salt(), {c.cookie()->data(), c.cookie()->size()},
                                          {c.mac()->data(), c.mac()->size()}, observed);
}

bool ClientSession::on_handshake(const DecodedPacket& p, double now_s) {
    if (p.type == MessageType::Challenge && (state_ == State::Connecting || state_ == State::Challenged)) {
        const auto* c = p.message<wire::Challenge>();
        if (c->client_salt() != salt_) return false;  // not our handshake
        if (!challenge_verified(*c)) {
            // Made without the token's keys: whoever sees our link answered for the server. Its
            // cookie would only be refused; the real Challenge is on its way.
            ++stats_.challenges_forged;
            return false;
        }
        on_challenge(*c, now_s);
        return false;
    }
    if (p.type == MessageType::Accept && (state_ == State::Challenged || state_ == State::Connected)) {
        const auto* a = p.message<wire::Accept>();
        client_id_ = a->client_id();
        tick_hz_ = a->tick_hz();
        snapshot_hz_ = a->snapshot_hz();
        decoder_.set_tick_hz(tick_hz_);
        poses_.set_tick_hz(tick_hz_);
        state_ = State::Connected;
    }
    if (state_ == State::Connected) return true;
    if (p.type == MessageType::Disconnect && state_ != State::Idle && state_ != State::Disconnected) {
        on_refusal(p);
        return false;
    }
    if (p.type != MessageType::Accept) ++stats_.unexpected;
    return false;
}

void ClientSession::on_refusal(const DecodedPacket& p) {
    // Refused during the handshake (dev mode): "server full", "too many from your address".
    // "Session in use" (this client restarted and its old session has not timed out yet) passes:
    // the handshake goes on and gets in once it has.
    const auto* d = p.message<wire::Disconnect>();
    if (wire_code(d->code()) == DisconnectCode::SessionInUse) {
        refusal_ = d->reason() ? d->reason()->str() : std::string("session in use");
        refusal_code_ = DisconnectCode::SessionInUse;
        return;
    }
    reason_ = d->reason() ? d->reason()->str() : std::string("refused");
    code_ = wire_code(d->code());
    state_ = State::Disconnected;
}

void ClientSession::on_skeleton_defs(const DecodedPacket& p) {
    const auto* m = p.message<wire::SkeletonDefs>();
    reliable_to_ack_.push_back(m->message_id());
    if (!reliable_seen_.insert(m->message_id()).second) return;  // a resend of what we have
    if (m->refs())
        for (const wire::SkeletonRef* r : *m->refs()) on_skeleton_ref(*r);
    const net::SkeletonAssembler::HeldSkeletons held = [this](uint16_t id) -> const Skeleton* {
        const auto it = skeletons_.find(id);
        return it == skeletons_.end() ? nullptr : &it->second.skeleton;
    };
    if (m->defs())
        for (const wire::SkeletonDef* d : *m->defs()) {
            std::string why;
            if (!assembler_.add(*d, &why, held)) skeleton_error(why);
        }
    take_completed_skeletons(held);
    if (m->characters())
        for (const wire::CharacterInfo* c : *m->characters()) {
            auto [it, added] = character_skeleton_.try_emplace(c->character_id(), c->skeleton_id());
            if (!added && it->second != c->skeleton_id()) parts_seen_.erase(c->character_id());
            it->second = c->skeleton_id();
            character_names_[c->character_id()] = c->name() ? c->name()->str() : std::string();
        }
}

// Skeletons whose every joint arrived; each may be the base other parts wait for.
void ClientSession::take_completed_skeletons(const net::SkeletonAssembler::HeldSkeletons& held) {
    for (bool more = true; more;) {
        std::vector<std::string> errors;
        assembler_.resolve(held, &errors);
        for (const std::string& why : errors) skeleton_error(why);
        more = false;
        for (uint16_t id : assembler_.completed()) {
            std::string why;
            if (auto s = assembler_.take(id, &why)) {
                ++stats_.skeletons_in_full;
                new_skeletons_.push_back(*s);
                add_skeleton(std::move(*s));
                more = true;
            } else {
                skeleton_error(why);
            }
        }
    }
}

void ClientSession::on_skeleton_ref(const wire::SkeletonRef& r) {
    SkeletonHash h{};
    std::copy_n(r.hash()->data(), h.size(), h.begin());  // 32 bytes (decode_packet)
    const auto end = known_.begin() + std::ptrdiff_t(offered_);
    const auto it = std::find_if(known_.begin(), end, [&](const KnownSkeleton& k) { return k.hash == h; });
    if (it == end) {
        skeleton_error("skeleton " + std::to_string(r.skeleton_id()) + ": referred to by hash " + to_hex(h).substr(0, 16) +
                       "..., which this client did not offer");
        return;
    }
    ++stats_.skeletons_by_reference;
    used_skeletons_.push_back(h);
    add_skeleton({r.skeleton_id(), r.name() ? r.name()->str() : std::string(), it->skeleton, it->metres_per_unit});
}

void ClientSession::add_skeleton(ReceivedSkeleton s) {
    precisions_[s.skeleton_id] = plan_precision(s.skeleton, s.metres_per_unit);
    skeletons_[s.skeleton_id] = std::move(s);
}

void ClientSession::skeleton_error(const std::string& why) {
    if (stats_.skeleton_errors++ == 0) first_skeleton_error_ = why;
}

void ClientSession::on_events(const DecodedPacket& p) {
    const auto* m = p.message<wire::Events>();
    reliable_to_ack_.push_back(m->message_id());
    if (!reliable_seen_.insert(m->message_id()).second) return;
    if (m->events())
        for (const wire::Event* e : *m->events()) {
            events_.push_back({e->character_id(), e->epoch(), e->kind(), e->tick()});
            if (e->kind() == wire::EventKind::Removed) {
                poses_.forget(e->character_id());
                character_skeleton_.erase(e->character_id());
                parts_seen_.erase(e->character_id());
                character_names_.erase(e->character_id());
            }
        }
}

// Received, lost and late datagrams and snapshot ticks (see LossCounter).
void ClientSession::count_snapshot(uint16_t sequence, uint32_t tick) {
    const uint32_t step = uint32_t(std::max(1L, std::lround(double(tick_hz_) / double(std::max(1.0f, snapshot_hz_)))));
    loss_.on_snapshot(sequence, tick, step);
    if (!any_tick_ || tick > newest_tick_) newest_tick_ = tick;
    any_tick_ = true;
}

void ClientSession::copy_loss_counts() {
    const LossCounts& c = loss_.counts();
    stats_.datagrams_lost = c.datagrams_lost;
    stats_.datagrams_late = c.datagrams_late;
    stats_.snapshots_received = c.snapshots_received;
    stats_.snapshots_lost = c.snapshots_lost;
    stats_.snapshots_late = c.snapshots_late;
}

void ClientSession::on_pong(const DecodedPacket& p, double now_s) {
    const auto* m = p.message<wire::Pong>();
    const double sent = double(m->client_time_us()) * 1e-6;
    // The network's round trip: without the time the server held our Ping (as the server's own
    // measure leaves out how long we hold its Pong).
    const double held = double(m->held_us()) * 1e-6;
    const double rtt = now_s - sent - held;
    if (rtt < 0 || rtt > 10 || !(held >= 0 && held < 10)) return;
    if (m->server_clock_us() != 0) {
        pong_server_clock_us_ = m->server_clock_us();
        pong_arrived_s_ = now_s;
    }
    rtt_ms_ = net::smoothed_rtt_ms(rtt_ms_, rtt);
    if (m->rate_bps() != 0) stats_.server_rate_bps = double(m->rate_bps());
    // The server answered at our sent + rtt / 2 + held (clock_filter.h: which answers to trust).
    clock_.add(now_s, rtt, double(m->server_time_us()) * 1e-6 - (sent + 0.5 * rtt + held));
}

double ClientSession::server_tick_at(double now_s) const {
    if (clock_.valid()) return (now_s + clock_.offset_s()) * double(tick_hz_);
    return double(newest_tick_);
}

std::vector<std::vector<uint8_t>> ClientSession::take_outgoing() { return std::exchange(outgoing_, {}); }
// Decodes a snapshot datagram: its entries are applied one by one; a refused one asks the server
// for a full update of that character's part. False when its framing is unreadable (then it is
// not acknowledged at all).
bool ClientSession::on_snapshot(const DecodedPacket::SnapshotView& m, double now_s) {
    ++stats_.snapshot_datagrams;
    std::vector<DecodedCharacter> out;
    std::vector<RefusedCharacter> refused;
    const SnapshotError e = decoder_.decode(
        m.tick, m.data, [this](uint16_t id) { return skeleton_of(id); }, [this](uint16_t s) { return precision(s); }, out,
        &refused);
    if (is_framing_error(e)) {
        ++stats_.snapshot_errors;
        received_ = {};  // not acknowledged: the server will not use these states as baselines
        return false;
    }
    // A character whose skeleton has not arrived yet: its snapshots travel right behind the
    // definition and become baselines only once the definition is acknowledged, so a resync would
    // not help (and would spend the allowance real losses need).
    stats_.entries_early += size_t(std::erase_if(refused, [](const RefusedCharacter& r) { return r.error == SnapshotError::UnknownCharacter; }));
    stats_.entries_refused += refused.size();
    for (const ResyncRequest& r : resyncs_.requests(refused, m.tick, now_s)) {
        ++stats_.resyncs_sent;
        send([&](const PacketHeader& h) { return build_resync(h, r.character, r.first_joint, r.tick); });
    }
    stats_.resyncs_held = resyncs_.suppressed();
    poses_.begin_datagram(m.tick, m.part, m.part_count);
    for (const DecodedCharacter& d : out) {
        received_states_.push_back({d.id, m.tick, d.state, d.full, d.joints});
        parts_seen_[d.id].insert(d.joints.first);
        const int sk = skeleton_of(d.id);
        poses_.add(d.id, m.tick, *d.state, d.joints, skeletons_.at(uint16_t(sk)).skeleton, precisions_.at(uint16_t(sk)));
    }
    poses_.end_datagram(m.tick);
    stats_.poses_dropped += poses_.take_dropped();
    stats_.characters_decoded += out.size();
    return true;
}

std::vector<SnapshotAssembler::Ready> ClientSession::take_poses() { return poses_.take_ready(); }

std::vector<ReceivedCharacterState> ClientSession::take_received() { return std::exchange(received_states_, {}); }
std::vector<net::EventInfo> ClientSession::take_events() { return std::exchange(events_, {}); }

bool ClientSession::skeletons_ready() const {
    if (character_skeleton_.empty()) return false;
    for (const auto& [c, s] : character_skeleton_)
        if (!skeletons_.count(s)) return false;
    return true;
}

int ClientSession::skeleton_of(uint16_t character) const {
    const auto it = character_skeleton_.find(character);
    return it == character_skeleton_.end() || !skeletons_.count(it->second) ? -1 : int(it->second);
}

const net::ReceivedSkeleton* ClientSession::skeleton(uint16_t id) const {
    const auto it = skeletons_.find(id);
    return it == skeletons_.end() ? nullptr : &it->second;
}

const SkeletonPrecision* ClientSession::precision(uint16_t skeleton) const {
    const auto it = precisions_.find(skeleton);
    return it == precisions_.end() ? nullptr : &it->second;
}

std::string ClientSession::character_name(uint16_t character) const {
    const auto it = character_names_.find(character);
    return it == character_names_.end() ? std::string() : it->second;
}

std::vector<uint16_t> ClientSession::characters() const {
    std::vector<uint16_t> out;
    for (const auto& [c, s] : character_skeleton_) out.push_back(c);
    return out;
}

std::vector<ClientSession::Arriving> ClientSession::arriving() const {
    std::vector<Arriving> out;
    for (const auto& [c, s] : character_skeleton_) {
        const auto sk = skeletons_.find(s);
        const auto seen = parts_seen_.find(c);
        Arriving a{c, sk != skeletons_.end(), 0, 1};
        if (a.skeleton) {
            const uint32_t joints = uint32_t(sk->second.skeleton.size());
            a.parts = part_count(joints);
            // The decoder accepts only planned parts, so each first joint seen is one part.
            if (seen != parts_seen_.end()) a.parts_received = std::min<uint32_t>(uint32_t(seen->second.size()), a.parts);
        }
        if (!a.skeleton || a.parts_received < a.parts) out.push_back(a);
    }
    return out;
}

}  // namespace ks
