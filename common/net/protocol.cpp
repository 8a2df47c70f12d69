#include "common/net/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ks::net {

namespace fb = ::flatbuffers;

static_assert(sizeof(wire::PacketHeader) == 16);
static_assert(sizeof(wire::Vec3) == sizeof(vec3));
static_assert(sizeof(wire::Event) == 12);

namespace {

constexpr size_t kMaxDefsPerPacket = 32;
constexpr size_t kMaxCharactersPerPacket = 128;

// One builder per thread, reused: building a packet allocates only the returned vector (and
// the temporary offset lists of skeleton definitions).
fb::FlatBufferBuilder& builder() {
    thread_local fb::FlatBufferBuilder fbb(2 * kMaxDatagram);
    fbb.Clear();
    return fbb;
}

template <class T>
size_t finish(fb::FlatBufferBuilder& fbb, const PacketHeader& h, fb::Offset<T> body) {
    const wire::PacketHeader header(kProtocolId, kProtocolVersion, h.sequence, h.ack, 0, h.ack_bits);
    fbb.Finish(wire::CreatePacket(fbb, &header, wire::MessageTraits<T>::enum_value, body.Union()));
    return fbb.GetSize();
}

std::vector<uint8_t> take(fb::FlatBufferBuilder& fbb, const char* what) {
    if (fbb.GetSize() > kMaxDatagram)
        throw std::invalid_argument(std::string(what) + ": packet of " + std::to_string(fbb.GetSize()) +
                                    " bytes exceeds the " + std::to_string(kMaxDatagram) + "-byte datagram limit");
    const uint8_t* p = fbb.GetBufferPointer();
    return std::vector<uint8_t>(p, p + fbb.GetSize());
}

void check_name(std::string_view s, size_t limit, const char* what) {
    if (s.size() > limit)
        throw std::invalid_argument(std::string(what) + " '" + std::string(s.substr(0, 16)) + "...' is longer than " +
                                    std::to_string(limit) + " bytes");
}

const uint8_t* zeros() {
    static const std::array<uint8_t, kMaxDatagram> z{};
    return z.data();
}

// A ConnectRequest or ChallengeResponse with `padding` zero bytes; returns the datagram size.
struct PaddedBuild {
    fb::FlatBufferBuilder* fbb;
    const PacketHeader* h;
    uint64_t salt;
    const Cookie* cookie;  // null: ConnectRequest
    size_t operator()(size_t padding) const {
        fbb->Clear();
        const auto pad = fbb->CreateVector(zeros(), padding);
        if (!cookie) return finish(*fbb, *h, wire::CreateConnectRequest(*fbb, salt, pad));
        const auto c = fbb->CreateVector(cookie->data(), cookie->size());
        return finish(*fbb, *h, wire::CreateChallengeResponse(*fbb, salt, c, pad));
    }
};

// Builds a padded handshake packet whose size is exactly kMinConnectRequestBytes: the largest
// padding that keeps the datagram within the target (sizes are multiples of the buffer's 8-byte
// alignment, as is the target, so the largest fitting padding hits it exactly).
std::vector<uint8_t> build_padded(const PaddedBuild& build, const char* what) {
    size_t lo = 0, hi = kMinConnectRequestBytes;  // padding lengths; build(lo) must fit
    if (build(lo) > kMinConnectRequestBytes) throw std::logic_error(std::string(what) + ": unpadded packet too large");
    while (lo < hi) {  // largest padding with size <= target
        const size_t mid = (lo + hi + 1) / 2;
        if (build(mid) <= kMinConnectRequestBytes) lo = mid;
        else hi = mid - 1;
    }
    fb::FlatBufferBuilder& fbb = *build.fbb;
    const size_t size = build(lo);
    if (size < kMinConnectRequestBytes) throw std::logic_error(std::string(what) + ": cannot pad to the minimum size");
    return take(fbb, what);
}

// ---- Skeleton definitions ----

bool finite(const wire::Vec3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }

// The semantic limits of one SkeletonDef (a whole skeleton or a part).
DecodeError check_skeleton_def(const wire::SkeletonDef& d, std::string* why) {
    auto fail = [&](DecodeError e, const std::string& w) {
        if (why) *why = "skeleton " + std::to_string(d.skeleton_id()) + ": " + w;
        return e;
    };
    if (d.name() && d.name()->size() > kMaxNameBytes) return fail(DecodeError::StringTooLong, "name too long");
    const int count = d.joint_count();
    if (count > kMaxJoints) return fail(DecodeError::TooManyJoints, std::to_string(count) + " joints");
    if (count < 1) return fail(DecodeError::BadSkeleton, "no joints");
    const auto* names = d.joint_names();
    const auto* parents = d.parents();
    const auto* offsets = d.offsets();
    if (!names || !parents || !offsets) return fail(DecodeError::BadSkeleton, "joint arrays missing");
    const size_t n = parents->size();
    if (names->size() != n || offsets->size() != n)
        return fail(DecodeError::BadSkeleton, "joint arrays of different lengths");
    if (n < 1) return fail(DecodeError::BadSkeleton, "a part without joints");
    const int first = d.first_joint();
    if (size_t(first) + n > size_t(count))
        return fail(DecodeError::BadSkeleton, "joints " + std::to_string(first) + ".." + std::to_string(first + int(n) - 1) +
                                                  " beyond joint_count " + std::to_string(count));
    if (!(std::isfinite(d.metres_per_unit()) && d.metres_per_unit() > 0.0f))
        return fail(DecodeError::BadSkeleton, "metres_per_unit not finite and positive");
    for (size_t i = 0; i < n; ++i) {
        const int joint = first + int(i);
        if (names->Get(fb::uoffset_t(i))->size() > kMaxNameBytes)
            return fail(DecodeError::StringTooLong, "joint " + std::to_string(joint) + " name too long");
        const int parent = parents->Get(fb::uoffset_t(i));
        if (parent < -1 || parent >= joint)
            return fail(DecodeError::BadSkeleton, "joint " + std::to_string(joint) + " has parent " + std::to_string(parent) +
                                                      ", which is not before it");
        if (!finite(*offsets->Get(fb::uoffset_t(i))))
            return fail(DecodeError::BadSkeleton, "joint " + std::to_string(joint) + " offset not finite");
    }
    return DecodeError::None;
}

void check_def_input(const SkeletonDefInput& d) {
    if (!d.skeleton) throw std::invalid_argument("build_skeleton_defs: skeleton is null");
    const Skeleton& s = *d.skeleton;
    if (std::string err = s.validate(); !err.empty()) throw std::invalid_argument("build_skeleton_defs: " + err);
    if (s.size() < 1 || s.size() > kMaxJoints)
        throw std::invalid_argument("build_skeleton_defs: skeleton has " + std::to_string(s.size()) + " joints (1.." +
                                    std::to_string(kMaxJoints) + ")");
    const int count = d.joint_count < 0 ? s.size() - d.first_joint : d.joint_count;
    if (d.first_joint < 0 || count < 1 || d.first_joint + count > s.size())
        throw std::invalid_argument("build_skeleton_defs: joint run " + std::to_string(d.first_joint) + " + " +
                                    std::to_string(count) + " outside the skeleton's " + std::to_string(s.size()) +
                                    " joints");
    if (!(std::isfinite(d.metres_per_unit) && d.metres_per_unit > 0.0f))
        throw std::invalid_argument("build_skeleton_defs: metres_per_unit must be finite and positive");
    check_name(d.name, kMaxNameBytes, "skeleton name");
    for (int j = d.first_joint; j < d.first_joint + count; ++j) {
        check_name(s.names[size_t(j)], kMaxNameBytes, "joint name");
        if (!isfinite(s.offsets[size_t(j)])) throw std::invalid_argument("build_skeleton_defs: offset not finite");
    }
}

size_t build_skeleton_defs_into(fb::FlatBufferBuilder& fbb, const PacketHeader& h, uint32_t message_id,
                                std::span<const SkeletonDefInput> defs, std::span<const CharacterInfoInput> characters) {
    if (defs.size() > kMaxDefsPerPacket || characters.size() > kMaxCharactersPerPacket)
        throw std::invalid_argument("build_skeleton_defs: more than " + std::to_string(kMaxDefsPerPacket) +
                                    " definitions or " + std::to_string(kMaxCharactersPerPacket) +
                                    " characters in one packet");
    std::vector<fb::Offset<wire::SkeletonDef>> def_offsets;
    std::vector<fb::Offset<fb::String>> names;
    std::vector<int16_t> parents;
    std::vector<wire::Vec3> offsets;
    for (const SkeletonDefInput& d : defs) {
        check_def_input(d);
        const Skeleton& s = *d.skeleton;
        const int count = d.joint_count < 0 ? s.size() - d.first_joint : d.joint_count;
        names.clear();
        parents.clear();
        offsets.clear();
        for (int j = d.first_joint; j < d.first_joint + count; ++j) {
            names.push_back(fbb.CreateString(s.names[size_t(j)]));
            parents.push_back(int16_t(s.parents[size_t(j)]));
            const vec3 o = s.offsets[size_t(j)];
            offsets.emplace_back(o.x, o.y, o.z);
        }
        const auto name = fbb.CreateString(d.name.data(), d.name.size());
        const auto name_vec = fbb.CreateVector(names);
        const auto parent_vec = fbb.CreateVector(parents);
        const auto offset_vec = fbb.CreateVectorOfStructs(offsets);
        def_offsets.push_back(wire::CreateSkeletonDef(fbb, d.skeleton_id, name, uint16_t(s.size()),
                                                      uint16_t(d.first_joint), name_vec, parent_vec, offset_vec,
                                                      d.metres_per_unit));
    }
    std::vector<fb::Offset<wire::CharacterInfo>> chars;
    for (const CharacterInfoInput& c : characters) {
        check_name(c.name, kMaxNameBytes, "character name");
        chars.push_back(wire::CreateCharacterInfo(fbb, c.character_id, c.skeleton_id,
                                                  fbb.CreateString(c.name.data(), c.name.size())));
    }
    const auto defs_vec = def_offsets.empty() ? 0 : fbb.CreateVector(def_offsets);
    const auto chars_vec = chars.empty() ? 0 : fbb.CreateVector(chars);
    return finish(fbb, h, wire::CreateSkeletonDefs(fbb, message_id, defs_vec, chars_vec));
}

}  // namespace

