#include <cmath>

#include "common/src/net/protocol.h"

#include <cstring>

#include "common/src/net/protocol_detail.h"

namespace ks::net {

namespace fb = ::flatbuffers;
using namespace detail;

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
        case DecodeError::BadToken: return "bad token";
        case DecodeError::BadSkeletonRef: return "bad skeleton reference";
        case DecodeError::StringTooLong: return "string too long";
        case DecodeError::TooManyElements: return "too many elements";
        case DecodeError::TooManyJoints: return "too many joints";
        case DecodeError::BadSkeleton: return "bad skeleton";
        case DecodeError::BadValue: return "bad value";
        case DecodeError::Count: break;
    }
    return "unknown error";
}

namespace {

DecodeError check_message(const wire::Packet& p, size_t size) {
    switch (p.message_type()) {
        case MessageType::ConnectRequest: {
            if (size < kMinConnectRequestBytes) return DecodeError::RequestTooSmall;
            const auto* t = p.message_as_ConnectRequest()->token();
            if (t && (t->size() < kMinSealedTokenBytes || t->size() > kMaxSealedTokenBytes)) return DecodeError::BadToken;
            return DecodeError::None;
        }
        case MessageType::Challenge: {
            const auto* m = p.message_as_Challenge();
            if (!m->cookie() || m->cookie()->size() != kCookieBytes) return DecodeError::BadCookie;
            if (m->mac() && m->mac()->size() != kChallengeMacBytes) return DecodeError::BadCookie;
            if (m->observed() && m->observed()->size() != kObservedAddressBytes) return DecodeError::BadCookie;
            return DecodeError::None;
        }
        case MessageType::ChallengeResponse: {
            const auto* m = p.message_as_ChallengeResponse();
            if (size < kMinConnectRequestBytes) return DecodeError::RequestTooSmall;
            if (!m->cookie() || m->cookie()->size() != kCookieBytes) return DecodeError::BadCookie;
            const auto* pr = m->proof();
            if (pr && pr->size() != kProofBytes) return DecodeError::BadToken;
            const auto* kn = m->known_skeletons();
            if (kn && (kn->size() % kSkeletonHashBytes != 0 || kn->size() > kMaxKnownSkeletons * kSkeletonHashBytes))
                return DecodeError::BadSkeletonRef;
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
            if (m->defs()) {
                int joints = 0;  // before any decoding: the parts' claims (entries may repeat one table)
                for (const wire::SkeletonDef* d : *m->defs()) joints += d->part_joints();
                if (joints > kMaxJointsPerPacket) return DecodeError::TooManyJoints;
                size_t new_name_bytes = kMaxNewNameBytesPerPacket;
                for (const wire::SkeletonDef* d : *m->defs())
                    if (DecodeError e = check_skeleton_def(*d, nullptr, &new_name_bytes); e != DecodeError::None) return e;
            }
            if (m->characters())
                for (const wire::CharacterInfo* c : *m->characters())
                    if (c->name() && c->name()->size() > kMaxNameBytes) return DecodeError::StringTooLong;
            if (m->refs()) {
                if (m->refs()->size() > kMaxRefsPerPacket) return DecodeError::BadSkeletonRef;
                for (const wire::SkeletonRef* r : *m->refs()) {
                    if (!r->hash() || r->hash()->size() != kSkeletonHashBytes) return DecodeError::BadSkeletonRef;
                    if (r->name() && r->name()->size() > kMaxNameBytes) return DecodeError::StringTooLong;
                }
            }
            return DecodeError::None;
        }
        case MessageType::Snapshot: return DecodeError::UnknownMessage;  // snapshots are raw datagrams, never FlatBuffers
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
        case MessageType::Viewpoint: {
            const auto* m = p.message_as_Viewpoint();
            for (float v : {m->x(), m->y(), m->z()})
                if (!(std::fabs(v) <= 1e6f)) return DecodeError::BadValue;  // NaN fails too
            return DecodeError::None;
        }
        case MessageType::Resync: {
            const auto* m = p.message_as_Resync();
            if (m->first_joint() >= kMaxJoints && m->first_joint() != 0xFFFF) return DecodeError::BadValue;
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
    if (bytes.size() > kMaxDatagram) return fail(DecodeError::TooLong);
    auto le = [&bytes](size_t at, int n) {
        uint32_t v = 0;
        for (int i = 0; i < n; ++i) v |= uint32_t(bytes[at + size_t(i)]) << (8 * i);
        return v;
    };
    if (bytes.size() >= 4 && le(0, 4) == kSnapshotMagic) {
        // A raw snapshot datagram (see kSnapshotHeaderBytes).
        if (bytes.size() < kSnapshotHeaderBytes) return fail(DecodeError::TooShort);
        if (le(4, 2) != kProtocolVersion) return fail(DecodeError::UnknownVersion);
        const uint8_t part = bytes[18], part_count = bytes[19];
        if (part_count < 1 || part >= part_count) return fail(DecodeError::BadValue);
        std::optional<DecodedPacket> out(std::in_place);
        DecodedPacket& d = *out;
        std::memcpy(d.storage.data(), bytes.data(), bytes.size());
        d.size = bytes.size();
        d.sequence = uint16_t(le(6, 2));
        d.ack = uint16_t(le(8, 2));
        d.ack_bits = le(10, 4);
        d.type = MessageType::Snapshot;
        if (err) *err = DecodeError::None;
        return out;
    }
    if (bytes.size() < kMinPacketBytes) return fail(DecodeError::TooShort);

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

}  // namespace ks::net
