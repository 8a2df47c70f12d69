#include "common/src/net/protocol.h"

#include <array>
#include <stdexcept>

#include "common/src/net/protocol_detail.h"

namespace ks::net {

namespace fb = ::flatbuffers;
using namespace detail;

static_assert(sizeof(wire::PacketHeader) == 16);
static_assert(sizeof(wire::Event) == 12);

fb::FlatBufferBuilder detail::builder() { return fb::FlatBufferBuilder(2 * kMaxDatagram); }

std::vector<uint8_t> detail::take(fb::FlatBufferBuilder& fbb, const char* what) {
    if (fbb.GetSize() > kMaxDatagram)
        throw std::invalid_argument(std::string(what) + ": packet of " + std::to_string(fbb.GetSize()) +
                                    " bytes exceeds the " + std::to_string(kMaxDatagram) + "-byte datagram limit");
    const uint8_t* p = fbb.GetBufferPointer();
    return std::vector<uint8_t>(p, p + fbb.GetSize());
}

void detail::check_name(std::string_view s, size_t limit, const char* what) {
    if (s.size() > limit)
        throw std::invalid_argument(std::string(what) + " '" + std::string(s.substr(0, 16)) + "...' is longer than " +
                                    std::to_string(limit) + " bytes");
}

namespace {

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
    const TokenField* token;  // null: dev mode
    const HandshakeProof* proof;  // ChallengeResponse with a token
    std::span<const SkeletonHash> known = {};  // ChallengeResponse
    size_t operator()(size_t padding) const {
        fbb->Clear();
        const auto pad = fbb->CreateVector(zeros(), padding);
        if (!cookie) {
            const auto t = token ? fbb->CreateVector(token->sealed.data(), token->sealed.size()) : 0;
            return finish(*fbb, *h, wire::CreateConnectRequest(*fbb, salt, pad, token ? token->expire_s : 0, t));
        }
        const auto c = fbb->CreateVector(cookie->data(), cookie->size());
        const auto pr = proof ? fbb->CreateVector(proof->data(), proof->size()) : 0;
        const auto kn = known.empty() ? 0 : fbb->CreateVector(known.front().data(), known.size_bytes());
        return finish(*fbb, *h, wire::CreateChallengeResponse(*fbb, salt, c, pad, pr, kn));
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

}  // namespace

namespace {
void check_token(const TokenField* token, const char* what) {
    if (token && (token->sealed.size() < kMinSealedTokenBytes || token->sealed.size() > kMaxSealedTokenBytes))
        throw std::invalid_argument(std::string(what) + ": sealed token of " + std::to_string(token->sealed.size()) + " bytes");
}
}  // namespace

std::vector<uint8_t> build_connect_request(const PacketHeader& h, uint64_t client_salt, const TokenField* token) {
    check_token(token, "build_connect_request");
    auto fbb = builder();
    return build_padded(PaddedBuild{&fbb, &h, client_salt, nullptr, token, nullptr}, "build_connect_request");
}

std::vector<uint8_t> build_challenge(const PacketHeader& h, uint64_t client_salt, const Cookie& cookie, const ChallengeMac* mac,
                                     const ObservedAddress* observed) {
    auto fbb = builder();
    const auto c = fbb.CreateVector(cookie.data(), cookie.size());
    const auto m = mac ? fbb.CreateVector(mac->data(), mac->size()) : 0;
    const auto o = observed ? fbb.CreateVector(observed->data(), observed->size()) : 0;
    finish(fbb, h, wire::CreateChallenge(fbb, client_salt, c, m, o));
    return take(fbb, "build_challenge");
}

std::vector<uint8_t> build_challenge_response(const PacketHeader& h, uint64_t client_salt, const Cookie& cookie,
                                              const HandshakeProof* proof, std::span<const SkeletonHash> known) {
    if (known.size() > kMaxKnownSkeletons)
        throw std::invalid_argument("build_challenge_response: " + std::to_string(known.size()) + " known skeletons (at most " +
                                    std::to_string(kMaxKnownSkeletons) + ")");
    auto fbb = builder();
    return build_padded(PaddedBuild{&fbb, &h, client_salt, &cookie, nullptr, proof, known}, "build_challenge_response");
}

std::vector<uint8_t> build_accept(const PacketHeader& h, const AcceptInfo& a) {
    auto fbb = builder();
    finish(fbb, h,
           wire::CreateAccept(fbb, a.client_id, a.tick_hz, a.snapshot_hz, a.server_tick, a.server_time_us));
    return take(fbb, "build_accept");
}

std::vector<uint8_t> build_snapshot(const PacketHeader& h, uint32_t tick, uint8_t part, uint8_t part_count,
                                    std::span<const uint8_t> data) {
    if (part_count < 1 || part >= part_count)
        throw std::invalid_argument("build_snapshot: part " + std::to_string(part) + " of " + std::to_string(part_count));
    if (data.size() > max_snapshot_data_bytes())
        throw std::invalid_argument("build_snapshot: " + std::to_string(data.size()) + " data bytes do not fit a datagram");
    std::vector<uint8_t> out;
    out.reserve(kSnapshotHeaderBytes + data.size());
    auto put = [&out](uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(v >> (8 * i)));
    };
    put(kSnapshotMagic, 4);
    put(kProtocolVersion, 2);
    put(h.sequence, 2);
    put(h.ack, 2);
    put(h.ack_bits, 4);
    put(tick, 4);
    put(part, 1);
    put(part_count, 1);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

size_t max_snapshot_data_bytes() { return kMaxDatagram - kSnapshotHeaderBytes; }

std::vector<uint8_t> build_ack(const PacketHeader& h, uint32_t snapshot_tick, std::span<const uint32_t> reliable_ids) {
    if (reliable_ids.size() > kMaxAckIds)
        throw std::invalid_argument("build_ack: more than " + std::to_string(kMaxAckIds) + " reliable ids");
    auto fbb = builder();
    const auto ids = reliable_ids.empty() ? 0 : fbb.CreateVector(reliable_ids.data(), reliable_ids.size());
    finish(fbb, h, wire::CreateAck(fbb, snapshot_tick, ids));
    return take(fbb, "build_ack");
}

std::vector<uint8_t> build_ping(const PacketHeader& h, uint64_t client_time_us, uint32_t ping_id, uint64_t echo_server_clock_us,
                                uint64_t echo_held_us) {
    auto fbb = builder();
    finish(fbb, h, wire::CreatePing(fbb, client_time_us, ping_id, echo_server_clock_us, echo_held_us));
    return take(fbb, "build_ping");
}

std::vector<uint8_t> build_pong(const PacketHeader& h, uint64_t client_time_us, uint32_t ping_id,
                                uint64_t server_time_us, uint32_t server_tick, uint64_t server_clock_us, uint64_t held_us,
                                uint32_t rate_bps) {
    auto fbb = builder();
    finish(fbb, h, wire::CreatePong(fbb, client_time_us, ping_id, server_time_us, server_tick, server_clock_us, held_us, rate_bps));
    return take(fbb, "build_pong");
}

std::vector<uint8_t> build_disconnect(const PacketHeader& h, std::string_view reason, uint8_t code) {
    check_name(reason, kMaxReasonBytes, "disconnect reason");
    auto fbb = builder();
    const auto r = fbb.CreateString(reason.data(), reason.size());
    finish(fbb, h, wire::CreateDisconnect(fbb, r, code));
    return take(fbb, "build_disconnect");
}

std::vector<uint8_t> build_events(const PacketHeader& h, uint32_t message_id, std::span<const EventInfo> events) {
    if (events.size() > kMaxEvents)
        throw std::invalid_argument("build_events: more than " + std::to_string(kMaxEvents) + " events");
    auto fbb = builder();
    wire::Event* out = nullptr;
    const auto vec = fbb.CreateUninitializedVectorOfStructs(events.size(), &out);
    for (const EventInfo& e : events) *out++ = wire::Event(e.character_id, e.epoch, e.kind, e.tick);
    finish(fbb, h, wire::CreateEvents(fbb, message_id, vec));
    return take(fbb, "build_events");
}

std::vector<uint8_t> build_viewpoint(const PacketHeader& h, float x, float y, float z) {
    auto fbb = builder();
    finish(fbb, h, wire::CreateViewpoint(fbb, x, y, z));
    return take(fbb, "build_viewpoint");
}

std::vector<uint8_t> build_resync(const PacketHeader& h, uint16_t character_id, uint16_t first_joint, uint32_t tick) {
    auto fbb = builder();
    finish(fbb, h, wire::CreateResync(fbb, character_id, first_joint, tick));
    return take(fbb, "build_resync");
}

}  // namespace ks::net