const char* message_type_name(MessageType t) {
    const char* n = wire::EnumNameMessage(t);
    return (n && *n) ? n : "unknown";
}

const char* decode_error_name(DecodeError e) {
    switch (e) {
        case DecodeError::None: return "none";
        case DecodeError::TooShort: return "too short";
        case DecodeError::TooLong: return "too long";
        case DecodeError::VerifyFailed: return "flatbuffer verification failed";
        case DecodeError::MissingHeader: return "missing header";
        case DecodeError::WrongProtocol: return "wrong protocol id";
        case DecodeError::UnknownVersion: return "unknown version";
        case DecodeError::MissingBody: return "missing message body";
        case DecodeError::UnknownMessage: return "unknown message type";
        case DecodeError::RequestTooSmall: return "connect request too small";
        case DecodeError::BadCookie: return "bad cookie";
        case DecodeError::StringTooLong: return "string too long";
        case DecodeError::TooManyElements: return "too many elements";
        case DecodeError::TooManyJoints: return "too many joints";
        case DecodeError::BadSkeleton: return "bad skeleton";
        case DecodeError::BadValue: return "bad value";
        case DecodeError::Count: break;
    }
    return "unknown error";
}

// ---- Builders ----

std::vector<uint8_t> build_connect_request(const PacketHeader& h, uint64_t client_salt) {
    return build_padded(PaddedBuild{&builder(), &h, client_salt, nullptr}, "build_connect_request");
}

std::vector<uint8_t> build_challenge(const PacketHeader& h, uint64_t client_salt, const Cookie& cookie) {
    auto& fbb = builder();
    const auto c = fbb.CreateVector(cookie.data(), cookie.size());
    finish(fbb, h, wire::CreateChallenge(fbb, client_salt, c));
    return take(fbb, "build_challenge");
}

std::vector<uint8_t> build_challenge_response(const PacketHeader& h, uint64_t client_salt, const Cookie& cookie) {
    return build_padded(PaddedBuild{&builder(), &h, client_salt, &cookie}, "build_challenge_response");
}

std::vector<uint8_t> build_accept(const PacketHeader& h, const AcceptInfo& a) {
    auto& fbb = builder();
    finish(fbb, h,
           wire::CreateAccept(fbb, a.client_id, a.tick_hz, a.snapshot_hz, a.server_tick, a.server_time_us));
    return take(fbb, "build_accept");
}

std::vector<uint8_t> build_skeleton_defs(const PacketHeader& h, uint32_t message_id,
                                         std::span<const SkeletonDefInput> defs,
                                         std::span<const CharacterInfoInput> characters) {
    auto& fbb = builder();
    build_skeleton_defs_into(fbb, h, message_id, defs, characters);
    return take(fbb, "build_skeleton_defs");
}

std::vector<uint8_t> build_snapshot(const PacketHeader& h, uint32_t tick, uint8_t part, uint8_t part_count,
                                    std::span<const uint8_t> data) {
    if (part_count < 1 || part >= part_count)
        throw std::invalid_argument("build_snapshot: part " + std::to_string(part) + " of " + std::to_string(part_count));
    if (data.size() > kMaxDatagram)
        throw std::invalid_argument("build_snapshot: " + std::to_string(data.size()) + " data bytes do not fit a datagram");
    auto& fbb = builder();
    const auto d = fbb.CreateVector(data.data(), data.size());
    finish(fbb, h, wire::CreateSnapshot(fbb, tick, part, part_count, d));
    return take(fbb, "build_snapshot");
}

size_t max_snapshot_data_bytes() {
    static const size_t n = [] {
        // Every field non-default (largest encoding); sizes grow with the data length.
        const PacketHeader h{0xFFFF, 0xFFFF, 0xFFFFFFFFu};
        size_t lo = 0, hi = kMaxDatagram;
        while (lo < hi) {
            const size_t mid = (lo + hi + 1) / 2;
            auto& fbb = builder();
            const auto d = fbb.CreateVector(zeros(), mid);
            if (finish(fbb, h, wire::CreateSnapshot(fbb, 0xFFFFFFFFu, 254, 255, d)) <= kMaxDatagram) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }();
    return n;
}

std::vector<uint8_t> build_ack(const PacketHeader& h, uint32_t snapshot_tick, std::span<const uint32_t> reliable_ids) {
    if (reliable_ids.size() > kMaxAckIds)
        throw std::invalid_argument("build_ack: more than " + std::to_string(kMaxAckIds) + " reliable ids");
    auto& fbb = builder();
    const auto ids = reliable_ids.empty() ? 0 : fbb.CreateVector(reliable_ids.data(), reliable_ids.size());
    finish(fbb, h, wire::CreateAck(fbb, snapshot_tick, ids));
    return take(fbb, "build_ack");
}

std::vector<uint8_t> build_ping(const PacketHeader& h, uint64_t client_time_us, uint32_t ping_id) {
    auto& fbb = builder();
    finish(fbb, h, wire::CreatePing(fbb, client_time_us, ping_id));
    return take(fbb, "build_ping");
}

std::vector<uint8_t> build_pong(const PacketHeader& h, uint64_t client_time_us, uint32_t ping_id,
                                uint64_t server_time_us, uint32_t server_tick) {
    auto& fbb = builder();
    finish(fbb, h, wire::CreatePong(fbb, client_time_us, ping_id, server_time_us, server_tick));
    return take(fbb, "build_pong");
}

std::vector<uint8_t> build_disconnect(const PacketHeader& h, std::string_view reason) {
    check_name(reason, kMaxReasonBytes, "disconnect reason");
    auto& fbb = builder();
    const auto r = fbb.CreateString(reason.data(), reason.size());
    finish(fbb, h, wire::CreateDisconnect(fbb, r));
    return take(fbb, "build_disconnect");
}

std::vector<uint8_t> build_events(const PacketHeader& h, uint32_t message_id, std::span<const EventInfo> events) {
    if (events.size() > kMaxEvents)
        throw std::invalid_argument("build_events: more than " + std::to_string(kMaxEvents) + " events");
    auto& fbb = builder();
    wire::Event* out = nullptr;
    const auto vec = fbb.CreateUninitializedVectorOfStructs(events.size(), &out);
    for (const EventInfo& e : events) *out++ = wire::Event(e.character_id, e.epoch, e.kind, e.tick);
    finish(fbb, h, wire::CreateEvents(fbb, message_id, vec));
    return take(fbb, "build_events");
}

std::vector<SkeletonDefsPlan> plan_skeleton_defs(std::span<const SkeletonDefInput> skeletons,
                                                 std::span<const CharacterInfoInput> characters, size_t max_bytes) {
    max_bytes = std::min(max_bytes, kMaxDatagram);
    const PacketHeader worst{0xFFFF, 0xFFFF, 0xFFFFFFFFu};
    auto fits = [&](const SkeletonDefsPlan& p) {
        if (p.defs.size() > kMaxDefsPerPacket || p.characters.size() > kMaxCharactersPerPacket) return false;
        return build_skeleton_defs_into(builder(), worst, 0xFFFFFFFFu, p.defs, p.characters) <= max_bytes;
    };
    std::vector<SkeletonDefsPlan> plans;
    SkeletonDefsPlan cur;
    auto flush = [&] {
        if (!cur.defs.empty() || !cur.characters.empty()) plans.push_back(std::move(cur));
        cur = {};
    };
    for (const SkeletonDefInput& in : skeletons) {
        check_def_input(in);
        const int end = in.joint_count < 0 ? in.skeleton->size() : in.first_joint + in.joint_count;
        int j = in.first_joint;
        while (j < end) {
            SkeletonDefInput part = in;
            part.first_joint = j;
            part.joint_count = end - j;
            cur.defs.push_back(part);
            if (fits(cur)) {
                j = end;
                break;
            }
            // Largest run [j, j + k) that still fits next to what the packet already holds.
            int lo = 0, hi = end - j - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                cur.defs.back().joint_count = mid;
                if (fits(cur)) lo = mid;
                else hi = mid - 1;
            }
            if (lo == 0) {
                cur.defs.pop_back();
                if (cur.defs.empty() && cur.characters.empty())
                    throw std::invalid_argument("plan_skeleton_defs: one joint does not fit " + std::to_string(max_bytes) +
                                                " bytes");
                flush();
                continue;
            }
            cur.defs.back().joint_count = lo;
            j += lo;
            flush();
        }
    }
    for (const CharacterInfoInput& c : characters) {
        cur.characters.push_back(c);
        if (fits(cur)) continue;
        cur.characters.pop_back();
        flush();
        cur.characters.push_back(c);
        if (!fits(cur)) throw std::invalid_argument("plan_skeleton_defs: one character does not fit the packet");
    }
    flush();
    return plans;
}

// ---- Decoding ----

namespace {

DecodeError check_message(const wire::Packet& p, size_t size) {
    switch (p.message_type()) {
        case MessageType::ConnectRequest:
            return size < kMinConnectRequestBytes ? DecodeError::RequestTooSmall : DecodeError::None;
        case MessageType::Challenge: {
            const auto* m = p.message_as_Challenge();
            if (!m->cookie() || m->cookie()->size() != kCookieBytes) return DecodeError::BadCookie;
            return DecodeError::None;
        }
        case MessageType::ChallengeResponse: {
            const auto* m = p.message_as_ChallengeResponse();
            if (size < kMinConnectRequestBytes) return DecodeError::RequestTooSmall;
            if (!m->cookie() || m->cookie()->size() != kCookieBytes) return DecodeError::BadCookie;
            return DecodeError::None;
        }
        case MessageType::Accept: {
            const auto* m = p.message_as_Accept();
            if (m->client_id() == 0 || m->tick_hz() == 0 || m->snapshot_hz() == 0) return DecodeError::BadValue;
            return DecodeError::None;
        }
        case MessageType::SkeletonDefs: {
            const auto* m = p.message_as_SkeletonDefs();
            if ((m->defs() && m->defs()->size() > kMaxDefsPerPacket) ||
                (m->characters() && m->characters()->size() > kMaxCharactersPerPacket))
                return DecodeError::TooManyElements;
            if (m->defs())
                for (const wire::SkeletonDef* d : *m->defs())
                    if (DecodeError e = check_skeleton_def(*d, nullptr); e != DecodeError::None) return e;
            if (m->characters())
                for (const wire::CharacterInfo* c : *m->characters())
                    if (c->name() && c->name()->size() > kMaxNameBytes) return DecodeError::StringTooLong;
            return DecodeError::None;
        }
        case MessageType::Snapshot: {
            const auto* m = p.message_as_Snapshot();
            if (m->part_count() < 1 || m->part() >= m->part_count()) return DecodeError::BadValue;
            return DecodeError::None;
        }
        case MessageType::Ack: {
            const auto* m = p.message_as_Ack();
            if (m->reliable_ids() && m->reliable_ids()->size() > kMaxAckIds) return DecodeError::TooManyElements;
            return DecodeError::None;
        }
        case MessageType::Ping:
        case MessageType::Pong: return DecodeError::None;
        case MessageType::Disconnect: {
            const auto* m = p.message_as_Disconnect();
            if (m->reason() && m->reason()->size() > kMaxReasonBytes) return DecodeError::StringTooLong;
            return DecodeError::None;
        }
        case MessageType::Events: {
            const auto* m = p.message_as_Events();
            if (!m->events()) return DecodeError::None;
            if (m->events()->size() > kMaxEvents) return DecodeError::TooManyElements;
            for (const wire::Event* e : *m->events())
                if (uint8_t(e->kind()) > uint8_t(wire::EventKind::MAX)) return DecodeError::BadValue;
            return DecodeError::None;
        }
        case MessageType::NONE: break;
    }
    return DecodeError::UnknownMessage;  // not reached: the caller checked the type
}

}  // namespace

std::optional<DecodedPacket> decode_packet(std::span<const uint8_t> bytes, DecodeError* err) {
    auto fail = [&](DecodeError e) -> std::optional<DecodedPacket> {
        if (err) *err = e;
        return std::nullopt;
    };
    if (bytes.size() < kMinPacketBytes) return fail(DecodeError::TooShort);
    if (bytes.size() > kMaxDatagram) return fail(DecodeError::TooLong);

    std::optional<DecodedPacket> out(std::in_place);
    DecodedPacket& d = *out;
    std::memcpy(d.storage.data(), bytes.data(), bytes.size());
    d.size = bytes.size();

    fb::Verifier::Options opts;
    opts.max_depth = kVerifierMaxDepth;
    opts.max_tables = kVerifierMaxTables;
    opts.check_alignment = true;
    opts.check_nested_flatbuffers = false;
    fb::Verifier verifier(d.storage.data(), d.size, opts);
    if (!wire::VerifyPacketBuffer(verifier)) return fail(DecodeError::VerifyFailed);

    const wire::Packet* p = d.packet();
    const wire::PacketHeader* h = p->header();
    if (!h) return fail(DecodeError::MissingHeader);
    if (h->protocol_id() != kProtocolId) return fail(DecodeError::WrongProtocol);
    if (h->version() != kProtocolVersion) return fail(DecodeError::UnknownVersion);
    const MessageType type = p->message_type();
    if (uint8_t(type) > uint8_t(MessageType::MAX)) return fail(DecodeError::UnknownMessage);
    if (type == MessageType::NONE || !p->message()) return fail(DecodeError::MissingBody);
    if (DecodeError e = check_message(*p, d.size); e != DecodeError::None) return fail(e);

    d.sequence = h->sequence();
    d.ack = h->ack();
    d.ack_bits = h->ack_bits();
    d.type = type;
    if (err) *err = DecodeError::None;
    return out;
}

// ---- Acks ----

bool AckTracker::on_received(uint16_t sequence) {
    if (bits_ == 0) {
        ack_ = sequence;
        bits_ = 1;
        return true;
    }
    const int d = sequence_difference(sequence, ack_);
    if (d > 0) {
        bits_ = d >= 32 ? 1u : (bits_ << d) | 1u;
        ack_ = sequence;
        return true;
    }
    const int age = -d;  // 0: duplicate of ack itself
    if (age >= 32) return false;
    const uint32_t bit = 1u << age;
    if (bits_ & bit) return false;
    bits_ |= bit;
    return true;
}

void SentPacketLog::on_sent(uint16_t sequence, uint64_t tag) {
    Entry& e = entries_[sequence % kWindow];
    e.sequence = sequence;
    e.used = true;
    e.acked = false;
    e.tag = tag;
    if (!any_sent_ || sequence_greater_than(sequence, newest_)) newest_ = sequence;
    any_sent_ = true;
}

size_t SentPacketLog::on_ack(uint16_t ack, uint32_t ack_bits, std::vector<Acked>& out) {
    if (!any_sent_) return 0;
    size_t n = 0;
    for (int i = 31; i >= 0; --i) {
        if (!(ack_bits & (1u << i))) continue;
        const uint16_t s = uint16_t(ack - i);
        const int age = sequence_difference(newest_, s);
        if (age < 0 || age >= int(kWindow)) continue;  // not sent yet, or forgotten
        Entry& e = entries_[s % kWindow];
        if (!e.used || e.sequence != s || e.acked) continue;
        e.acked = true;
        out.push_back({s, e.tag});
        ++n;
    }
    return n;
}

bool SentPacketLog::acked(uint16_t sequence) const {
    const Entry& e = entries_[sequence % kWindow];
    const int age = sequence_difference(newest_, sequence);
    return any_sent_ && age >= 0 && age < int(kWindow) && e.used && e.sequence == sequence && e.acked;
}

std::optional<uint64_t> SentPacketLog::tag(uint16_t sequence) const {
    const Entry& e = entries_[sequence % kWindow];
    const int age = sequence_difference(newest_, sequence);
    if (!any_sent_ || age < 0 || age >= int(kWindow) || !e.used || e.sequence != sequence) return std::nullopt;
    return e.tag;
}

// ---- Skeletons ----

bool SkeletonAssembler::add(const wire::SkeletonDef& part, std::string* error) {
    auto fail = [&](const std::string& w) {
        if (error) *error = w;
        return false;
    };
    std::string why;
    if (check_skeleton_def(part, &why) != DecodeError::None) return fail(why);
    const uint16_t id = part.skeleton_id();
    const int count = part.joint_count();
    const float mpu = part.metres_per_unit();
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == id; });
    if (it == parts_.end()) {
        if (parts_.size() >= kMaxInProgress)
            return fail("skeleton " + std::to_string(id) + ": too many skeletons being assembled");
    } else if (it->s.skeleton.size() != count || it->s.metres_per_unit != mpu) {
        return fail("skeleton " + std::to_string(id) + ": part disagrees with earlier parts on joint count or units");
    }
    const int first = part.first_joint();
    const auto& names = *part.joint_names();
    const auto& parents = *part.parents();
    const auto& offsets = *part.offsets();
    const int n = int(parents.size());
    if (it != parts_.end()) {  // joints already received must be identical
        for (int i = 0; i < n; ++i) {
            const size_t j = size_t(first + i);
            if (!it->have[j]) continue;
            const wire::Vec3& o = *offsets.Get(fb::uoffset_t(i));
            const vec3 oj = it->s.skeleton.offsets[j];
            if (it->s.skeleton.names[j] != names.Get(fb::uoffset_t(i))->string_view() ||
                it->s.skeleton.parents[j] != parents.Get(fb::uoffset_t(i)) || oj.x != o.x() || oj.y != o.y() ||
                oj.z != o.z())
                return fail("skeleton " + std::to_string(id) + ": joint " + std::to_string(j) +
                            " differs from an earlier part");
        }
    } else {
        Partial p;
        p.s.skeleton_id = id;
        p.s.metres_per_unit = mpu;
        p.s.skeleton.names.assign(size_t(count), {});
        p.s.skeleton.parents.assign(size_t(count), -1);
        p.s.skeleton.offsets.assign(size_t(count), vec3{});
        p.have.assign(size_t(count), 0);
        p.missing = count;
        parts_.push_back(std::move(p));
        it = parts_.end() - 1;
    }
    if (part.name() && it->s.name.empty()) it->s.name = part.name()->str();
    for (int i = 0; i < n; ++i) {
        const size_t j = size_t(first + i);
        if (it->have[j]) continue;
        const wire::Vec3& o = *offsets.Get(fb::uoffset_t(i));
        it->s.skeleton.names[j] = names.Get(fb::uoffset_t(i))->str();
        it->s.skeleton.parents[j] = parents.Get(fb::uoffset_t(i));
        it->s.skeleton.offsets[j] = vec3{o.x(), o.y(), o.z()};
        it->have[j] = 1;
        --it->missing;
    }
    return true;
}

bool SkeletonAssembler::complete(uint16_t skeleton_id) const {
    for (const Partial& p : parts_)
        if (p.s.skeleton_id == skeleton_id) return p.missing == 0;
    return false;
}

std::optional<ReceivedSkeleton> SkeletonAssembler::take(uint16_t skeleton_id, std::string* error) {
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == skeleton_id; });
    if (it == parts_.end() || it->missing > 0) {
        if (error) *error = "skeleton " + std::to_string(skeleton_id) + " is incomplete";
        return std::nullopt;
    }
    ReceivedSkeleton s = std::move(it->s);
    parts_.erase(it);
    if (std::string why = s.skeleton.validate(); !why.empty()) {
        if (error) *error = "skeleton " + std::to_string(skeleton_id) + ": " + why;
        return std::nullopt;
    }
    return s;
}

std::optional<ReceivedSkeleton> skeleton_from_wire(const wire::SkeletonDef& def, std::string* error) {
    const size_t n = def.parents() ? def.parents()->size() : 0;
    if (def.first_joint() != 0 || n != size_t(def.joint_count())) {
        if (error)
            *error = "skeleton " + std::to_string(def.skeleton_id()) +
                     ": a part, not a whole skeleton (use SkeletonAssembler)";
        return std::nullopt;
    }
    SkeletonAssembler a;
    if (!a.add(def, error)) return std::nullopt;
    return a.take(def.skeleton_id(), error);
}

}  // namespace ks::net
