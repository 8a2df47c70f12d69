// The wire protocol: every message round trip, the envelope, sizes and overheads, the decoder's
// rejections, sequence numbers and acks against brute-force models, skeleton parts, and bounded
// random / mutation runs (which run under ASan + UBSan in ./check.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include "common/src/net/protocol.h"
#include "common/src/net/skeleton_coding.h"
#include "common/src/codec/range_coder.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

namespace ks::net {
namespace {

namespace fb = ::flatbuffers;
using Bytes = std::vector<uint8_t>;

DecodedPacket decode_ok(const Bytes& b) {
    DecodeError err = DecodeError::Count;
    auto d = decode_packet(b, &err);
    EXPECT_TRUE(d.has_value()) << "rejected: " << decode_error_name(err);
    EXPECT_EQ(err, DecodeError::None);
    if (!d) return DecodedPacket{};
    return *d;
}

DecodeError decode_err(const Bytes& b) {
    DecodeError err = DecodeError::Count;
    auto d = decode_packet(b, &err);
    EXPECT_EQ(d.has_value(), err == DecodeError::None);
    return err;
}

const PacketHeader kHeader{0xBEEF, 0x1234, 0x8000'0001u};

Cookie test_cookie(uint8_t seed = 1) {
    Cookie c{};
    for (size_t i = 0; i < c.size(); ++i) c[i] = uint8_t(seed * 31 + i * 7);
    return c;
}

// ---- Raw packets for the decoder's rejection tests (bypass the builders' own checks) ----

template <class T>
Bytes raw_packet(fb::FlatBufferBuilder& fbb, fb::Offset<T> body, uint32_t protocol_id = kProtocolId,
                 uint16_t version = kProtocolVersion, wire::Message type = wire::MessageTraits<T>::enum_value,
                 bool with_header = true) {
    const wire::PacketHeader h(protocol_id, version, 1, 2, 0, 3);
    fbb.Finish(wire::CreatePacket(fbb, with_header ? &h : nullptr, type, body.Union()));
    return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

Bytes raw_connect_request(size_t padding, uint64_t salt = 42) {
    fb::FlatBufferBuilder fbb;
    std::vector<uint8_t> pad(padding);
    const auto p = fbb.CreateVector(pad);
    return raw_packet(fbb, wire::CreateConnectRequest(fbb, salt, p));
}

// A SkeletonDef packet from a coded joints stream claiming `part_joints` joints (no validation).
Bytes raw_skeleton_def_coded(int joint_count, int first_joint, int part_joints, const std::vector<uint8_t>& coded,
                             float metres_per_unit = 1.0f, const std::string& name = "s", int32_t base_skeleton = -1) {
    fb::FlatBufferBuilder fbb;
    const auto cv = fbb.CreateVector(coded);
    const auto nv = fbb.CreateString(name);
    wire::SkeletonDefBuilder b(fbb);
    b.add_skeleton_id(7);
    b.add_name(nv);
    b.add_joint_count(uint16_t(joint_count));
    b.add_first_joint(uint16_t(first_joint));
    b.add_metres_per_unit(metres_per_unit);
    b.add_part_joints(uint16_t(part_joints));
    b.add_joints_coded(cv);
    b.add_base_skeleton(base_skeleton);
    const auto def = b.Finish();
    const auto defs = fbb.CreateVector(&def, 1);
    return raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, defs));
}

std::vector<uint8_t> coded_joints(int first_joint, const std::vector<std::string>& names, const std::vector<int>& parents,
                                  const std::vector<vec3>& offsets) {
    std::vector<uint8_t> coded;
    net::detail::code_skeleton_joints(first_joint, names, parents, offsets, coded);
    return coded;
}

// The same from the joints' arrays (of one length), coded as they are (no validation).
Bytes raw_skeleton_def(int joint_count, int first_joint, const std::vector<std::string>& names,
                       const std::vector<int>& parents, const std::vector<vec3>& offsets,
                       float metres_per_unit = 1.0f, const std::string& name = "s") {
    return raw_skeleton_def_coded(joint_count, first_joint, int(names.size()),
                                  coded_joints(first_joint, names, parents, offsets), metres_per_unit, name);
}

Skeleton named_skeleton(int joints, unsigned seed) {
    test::Rng rng(seed);
    Skeleton s = test::random_skeleton(joints, rng);
    for (int i = 0; i < joints; ++i) s.names[size_t(i)] = std::string("Joint_") + std::to_string(i) + "_" + std::string(size_t(i % 9), 'x');
    return s;
}

void expect_same_skeleton(const Skeleton& a, const Skeleton& b) {
    ASSERT_EQ(a.size(), b.size());
    for (int i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.names[size_t(i)], b.names[size_t(i)]);
        EXPECT_EQ(a.parents[size_t(i)], b.parents[size_t(i)]);
        EXPECT_EQ(a.offsets[size_t(i)].x, b.offsets[size_t(i)].x);
        EXPECT_EQ(a.offsets[size_t(i)].y, b.offsets[size_t(i)].y);
        EXPECT_EQ(a.offsets[size_t(i)].z, b.offsets[size_t(i)].z);
    }
}

// ---- One valid packet of every type (and a few variants), for size and mutation tests ----

std::vector<Bytes> sample_packets() {
    static const Skeleton skel = builtin_skeleton();
    std::vector<Bytes> out;
    out.push_back(build_connect_request(kHeader, 0x0123456789ABCDEFull));
    const ChallengeMac mac{1, 2, 3};
    const HandshakeProof proof{4, 5, 6};
    out.push_back(build_challenge(kHeader, 0x0123456789ABCDEFull, test_cookie()));
    out.push_back(build_challenge(kHeader, 0x0123456789ABCDEFull, test_cookie(), &mac));
    out.push_back(build_challenge_response(kHeader, 0x0123456789ABCDEFull, test_cookie()));
    out.push_back(build_challenge_response(kHeader, 0x0123456789ABCDEFull, test_cookie(), &proof));
    out.push_back(build_accept(kHeader, {17, 60, 30, 123456, 987654321ull}));
    const SkeletonDefInput def{3, "builtin", &skel, 1.0f};
    const CharacterInfoInput chars[] = {{1, 3, "alice"}, {2, 3, "bob"}};
    out.push_back(build_skeleton_defs(kHeader, 9, std::span(&def, 1), chars));
    std::vector<uint8_t> data(300);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 13);
    out.push_back(build_snapshot(kHeader, 4242, 1, 3, data));
    out.push_back(build_snapshot(kHeader, 7, 0, 1, {}));
    const uint32_t ids[] = {1, 2, 3, 40000};
    out.push_back(build_ack(kHeader, 4241, ids));
    out.push_back(build_ping(kHeader, 111222333, 5));
    out.push_back(build_pong(kHeader, 111222333, 5, 444555666, 6000));
    out.push_back(build_disconnect(kHeader, "server shutting down"));
    const EventInfo ev[] = {{1, 2, wire::EventKind::Teleport, 100}, {2, 9, wire::EventKind::Reset, 101}};
    out.push_back(build_events(kHeader, 10, ev));
    out.push_back(build_viewpoint(kHeader, 1.0f, 2.0f, -3.0f));
    out.push_back(build_resync(kHeader, 3, 96, 4242));
    return out;
}

// ---- Sequence numbers ----

TEST(Protocol, SequenceNumbersWrapAround) {
    EXPECT_TRUE(sequence_greater_than(1, 0));
    EXPECT_FALSE(sequence_greater_than(0, 1));
    EXPECT_FALSE(sequence_greater_than(5, 5));
    EXPECT_TRUE(sequence_greater_than(0, 65535));
    EXPECT_TRUE(sequence_greater_than(10, 65500));
    EXPECT_FALSE(sequence_greater_than(65500, 10));
    EXPECT_TRUE(sequence_greater_than(32768, 0));  // exactly half way counts as newer
    EXPECT_FALSE(sequence_greater_than(32769, 0));
    EXPECT_EQ(sequence_difference(2, 65534), 4);
    EXPECT_EQ(sequence_difference(65534, 2), -4);
    for (int a = 0; a < 65536; a += 97)
        for (int d = -32767; d <= 32768; d += 131) {
            const uint16_t b = uint16_t(a - d);
            EXPECT_EQ(sequence_difference(uint16_t(a), b), d);
            EXPECT_EQ(sequence_greater_than(uint16_t(a), b), d > 0);
        }
}

// ---- Round trips ----

TEST(Protocol, EnvelopeFieldsRoundTrip) {
    const PacketHeader headers[] = {{0, 0, 0}, {65535, 65535, 0xFFFFFFFFu}, {1, 65535, 0x8000'0000u}, kHeader};
    for (const PacketHeader& h : headers) {
        const Bytes b = build_ping(h, 1, 2);
        const DecodedPacket d = decode_ok(b);
        EXPECT_EQ(d.sequence, h.sequence);
        EXPECT_EQ(d.ack, h.ack);
        EXPECT_EQ(d.ack_bits, h.ack_bits);
        EXPECT_EQ(d.type, MessageType::Ping);
        EXPECT_EQ(d.size, b.size());
        const wire::PacketHeader* ph = d.packet()->header();
        ASSERT_NE(ph, nullptr);
        EXPECT_EQ(ph->protocol_id(), 0x4B53594Eu);
        EXPECT_EQ(ph->version(), kProtocolVersion);
        EXPECT_EQ(ph->reserved(), 0);
        EXPECT_TRUE(std::equal(b.begin(), b.end(), d.bytes().begin()));
    }
}

TEST(Protocol, HandshakeRoundTrip) {
    for (uint64_t salt : {0ull, 1ull, 0xFFFFFFFFFFFFFFFFull, 0x0123456789ABCDEFull}) {
        const DecodedPacket req = decode_ok(build_connect_request(kHeader, salt));
        ASSERT_EQ(req.type, MessageType::ConnectRequest);
        EXPECT_EQ(req.message<wire::ConnectRequest>()->client_salt(), salt);
        EXPECT_EQ(req.size, kMinConnectRequestBytes);
        EXPECT_EQ(req.message<wire::Challenge>(), nullptr);

        const Cookie cookie = test_cookie(uint8_t(salt));
        const DecodedPacket ch = decode_ok(build_challenge(kHeader, salt, cookie));
        ASSERT_EQ(ch.type, MessageType::Challenge);
        const auto* c = ch.message<wire::Challenge>();
        EXPECT_EQ(c->client_salt(), salt);
        ASSERT_EQ(c->cookie()->size(), kCookieBytes);
        EXPECT_TRUE(std::equal(cookie.begin(), cookie.end(), c->cookie()->begin()));

        const DecodedPacket resp = decode_ok(build_challenge_response(kHeader, salt, cookie));
        ASSERT_EQ(resp.type, MessageType::ChallengeResponse);
        const auto* r = resp.message<wire::ChallengeResponse>();
        EXPECT_EQ(r->client_salt(), salt);
        EXPECT_TRUE(std::equal(cookie.begin(), cookie.end(), r->cookie()->begin()));
        EXPECT_EQ(resp.size, kMinConnectRequestBytes);
    }
    const AcceptInfo a{99, 120, 30, 0xFFFFFFF0u, 0xFFFFFFFFFFFFull};
    const DecodedPacket d = decode_ok(build_accept(kHeader, a));
    ASSERT_EQ(d.type, MessageType::Accept);
    const auto* m = d.message<wire::Accept>();
    EXPECT_EQ(m->client_id(), a.client_id);
    EXPECT_EQ(m->tick_hz(), a.tick_hz);
    EXPECT_EQ(m->snapshot_hz(), a.snapshot_hz);
    EXPECT_EQ(m->server_tick(), a.server_tick);
    EXPECT_EQ(m->server_time_us(), a.server_time_us);
}

TEST(Protocol, SnapshotAckPingPongDisconnectEventsRoundTrip) {
    std::vector<uint8_t> data(max_snapshot_data_bytes());
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 29 + 3);
    for (size_t n : {size_t(0), size_t(1), size_t(500), data.size()}) {
        const Bytes b = build_snapshot(kHeader, 0xDEADBEEF, uint8_t(n % 3), 3, std::span(data).first(n));
        EXPECT_LE(b.size(), kMaxDatagram);
        const DecodedPacket d = decode_ok(b);
        ASSERT_EQ(d.type, MessageType::Snapshot);
        EXPECT_EQ(d.packet(), nullptr) << "a raw datagram, not a FlatBuffer";
        const DecodedPacket::SnapshotView s = d.snapshot();
        EXPECT_EQ(s.tick, 0xDEADBEEFu);
        EXPECT_EQ(s.part, n % 3);
        EXPECT_EQ(s.part_count, 3);
        EXPECT_EQ(d.sequence, kHeader.sequence);
        EXPECT_EQ(d.ack, kHeader.ack);
        EXPECT_EQ(d.ack_bits, kHeader.ack_bits);
        ASSERT_EQ(s.data.size(), n);
        EXPECT_TRUE(std::equal(data.begin(), data.begin() + ptrdiff_t(n), s.data.begin()));
    }
    // The largest snapshot payload fits whatever the header; one byte more does not.
    EXPECT_EQ(max_snapshot_data_bytes(), kMaxDatagram - kSnapshotHeaderBytes);
    const PacketHeader worst{65535, 65535, 0xFFFFFFFFu};
    std::vector<uint8_t> too_big(max_snapshot_data_bytes() + 8);
    EXPECT_THROW(build_snapshot(worst, 0xFFFFFFFFu, 254, 255, too_big), std::invalid_argument);
    EXPECT_THROW(build_snapshot(kHeader, 1, 3, 3, {}), std::invalid_argument);

    std::vector<uint32_t> ids(kMaxAckIds);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint32_t(i * 1000003u);
    for (size_t n : {size_t(0), size_t(1), ids.size()}) {
        const DecodedPacket d = decode_ok(build_ack(kHeader, 77, std::span(ids).first(n)));
        const auto* a = d.message<wire::Ack>();
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(a->snapshot_tick(), 77u);
        const size_t got = a->reliable_ids() ? a->reliable_ids()->size() : 0;
        ASSERT_EQ(got, n);
        for (size_t i = 0; i < n; ++i) EXPECT_EQ(a->reliable_ids()->Get(fb::uoffset_t(i)), ids[i]);
    }
    EXPECT_THROW(build_ack(kHeader, 1, std::vector<uint32_t>(kMaxAckIds + 1)), std::invalid_argument);

    const DecodedPacket ping = decode_ok(build_ping(kHeader, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFu));
    EXPECT_EQ(ping.message<wire::Ping>()->client_time_us(), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(ping.message<wire::Ping>()->ping_id(), 0xFFFFFFFFu);
    const DecodedPacket pong = decode_ok(build_pong(kHeader, 12, 34, 56, 78, 90, 11));
    const auto* p = pong.message<wire::Pong>();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->client_time_us(), 12u);
    EXPECT_EQ(p->ping_id(), 34u);
    EXPECT_EQ(p->server_time_us(), 56u);
    EXPECT_EQ(p->server_tick(), 78u);
    EXPECT_EQ(p->server_clock_us(), 90u);
    EXPECT_EQ(p->held_us(), 11u);
    const Bytes echo_bytes = build_ping(kHeader, 1, 2, 0xFFFFFFFFFFFFFFFFull, 7);
    const DecodedPacket echo_packet = decode_ok(echo_bytes);
    const auto* echo = echo_packet.message<wire::Ping>();
    ASSERT_NE(echo, nullptr);
    EXPECT_EQ(echo->echo_server_clock_us(), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(echo->echo_held_us(), 7u);

    const std::string reason(kMaxReasonBytes, 'r');
    const DecodedPacket disc = decode_ok(build_disconnect(kHeader, reason));
    EXPECT_EQ(disc.message<wire::Disconnect>()->reason()->str(), reason);
    EXPECT_EQ(decode_ok(build_disconnect(kHeader, "")).message<wire::Disconnect>()->reason()->str(), "");
    EXPECT_THROW(build_disconnect(kHeader, reason + "x"), std::invalid_argument);

    std::vector<EventInfo> ev;
    for (int i = 0; i < int(kMaxEvents); ++i)
        ev.push_back({uint16_t(i), uint16_t(i * 3), i % 2 ? wire::EventKind::Reset : wire::EventKind::Teleport,
                      uint32_t(1000 + i)});
    const DecodedPacket de = decode_ok(build_events(kHeader, 555, ev));
    const auto* e = de.message<wire::Events>();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message_id(), 555u);
    ASSERT_EQ(e->events()->size(), ev.size());
    for (size_t i = 0; i < ev.size(); ++i) {
        const wire::Event* x = e->events()->Get(fb::uoffset_t(i));
        EXPECT_EQ(x->character_id(), ev[i].character_id);
        EXPECT_EQ(x->epoch(), ev[i].epoch);
        EXPECT_EQ(x->kind(), ev[i].kind);
        EXPECT_EQ(x->tick(), ev[i].tick);
    }
    EXPECT_THROW(build_events(kHeader, 1, std::vector<EventInfo>(kMaxEvents + 1)), std::invalid_argument);
}

TEST(Protocol, DecodedPacketOwnsItsBytes) {
    Bytes b = build_ping(kHeader, 5, 6);
    std::optional<DecodedPacket> d = decode_packet(b);
    ASSERT_TRUE(d);
    std::fill(b.begin(), b.end(), uint8_t(0xAA));  // the receive buffer is reused
    b.clear();
    const DecodedPacket copy = *d;
    d.reset();
    EXPECT_EQ(copy.message<wire::Ping>()->client_time_us(), 5u);
    EXPECT_EQ(copy.message<wire::Ping>()->ping_id(), 6u);
    // Misaligned input is fine: the packet is copied into aligned storage.
    const Bytes p = build_pong(kHeader, 1, 2, 3, 4);
    std::vector<uint8_t> shifted(p.size() + 3);
    std::memcpy(shifted.data() + 3, p.data(), p.size());
    const auto m = decode_packet(std::span(shifted).subspan(3));
    ASSERT_TRUE(m);
    EXPECT_EQ(m->message<wire::Pong>()->server_time_us(), 3u);
}

TEST(Protocol, SkeletonDefsRoundTrip) {
    const Skeleton builtin = builtin_skeleton();
    const Skeleton small = named_skeleton(5, 11);
    const SkeletonDefInput defs[] = {{1, "builtin", &builtin, 1.0f}, {2, "small", &small, 0.05644f}};
    const CharacterInfoInput chars[] = {{10, 1, "alice"}, {11, 2, "bob"}, {12, 1, ""}};
    const Bytes b = build_skeleton_defs(kHeader, 0xABCDEF01u, defs, chars);
    const DecodedPacket d = decode_ok(b);
    ASSERT_EQ(d.type, MessageType::SkeletonDefs);
    const auto* m = d.message<wire::SkeletonDefs>();
    EXPECT_EQ(m->message_id(), 0xABCDEF01u);
    ASSERT_EQ(m->defs()->size(), 2u);
    ASSERT_EQ(m->characters()->size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        const auto* c = m->characters()->Get(fb::uoffset_t(i));
        EXPECT_EQ(c->character_id(), chars[i].character_id);
        EXPECT_EQ(c->skeleton_id(), chars[i].skeleton_id);
        EXPECT_EQ(c->name()->string_view(), chars[i].name);
    }
    for (size_t i = 0; i < 2; ++i) {
        std::string error;
        const auto s = skeleton_from_wire(*m->defs()->Get(fb::uoffset_t(i)), &error);
        ASSERT_TRUE(s) << error;
        EXPECT_EQ(s->skeleton_id, defs[i].skeleton_id);
        EXPECT_EQ(s->name, defs[i].name);
        EXPECT_EQ(s->metres_per_unit, defs[i].metres_per_unit);
        expect_same_skeleton(s->skeleton, *defs[i].skeleton);
    }
    // Too large for one datagram: the builder refuses, the plan splits.
    const Skeleton big = named_skeleton(100, 12);
    const SkeletonDefInput big_def{5, "big", &big, 0.01f};
    EXPECT_THROW(build_skeleton_defs(kHeader, 1, std::span(&big_def, 1), {}), std::invalid_argument);
    Skeleton bad = small;
    bad.parents[2] = 3;
    const SkeletonDefInput bad_def{6, "bad", &bad, 1.0f};
    EXPECT_THROW(build_skeleton_defs(kHeader, 1, std::span(&bad_def, 1), {}), std::invalid_argument);
    Skeleton long_name = small;
    long_name.names[1] = std::string(kMaxNameBytes + 1, 'n');
    const SkeletonDefInput long_def{6, "long", &long_name, 1.0f};
    EXPECT_THROW(build_skeleton_defs(kHeader, 1, std::span(&long_def, 1), {}), std::invalid_argument);
}

TEST(Protocol, SkeletonDefsSplitAndAssembled) {
    // Skeletons of every size up to the limit, with characters: every planned packet fits, and
    // the parts, delivered shuffled and duplicated, assemble into the original skeletons.
    std::vector<Skeleton> skels;
    for (int n : {1, 31, 100, 333, kMaxJoints}) skels.push_back(named_skeleton(n, unsigned(n)));
    skels.push_back(builtin_skeleton());
    skels.push_back(skels[3]);  // grown from the same source as the 333-joint one: coded against it
    for (size_t j = 5; j < 333; j += 7) skels.back().offsets[j] = skels.back().offsets[j] * 1.25f;
    std::vector<SkeletonDefInput> inputs;
    for (size_t i = 0; i < skels.size(); ++i)
        inputs.push_back({uint16_t(100 + i), "skeleton", &skels[i], 0.01f * float(i + 1)});
    std::vector<std::string> names;
    for (int i = 0; i < 300; ++i) names.push_back(std::string("character number ") + std::to_string(i));
    std::vector<CharacterInfoInput> chars;
    for (int i = 0; i < 300; ++i) chars.push_back({uint16_t(i), uint16_t(100 + i % int(skels.size())), names[size_t(i)]});

    const auto plans = plan_skeleton_defs(inputs, chars);
    std::vector<Bytes> packets;
    uint32_t id = 1;
    for (const auto& plan : plans) {
        packets.push_back(build_skeleton_defs({65535, 65535, 0xFFFFFFFFu}, 0xFFFFFFFF - id++, plan.defs, plan.characters));
        EXPECT_LE(packets.back().size(), kMaxDatagram);
    }
    size_t bytes = 0;
    for (const auto& p : packets) bytes += p.size();
    test::record_figure("protocol skeleton defs: packets for 1+31+100+333+1024+21 joints, 300 characters",
                        double(packets.size()));
    // Packing efficiency: packets are filled to within a joint or a character of the limit.
    EXPECT_GT(double(bytes) / double(packets.size() * kMaxDatagram), 0.9);

    std::set<int> based;
    for (const auto& plan : plans)
        for (const SkeletonDefInput& d : plan.defs)
            if (d.base) based.insert(d.skeleton_id);
    EXPECT_TRUE(based.count(106)) << "the grown skeleton is coded against the one it was grown from";

    // Delivered as a client receives them (shuffled, some twice, each applied once): a part coded
    // against a skeleton not yet complete waits for it; each completed skeleton is taken (and held)
    // at once.
    std::mt19937 rng(5);
    std::vector<Bytes> delivery = packets;
    delivery.insert(delivery.end(), packets.begin(), packets.begin() + ptrdiff_t(packets.size() / 3));  // duplicates
    std::shuffle(delivery.begin(), delivery.end(), rng);
    SkeletonAssembler assembler;
    std::map<uint16_t, ReceivedSkeleton> held;
    const SkeletonAssembler::HeldSkeletons lookup = [&](uint16_t id) -> const Skeleton* {
        const auto it = held.find(id);
        return it == held.end() ? nullptr : &it->second.skeleton;
    };
    std::set<int> chars_seen;
    std::set<uint32_t> seen;  // a client applies each message once
    for (const Bytes& b : delivery) {
        const DecodedPacket d = decode_ok(b);
        const auto* m = d.message<wire::SkeletonDefs>();
        ASSERT_NE(m, nullptr);
        if (!seen.insert(m->message_id()).second) continue;
        if (m->defs())
            for (const auto* def : *m->defs()) {
                std::string error;
                EXPECT_TRUE(assembler.add(*def, &error, lookup)) << error;
            }
        for (bool more = true; more;) {
            std::vector<std::string> errors;
            assembler.resolve(lookup, &errors);
            EXPECT_TRUE(errors.empty()) << errors.front();
            more = false;
            for (uint16_t id : assembler.completed()) {
                std::string error;
                auto s = assembler.take(id, &error);
                ASSERT_TRUE(s) << error;
                EXPECT_FALSE(assembler.complete(id));
                held[id] = std::move(*s);
                more = true;
            }
        }
        if (m->characters())
            for (const auto* c : *m->characters()) {
                chars_seen.insert(c->character_id());
                EXPECT_EQ(c->name()->str(), names[c->character_id()]);
            }
    }
    EXPECT_EQ(chars_seen.size(), chars.size());
    for (const SkeletonDefInput& in : inputs) {
        ASSERT_TRUE(held.count(in.skeleton_id)) << in.skeleton_id;
        EXPECT_EQ(held[in.skeleton_id].metres_per_unit, in.metres_per_unit);
        expect_same_skeleton(held[in.skeleton_id].skeleton, *in.skeleton);
    }
    EXPECT_EQ(assembler.in_progress(), 0u);
}

// A skeleton grown from another (offsets changed here and there, a joint renamed, a parent moved,
// joints added past the other's end) coded against it: a fraction of its bytes, decoded exactly.
TEST(Protocol, ASkeletonCodedAgainstAnotherTakesAFractionOfItsBytesAndDecodesExactly) {
    const Skeleton a = named_skeleton(250, 3);
    Skeleton b = a;
    for (size_t j = 3; j < 250; j += 12) b.offsets[j] = b.offsets[j] * 1.5f;
    b.names[40] = "renamed";
    b.parents[60] = 0;
    for (int k = 0; k < 5; ++k) {
        b.names.push_back("extra" + std::to_string(k));
        b.parents.push_back(0);
        b.offsets.push_back({1.0f, 2.0f, float(k)});
    }
    ASSERT_EQ(b.validate(), "");
    std::vector<uint8_t> alone, based;
    net::detail::code_skeleton_joints(0, b.names, b.parents, b.offsets, alone);
    net::detail::code_skeleton_joints(0, b.names, b.parents, b.offsets, based, nullptr, std::numeric_limits<size_t>::max(), &a);
    test::record_figure("protocol skeleton coded against another: bytes / bytes alone (250 joints, 21 offsets changed)",
                        double(based.size()) / double(alone.size()));
    EXPECT_LT(based.size() * 4, alone.size()) << based.size() << " against " << alone.size();
    net::detail::SkeletonJoints out;
    size_t allowance = kMaxNewNameBytesPerPacket;
    std::string why;
    ASSERT_EQ(net::detail::decode_skeleton_joints(based, 0, b.names.size(), out, &why, &allowance, &a), DecodeError::None) << why;
    EXPECT_EQ(out.names, b.names);
    EXPECT_EQ(out.parents, b.parents);
    for (size_t j = 0; j < b.offsets.size(); ++j) EXPECT_EQ(std::memcmp(&out.offsets[j], &b.offsets[j], sizeof(vec3)), 0) << j;
}

// A part coded against a skeleton the receiver does not hold yet waits for it (its bytes kept, within
// a bound); a base that is the skeleton itself or out of range is refused as the packet is decoded.
TEST(Protocol, APartCodedAgainstASkeletonNotHeldWaitsAndBadBasesAreRefused) {
    const Skeleton a = named_skeleton(40, 4);
    Skeleton b = a;
    b.offsets[7] = {9.0f, 9.0f, 9.0f};
    std::vector<uint8_t> coded;
    net::detail::code_skeleton_joints(0, b.names, b.parents, b.offsets, coded, nullptr, std::numeric_limits<size_t>::max(), &a);
    const Bytes packet = raw_skeleton_def_coded(40, 0, 40, coded, 1.0f, "s", 100);
    const DecodedPacket d = decode_ok(packet);
    const wire::SkeletonDef& def = *d.message<wire::SkeletonDefs>()->defs()->Get(0);
    std::map<uint16_t, Skeleton> held;
    const SkeletonAssembler::HeldSkeletons lookup = [&](uint16_t id) -> const Skeleton* {
        const auto it = held.find(id);
        return it == held.end() ? nullptr : &it->second;
    };
    SkeletonAssembler assembler;
    std::string error;
    ASSERT_TRUE(assembler.add(def, &error, lookup)) << error;
    EXPECT_FALSE(assembler.complete(7)) << "waits for skeleton 100";
    assembler.resolve(lookup);
    EXPECT_FALSE(assembler.complete(7));
    held[100] = a;
    std::vector<std::string> errors;
    assembler.resolve(lookup, &errors);
    EXPECT_TRUE(errors.empty());
    ASSERT_TRUE(assembler.complete(7));
    const auto s = assembler.take(7, &error);
    ASSERT_TRUE(s) << error;
    expect_same_skeleton(s->skeleton, b);

    for (const int32_t bad : {7, -2, 70000}) {
        DecodeError e = DecodeError::None;
        EXPECT_FALSE(decode_packet(raw_skeleton_def_coded(40, 0, 40, coded, 1.0f, "s", bad), &e)) << bad;
        EXPECT_EQ(e, DecodeError::BadSkeleton) << bad;
    }

    // Bytes that wait are bounded: parts of 1,000 coded bytes (undecodable, never looked at while
    // they wait) until kMaxWaitingBytes is reached; then refused with the reason.
    SkeletonAssembler bounded;
    const std::vector<uint8_t> junk(1000, 0x5A);
    size_t accepted = 0;
    bool refused = false;
    for (int first = 0; first < 1024 && !refused; ++first) {
        const DecodedPacket p = decode_ok(raw_skeleton_def_coded(1024, first, 1, junk, 1.0f, "s", 100));
        std::string why;
        if (bounded.add(*p.message<wire::SkeletonDefs>()->defs()->Get(0), &why, {})) {
            ++accepted;
        } else {
            refused = true;
            EXPECT_NE(why.find("wait"), std::string::npos) << why;
        }
    }
    EXPECT_TRUE(refused);
    EXPECT_EQ(accepted, SkeletonAssembler::kMaxWaitingBytes / (junk.size() + SkeletonAssembler::kWaitingOverheadBytes));
    EXPECT_EQ(bounded.in_progress(), 0u) << "waiting parts take no skeleton's place";
    // Empty parts are charged too, and a part received again is kept once.
    SkeletonAssembler empty;
    size_t kept = 0;
    refused = false;
    for (int first = 0; first < 1024 && !refused; ++first)
        for (int n = 1; n <= 8 && first + n <= 1024 && !refused; ++n) {
            const DecodedPacket p = decode_ok(raw_skeleton_def_coded(1024, first, n, {}, 1.0f, "s", 100));
            const wire::SkeletonDef& part = *p.message<wire::SkeletonDefs>()->defs()->Get(0);
            if (!empty.add(part, nullptr, {})) {
                refused = true;
            } else {
                ++kept;
                if (first == 0 && n == 1) {
                    EXPECT_TRUE(empty.add(part, nullptr, {})) << "a duplicate";
                }
            }
        }
    EXPECT_TRUE(refused);
    EXPECT_EQ(kept, SkeletonAssembler::kMaxWaitingBytes / SkeletonAssembler::kWaitingOverheadBytes);
    // Once the base is held, what cannot be decoded is dropped with its reason.
    held.clear();
    held[100] = a;
    errors.clear();
    bounded.resolve(lookup, &errors);
    EXPECT_EQ(errors.size(), accepted);
}

TEST(Protocol, SkeletonAssemblerRejectsContradictions) {
    const std::vector<vec3> o2 = {{0, 0, 0}, {0, 1, 0}};
    auto def_of = [](const Bytes& b) {
        return decode_packet(b).value();  // copies; parts are read from the copy below
    };
    const DecodedPacket a = def_of(raw_skeleton_def(4, 0, {"a", "b"}, {-1, 0}, o2));
    const DecodedPacket b_same = def_of(raw_skeleton_def(4, 1, {"b", "c"}, {0, 1}, {{0, 1, 0}, {0, 2, 0}}));
    const DecodedPacket b_conflict = def_of(raw_skeleton_def(4, 1, {"B", "c"}, {0, 1}, {{0, 1, 0}, {0, 2, 0}}));
    const DecodedPacket other_count = def_of(raw_skeleton_def(5, 3, {"d"}, {0}, {{1, 1, 1}}));
    const DecodedPacket other_units = def_of(raw_skeleton_def(4, 3, {"d"}, {0}, {{1, 1, 1}}, 2.0f));
    const DecodedPacket last = def_of(raw_skeleton_def(4, 3, {"d"}, {2}, {{1, 1, 1}}));
    auto first_def = [](const DecodedPacket& d) { return d.message<wire::SkeletonDefs>()->defs()->Get(0); };

    std::string error;
    EXPECT_FALSE(skeleton_from_wire(*first_def(a), &error));  // only a part
    EXPECT_NE(error.find("part"), std::string::npos);

    SkeletonAssembler s;
    ASSERT_TRUE(s.add(*first_def(a), &error)) << error;
    EXPECT_FALSE(s.complete(7));
    EXPECT_FALSE(s.take(7, &error));
    EXPECT_TRUE(s.add(*first_def(a), &error));  // duplicate
    EXPECT_FALSE(s.add(*first_def(b_conflict), &error));
    EXPECT_NE(error.find("differs"), std::string::npos);
    EXPECT_FALSE(s.add(*first_def(other_count), &error));
    EXPECT_FALSE(s.add(*first_def(other_units), &error));
    ASSERT_TRUE(s.add(*first_def(b_same), &error)) << error;
    EXPECT_FALSE(s.complete(7));
    ASSERT_TRUE(s.add(*first_def(last), &error)) << error;
    ASSERT_TRUE(s.complete(7));
    const auto sk = s.take(7, &error);
    ASSERT_TRUE(sk) << error;
    EXPECT_EQ(sk->skeleton.names, (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(sk->skeleton.parents, (std::vector<int>{-1, 0, 1, 2}));

    // A bounded number of skeletons in progress.
    SkeletonAssembler many;
    for (uint16_t id = 0; id <= SkeletonAssembler::kMaxInProgress; ++id) {
        fb::FlatBufferBuilder fbb;
        const auto cv = fbb.CreateVector(coded_joints(0, {"a"}, {-1}, {vec3{}}));
        wire::SkeletonDefBuilder b(fbb);
        b.add_skeleton_id(id);
        b.add_joint_count(2);
        b.add_part_joints(1);
        b.add_joints_coded(cv);
        fbb.Finish(b.Finish());
        const auto* def = fb::GetRoot<wire::SkeletonDef>(fbb.GetBufferPointer());
        EXPECT_EQ(many.add(*def, &error), id < SkeletonAssembler::kMaxInProgress) << id;
    }
}

// ---- Sizes ----

// A skeleton's joints travel range-coded (skeleton_coding.h): bit for bit what was sent, in well
// under the plain arrays' bytes; streams that make a name too long or share more than the previous
// name has, point a parent or an offset's match nowhere, are cut short or have bytes left over are
// refused, the error naming the joint.
// The plain arrays' bytes for a skeleton's joints: names front-coded (2 bytes and the new ones),
// 2 bytes of parent and 12 of offset.
size_t plain_joint_bytes(const Skeleton& s) {
    size_t plain = 0;
    std::string_view prev;
    for (const std::string& n : s.names) {
        size_t shared = 0;
        while (shared < n.size() && shared < prev.size() && n[shared] == prev[shared]) ++shared;
        plain += 2 + n.size() - shared + 14;
        prev = n;
    }
    return plain;
}

size_t coded_joint_bytes(const Skeleton& s) {
    std::vector<uint8_t> coded;
    net::detail::code_skeleton_joints(0, s.names, s.parents, s.offsets, coded);
    return coded.size();
}

TEST(Protocol, SkeletonJointsAreCodedCompactlyLosslesslyAndMalformedStreamsAreRefused) {
    // Rigs like a game's (grown from the built-in body): well under the plain arrays. Random
    // offsets and names (no structure to find): no more than them.
    for (const char* rig : {"game", "stress"}) {
        const Skeleton s = make_rig(rig, builtin_clip("walk")).skeleton;
        const size_t plain = plain_joint_bytes(s), coded = coded_joint_bytes(s);
        test::record_figure(std::string("protocol skeleton joints: coded bytes per joint, built-in ") + rig + " rig",
                            double(coded) / double(s.size()));
        test::record_figure(std::string("protocol skeleton joints: plain bytes per joint, built-in ") + rig + " rig",
                            double(plain) / double(s.size()));
        EXPECT_LT(double(coded), 0.6 * double(plain)) << rig;
    }
    const Skeleton s = named_skeleton(kMaxJoints, 9);
    test::record_figure("protocol skeleton joints: coded bytes per joint, 1024 random joints (names in runs)",
                        double(coded_joint_bytes(s)) / kMaxJoints);
    EXPECT_LE(coded_joint_bytes(s), plain_joint_bytes(s));

    // Bit for bit: zeros of both signs, denormals, repeats, mirrored and sign-flipped matches,
    // long names, parents anywhere before.
    test::Rng rng(5);
    for (int trial = 0; trial < 40; ++trial) {
        const int first = trial % 3 == 0 ? 0 : int(rng.uniform(0, 500));
        const int n = 1 + int(rng.uniform(0, 300));
        std::vector<std::string> names;
        std::vector<int> parents;
        std::vector<vec3> offsets;
        for (int i = 0; i < n; ++i) {
            const int j = first + i;
            std::string name = i > 0 && rng.uniform(0, 1) < 0.5 ? names.back().substr(0, size_t(rng.uniform(0, 10))) : "";
            while (name.size() < size_t(rng.uniform(0, float(kMaxNameBytes)))) name.push_back(char(uint8_t(rng.uniform(0, 255.99f))));
            names.push_back(name.substr(0, kMaxNameBytes));
            const float r = rng.uniform(0, 1);
            parents.push_back(r < 0.5f ? j - 1 : r < 0.7f && i > 0 ? parents.back() : int(std::floor(rng.uniform(-1, float(j) - 0.01f))));
            const float c = rng.uniform(0, 1);
            vec3 o{rng.uniform(-50, 50), rng.uniform(-1, 1) * 1e-3f, rng.uniform(-2, 2)};
            if (c < 0.1f) o = vec3{0.0f, -0.0f, 1e-40f};
            else if (c < 0.3f && i > 0) o = offsets.back();
            else if (c < 0.5f && i > 0) {
                const vec3 e = offsets[size_t(rng.uniform(0, float(i) - 0.01f))];
                o = vec3{-e.x, e.y, -e.z};
            }
            offsets.push_back(o);
        }
        std::vector<uint8_t> coded;
        std::vector<size_t> bounds;
        net::detail::code_skeleton_joints(first, names, parents, offsets, coded, &bounds);
        ASSERT_EQ(bounds.size(), size_t(n));
        EXPECT_LE(coded.size(), bounds.back());
        for (int k : {1, n / 3 + 1, n / 2 + 1}) {  // a prefix codes within its bound (the planner's sizes)
            const auto first_k = [&](const auto& v) { return std::vector(v.begin(), v.begin() + k); };
            EXPECT_LE(coded_joints(first, first_k(names), first_k(parents), first_k(offsets)).size(), bounds[size_t(k - 1)]);
        }
        net::detail::SkeletonJoints out;
        std::string why;
        size_t allowance = SIZE_MAX;  // no packet's allowance: up to 300 names of 64 random bytes
        ASSERT_EQ(net::detail::decode_skeleton_joints(coded, first, size_t(n), out, &why, &allowance), DecodeError::None) << why;
        EXPECT_EQ(out.names, names);
        EXPECT_EQ(out.parents, parents);
        ASSERT_EQ(out.offsets.size(), offsets.size());
        EXPECT_EQ(std::memcmp(out.offsets.data(), offsets.data(), offsets.size() * sizeof(vec3)), 0) << "trial " << trial;
        // Cut short by more bytes than may be taken as zeros, or longer by more than that: refused
        // (at the end if not before: the decoder would have to invent 8 bytes, or leave one unread).
        if (coded.size() > 12) {
            const std::vector<uint8_t> cut(coded.begin(), coded.end() - 8);
            allowance = SIZE_MAX;
            EXPECT_NE(net::detail::decode_skeleton_joints(cut, first, size_t(n), out, &why, &allowance), DecodeError::None);
        }
        std::vector<uint8_t> longer = coded;
        longer.insert(longer.end(), kMaxImpliedBytes + 1, 0x5A);
        allowance = SIZE_MAX;
        EXPECT_NE(net::detail::decode_skeleton_joints(longer, first, size_t(n), out, &why, &allowance), DecodeError::None);
    }

    const std::vector<vec3> o2 = {{0, 0, 0}, {1, 0, 0}};
    const std::vector<int> p2 = {-1, 0};
    auto err = [&](const std::vector<std::string>& names) { return decode_err(raw_skeleton_def(2, 0, names, p2, o2)); };
    EXPECT_EQ(err({"hips", "hipx"}), DecodeError::None);
    EXPECT_EQ(err({"a", std::string(kMaxNameBytes, 'z')}), DecodeError::None);
    EXPECT_EQ(err({"a", std::string(kMaxNameBytes + 1, 'z')}), DecodeError::StringTooLong);
    EXPECT_EQ(err({std::string(kMaxNameBytes - 1, 'a'), std::string(kMaxNameBytes - 1, 'a') + "bc"}), DecodeError::StringTooLong)
        << "65 bytes once the shared bytes are added";
    // Two joints claimed, one coded; three claimed, two coded: cut short.
    EXPECT_EQ(decode_err(raw_skeleton_def_coded(40, 0, 40, coded_joints(0, {"a", "b"}, p2, o2))), DecodeError::BadSkeleton)
        << "40 claimed, 2 coded";
    EXPECT_EQ(decode_err(raw_skeleton_def_coded(2, 0, 1, coded_joints(0, {"a", "b"}, p2, o2))), DecodeError::BadSkeleton)
        << "one claimed, two coded: bytes left over";
    EXPECT_EQ(decode_err(raw_skeleton_def_coded(2, 0, 2, {})), DecodeError::BadSkeleton) << "no bytes";
    // Every bit of a stream flipped in turn: refused or decoded to a skeleton that validates, never more.
    const std::vector<uint8_t> coded = coded_joints(0, {"hips", "spine", "head"}, {-1, 0, 1}, {{0, 0, 0}, {0, 1, 0}, {0, 1, 0}});
    for (size_t bit = 0; bit < coded.size() * 8; ++bit) {
        std::vector<uint8_t> flipped = coded;
        flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
        net::detail::SkeletonJoints out;
        size_t allowance = kMaxNewNameBytesPerPacket;
        if (net::detail::decode_skeleton_joints(flipped, 0, 3, out, nullptr, &allowance) != DecodeError::None) continue;
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_LE(out.names[i].size(), kMaxNameBytes);
            EXPECT_LT(out.parents[i], int(i));
            EXPECT_GE(out.parents[i], -1);
            EXPECT_TRUE(std::isfinite(out.offsets[i].x) && std::isfinite(out.offsets[i].y) && std::isfinite(out.offsets[i].z));
        }
    }
}

// What one SkeletonDefs datagram may make a receiver decode is bounded whatever it compresses to:
// at most kMaxJointsPerPacket joints (claims counted before any decoding, so entries repeating
// one table count each time) and kMaxNewNameBytesPerPacket name bytes spelled out anew. The
// planner keeps to both, so a skeleton whose names compress well still arrives, in more packets.
TEST(Protocol, ASkeletonDefsPacketDecodesBoundedWorkAndThePlannerKeepsToTheBound) {
    // 100 joints whose 62-byte names share nothing with the one before: 6,200 new bytes, a few
    // hundred coded.
    Skeleton s;
    for (int j = 0; j < 100; ++j) {
        s.names.push_back(std::string(62, j % 2 ? 'b' : 'a'));
        s.parents.push_back(j - 1);
        s.offsets.push_back({0, 1, 0});
    }
    std::vector<int> parents(s.parents.begin(), s.parents.end());
    const std::vector<uint8_t> coded = coded_joints(0, s.names, parents, s.offsets);
    ASSERT_LT(coded.size(), 900u);
    const std::vector<uint8_t> first_30 = coded_joints(0, std::vector(s.names.begin(), s.names.begin() + 30),
                                                       std::vector(parents.begin(), parents.begin() + 30),
                                                       std::vector(s.offsets.begin(), s.offsets.begin() + 30));
    EXPECT_EQ(decode_err(raw_skeleton_def_coded(100, 0, 30, first_30)), DecodeError::None) << "1,860 new name bytes";
    EXPECT_EQ(decode_err(raw_skeleton_def_coded(100, 0, 100, coded)), DecodeError::BadSkeleton) << "6,200 new name bytes";

    // Two entries claiming 200 joints each (one table twice): refused before decoding.
    {
        fb::FlatBufferBuilder fbb;
        const auto cv = fbb.CreateVector(coded);
        wire::SkeletonDefBuilder b(fbb);
        b.add_skeleton_id(7);
        b.add_joint_count(1000);
        b.add_part_joints(200);
        b.add_joints_coded(cv);
        const auto def = b.Finish();
        const std::vector<fb::Offset<wire::SkeletonDef>> twice = {def, def};
        EXPECT_EQ(decode_err(raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, fbb.CreateVector(twice)))), DecodeError::TooManyJoints);
    }

    // The planner: every packet within both bounds, decoded and assembled into the skeleton.
    const SkeletonDefInput in{7, "s", &s, 1.0f};
    const auto plans = plan_skeleton_defs({&in, 1}, {});
    EXPECT_GE(plans.size(), 2u);
    SkeletonAssembler assembler;
    std::string error;
    for (const auto& plan : plans) {
        const DecodedPacket d = decode_packet(build_skeleton_defs({}, 1, plan)).value();
        for (const wire::SkeletonDef* def : *d.message<wire::SkeletonDefs>()->defs()) ASSERT_TRUE(assembler.add(*def, &error)) << error;
    }
    const auto got = assembler.take(7, &error);
    ASSERT_TRUE(got) << error;
    EXPECT_EQ(got->skeleton.names, s.names);
    // A 1,024-joint skeleton that repeats itself: within both bounds wherever it is split.
    Skeleton chain;
    for (int j = 0; j < kMaxJoints; ++j) {
        chain.names.push_back("j");
        chain.parents.push_back(j - 1);
        chain.offsets.push_back({0, 1, 0});
    }
    const SkeletonDefInput whole{8, "chain", &chain, 1.0f};
    const CharacterInfoInput character{1, 8, "c"};
    for (const auto& plan : plan_skeleton_defs({&whole, 1}, {&character, 1}))
        EXPECT_EQ(decode_err(build_skeleton_defs({}, 1, plan)), DecodeError::None);
}

TEST(Protocol, ConnectRequestIsNoSmallerThanAnyUnauthenticatedReply) {
    // The largest replies an unauthenticated peer can get: a Challenge (every field non-default)
    // and a Disconnect with the longest pre-authentication reason.
    size_t largest_reply = 0;
    for (const PacketHeader& h : {PacketHeader{}, PacketHeader{65535, 65535, 0xFFFFFFFFu}})
        for (uint64_t salt : {0ull, 1ull, ~0ull}) {
            const ChallengeMac mac{};
            largest_reply = std::max(largest_reply, build_challenge(h, salt, test_cookie(), &mac).size());
            largest_reply = std::max(largest_reply, build_disconnect(h, std::string(kMaxPreAuthReasonBytes, 'x')).size());
        }
    const ChallengeMac mac{};
    test::record_figure("protocol challenge packet bytes", double(build_challenge(kHeader, ~0ull, test_cookie(), &mac).size()));
    EXPECT_LT(largest_reply, kMinConnectRequestBytes);
    for (const PacketHeader& h : {PacketHeader{}, PacketHeader{65535, 65535, 0xFFFFFFFFu}, kHeader})
        for (uint64_t salt : {0ull, 1ull, 0xFFull, ~0ull}) {
            EXPECT_EQ(build_connect_request(h, salt).size(), kMinConnectRequestBytes);
            EXPECT_EQ(build_challenge_response(h, salt, test_cookie()).size(), kMinConnectRequestBytes);
        }
    // Every padding: a ConnectRequest is accepted exactly when it is at least kMinConnectRequestBytes
    // (and fits a datagram), and then it is at least as large as the largest reply.
    int accepted = 0;
    for (size_t pad = 0; pad <= kMaxDatagram; ++pad)
        for (uint64_t salt : {0ull, 7ull}) {
            const Bytes b = raw_connect_request(pad, salt);
            const DecodeError e = decode_err(b);
            if (b.size() > kMaxDatagram) EXPECT_EQ(e, DecodeError::TooLong);
            else if (b.size() < kMinConnectRequestBytes) EXPECT_EQ(e, DecodeError::RequestTooSmall) << pad;
            else EXPECT_EQ(e, DecodeError::None);
            if (e == DecodeError::None) {
                ++accepted;
                EXPECT_GE(b.size(), largest_reply);
            }
        }
    EXPECT_GT(accepted, 0);
}

TEST(Protocol, PerPacketOverhead) {
    // Overhead = datagram bytes - payload bytes the caller handed in: a snapshot datagram's raw
    // 20-byte header (magic, version, sequence, ack, ack bits, tick, part, part count), whatever
    // the payload's length.
    for (size_t n : {size_t(0), size_t(1), size_t(100), size_t(500), size_t(1000)}) {
        const std::vector<uint8_t> data(n, 0x5A);
        const size_t single = build_snapshot(kHeader, 123456, 0, 1, data).size();  // part 0 of 1: defaults omitted
        const size_t worst = build_snapshot({65535, 65535, ~0u}, ~0u, 254, 255, data).size();
        EXPECT_EQ(single, worst);
        EXPECT_EQ(worst - n, kSnapshotHeaderBytes);
        EXPECT_LT(worst - n, 40u);
        if (n % 4) continue;
        test::record_figure("protocol overhead bytes (snapshot packet)", double(worst - n));
        if (n == 0 || n == 500) {
            test::record_figure(std::string("protocol overhead bytes (snapshot packet, ") + std::to_string(n) + " data bytes)",
                                double(worst - n));
            test::record_figure(std::string("protocol overhead bytes (single-part snapshot packet, ") + std::to_string(n) +
                                    " data bytes)",
                                double(single - n));
        }
    }
    const size_t accept = build_accept(kHeader, {1, 60, 30, ~0u, ~0ull}).size();
    const size_t ack0 = build_ack(kHeader, ~0u, {}).size();
    const uint32_t one_id = 5;
    const size_t ack1 = build_ack(kHeader, ~0u, std::span(&one_id, 1)).size();
    const size_t ping = build_ping(kHeader, ~0ull, ~0u, ~0ull, ~0ull).size();
    const size_t pong = build_pong(kHeader, ~0ull, ~0u, ~0ull, ~0u, ~0ull, ~0ull).size();
    test::record_figure("protocol packet bytes (accept)", double(accept));
    test::record_figure("protocol packet bytes (ack, no reliable ids)", double(ack0));
    test::record_figure("protocol packet bytes (ack, 1 reliable id)", double(ack1));
    test::record_figure("protocol packet bytes (ping)", double(ping));
    test::record_figure("protocol packet bytes (pong)", double(pong));
    EXPECT_LE(accept, 88u);
    EXPECT_LE(ack0, 60u);
    EXPECT_LE(ack1, 72u);
    EXPECT_LE(ping, 88u);
    EXPECT_LE(pong, 104u);
    for (const Bytes& b : sample_packets())
        EXPECT_GE(b.size(), decode_ok(b).type == MessageType::Snapshot ? kSnapshotHeaderBytes : kMinPacketBytes);
}

// ---- Rejections ----

TEST(Protocol, DecodeRejectsEachMalformedCase) {
    std::set<DecodeError> seen;
    auto expect_err = [&](const Bytes& b, DecodeError want, const char* what) {
        const DecodeError got = decode_err(b);
        EXPECT_EQ(got, want) << what << ": got " << decode_error_name(got) << ", want " << decode_error_name(want);
        seen.insert(got);
    };
    const Bytes ping = build_ping(kHeader, 1, 2);
    expect_err({}, DecodeError::TooShort, "empty");
    expect_err(Bytes(ping.begin(), ping.begin() + ptrdiff_t(kMinPacketBytes - 1)), DecodeError::TooShort, "short");
    expect_err(Bytes(kMaxDatagram + 1, 0), DecodeError::TooLong, "long");
    {
        Bytes b = build_snapshot(kHeader, 1, 0, 1, std::vector<uint8_t>(max_snapshot_data_bytes()));
        b.resize(kMaxDatagram + 1);
        expect_err(b, DecodeError::TooLong, "long snapshot");
    }
    {
        const Bytes snap = build_snapshot(kHeader, 9, 0, 1, std::vector<uint8_t>(10, 1));
        expect_err(Bytes(snap.begin(), snap.begin() + ptrdiff_t(kSnapshotHeaderBytes - 1)), DecodeError::TooShort, "short snapshot header");
        Bytes v = snap;
        v[4] = uint8_t(kProtocolVersion + 1);  // the next version
        expect_err(v, DecodeError::UnknownVersion, "snapshot version");
        Bytes q = snap;
        q[18] = 1;  // part 1 of 1
        expect_err(q, DecodeError::BadValue, "snapshot part >= part count");
        q[19] = 0;  // part count 0
        expect_err(q, DecodeError::BadValue, "snapshot part count 0");
    }
    expect_err(Bytes(ping.begin(), ping.end() - 4), DecodeError::VerifyFailed, "truncated");
    expect_err(Bytes(64, 0xFF), DecodeError::VerifyFailed, "garbage");
    {
        Bytes b = ping;
        b[0] = 0xF0;  // root offset out of range
        expect_err(b, DecodeError::VerifyFailed, "root offset");
    }
    fb::FlatBufferBuilder fbb;
    auto reset = [&] { fbb.Clear(); };
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, kProtocolVersion, wire::Message::Ping, false),
               DecodeError::MissingHeader, "no header");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), 0x4B53594F), DecodeError::WrongProtocol, "protocol id");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, kProtocolVersion + 1), DecodeError::UnknownVersion,
               "next version");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, 0), DecodeError::UnknownVersion, "version 0");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, kProtocolVersion, wire::Message::NONE),
               DecodeError::MissingBody, "type NONE");
    reset();
    expect_err(raw_packet(fbb, fb::Offset<wire::Snapshot>(0)), DecodeError::MissingBody, "snapshot without body");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, kProtocolVersion, wire::Message(uint8_t(wire::Message::MAX) + 1)),
               DecodeError::UnknownMessage, "type MAX + 1");
    reset();
    expect_err(raw_packet(fbb, wire::CreatePing(fbb, 1, 2), kProtocolId, kProtocolVersion, wire::Message(255)),
               DecodeError::UnknownMessage, "type 255");
    expect_err(raw_connect_request(0), DecodeError::RequestTooSmall, "unpadded connect request");
    {
        reset();
        const auto c = fbb.CreateVector(std::vector<uint8_t>(kCookieBytes));
        const auto pad = fbb.CreateVector(std::vector<uint8_t>(100));
        expect_err(raw_packet(fbb, wire::CreateChallengeResponse(fbb, 1, c, pad)), DecodeError::RequestTooSmall,
                   "short challenge response");
    }
    for (size_t len : {size_t(0), size_t(16), kCookieBytes - 1, kCookieBytes + 1}) {
        reset();
        const auto c = fbb.CreateVector(std::vector<uint8_t>(len));
        expect_err(raw_packet(fbb, wire::CreateChallenge(fbb, 1, c)), DecodeError::BadCookie, "cookie length");
        reset();
        const auto good = fbb.CreateVector(std::vector<uint8_t>(kCookieBytes));
        const auto mac = fbb.CreateVector(std::vector<uint8_t>(len == kCookieBytes + 1 ? kChallengeMacBytes + 1 : kChallengeMacBytes - 1));
        expect_err(raw_packet(fbb, wire::CreateChallenge(fbb, 1, good, mac)), DecodeError::BadCookie, "challenge mac length");
        // A full-size response (the size check comes first) with a bad cookie.
        Bytes full;
        for (size_t pad = 700; pad < kMaxDatagram && full.size() < kMinConnectRequestBytes; ++pad) {
            reset();
            const auto c2 = fbb.CreateVector(std::vector<uint8_t>(len));
            const auto p = fbb.CreateVector(std::vector<uint8_t>(pad));
            full = raw_packet(fbb, wire::CreateChallengeResponse(fbb, 1, c2, p));
        }
        ASSERT_EQ(full.size(), kMinConnectRequestBytes);
        expect_err(full, DecodeError::BadCookie, "response cookie length");
    }
    // Tokens outside kMinSealedTokenBytes..kMaxSealedTokenBytes, in full-size requests.
    for (size_t len : {size_t(0), kMinSealedTokenBytes - 1, kMaxSealedTokenBytes + 1}) {
        Bytes full;
        for (size_t pad = 0; pad < kMaxDatagram && full.size() < kMinConnectRequestBytes; pad += 1) {
            reset();
            const auto t = fbb.CreateVector(std::vector<uint8_t>(len));
            const auto p = fbb.CreateVector(std::vector<uint8_t>(pad));
            full = raw_packet(fbb, wire::CreateConnectRequest(fbb, 1, p, 99, t));
        }
        if (full.size() > kMaxDatagram) continue;  // an oversized token cannot fit a datagram anyway
        ASSERT_EQ(full.size(), kMinConnectRequestBytes) << len;
        expect_err(full, DecodeError::BadToken, "request token length");
    }
    // A response's proof of another length.
    for (size_t proof_bytes : {size_t(0), kProofBytes - 1, kProofBytes + 1}) {
        Bytes full;
        for (size_t pad = 0; pad < kMaxDatagram && full.size() < kMinConnectRequestBytes; pad += 1) {
            reset();
            const auto pr = fbb.CreateVector(std::vector<uint8_t>(proof_bytes));
            const auto c = fbb.CreateVector(std::vector<uint8_t>(kCookieBytes));
            const auto p = fbb.CreateVector(std::vector<uint8_t>(pad));
            full = raw_packet(fbb, wire::CreateChallengeResponse(fbb, 1, c, p, pr));
        }
        ASSERT_EQ(full.size(), kMinConnectRequestBytes) << proof_bytes;
        expect_err(full, DecodeError::BadToken, "proof length");
    }
    // Known skeletons: whole 32-byte hashes, at most kMaxKnownSkeletons of them.
    for (size_t known_bytes : {size_t(31), size_t(33), (kMaxKnownSkeletons + 1) * kSkeletonHashBytes, size_t(64)}) {
        Bytes full;
        for (size_t pad = 0; pad < kMaxDatagram && full.size() < kMinConnectRequestBytes; pad += 1) {
            reset();
            const auto kn = fbb.CreateVector(std::vector<uint8_t>(known_bytes));
            const auto c = fbb.CreateVector(std::vector<uint8_t>(kCookieBytes));
            const auto p = fbb.CreateVector(std::vector<uint8_t>(pad));
            full = raw_packet(fbb, wire::CreateChallengeResponse(fbb, 1, c, p, 0, kn));
        }
        ASSERT_EQ(full.size(), kMinConnectRequestBytes) << known_bytes;
        if (known_bytes == 64) EXPECT_EQ(decode_err(full), DecodeError::None) << "two hashes";
        else expect_err(full, DecodeError::BadSkeletonRef, "known skeletons length");
    }
    // Skeleton references: a 32-byte hash, a short name, at most kMaxRefsPerPacket of them.
    for (size_t hash_bytes : {size_t(0), size_t(31), size_t(33)}) {
        reset();
        const auto r = wire::CreateSkeletonRef(fbb, 1, 0, hash_bytes ? fbb.CreateVector(std::vector<uint8_t>(hash_bytes)) : 0);
        expect_err(raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, 0, 0, fbb.CreateVector(&r, 1))), DecodeError::BadSkeletonRef,
                   "reference hash length");
    }
    {
        reset();
        const auto h = fbb.CreateVector(std::vector<uint8_t>(kSkeletonHashBytes));
        const auto r = wire::CreateSkeletonRef(fbb, 1, fbb.CreateString(std::string(kMaxNameBytes + 1, 'n')), h);
        expect_err(raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, 0, 0, fbb.CreateVector(&r, 1))), DecodeError::StringTooLong,
                   "reference name");
        reset();
        const auto h2 = fbb.CreateVector(std::vector<uint8_t>(kSkeletonHashBytes));
        const auto r2 = wire::CreateSkeletonRef(fbb, 1, 0, h2);
        const std::vector<fb::Offset<wire::SkeletonRef>> many(kMaxRefsPerPacket + 1, r2);
        expect_err(raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, 0, 0, fbb.CreateVector(many))), DecodeError::BadSkeletonRef,
                   "too many references");
    }
    reset();
    expect_err(raw_packet(fbb, wire::CreateChallenge(fbb, 1, 0)), DecodeError::BadCookie, "no cookie");
    reset();
    expect_err(raw_packet(fbb, wire::CreateAccept(fbb, 1, 0, 30, 0, 0)), DecodeError::BadValue, "tick_hz 0");
    reset();
    expect_err(raw_packet(fbb, wire::CreateAccept(fbb, 1, 60, 0, 0, 0)), DecodeError::BadValue, "snapshot_hz 0");
    reset();
    expect_err(raw_packet(fbb, wire::CreateAccept(fbb, 0, 60, 30, 0, 0)), DecodeError::BadValue, "client id 0");
    reset();
    // Snapshots travel as raw datagrams only: one wrapped in a FlatBuffers packet is refused.
    expect_err(raw_packet(fbb, wire::CreateSnapshot(fbb, 1, 0, 1, 0)), DecodeError::UnknownMessage, "FlatBuffers snapshot");
    reset();
    expect_err(raw_packet(fbb, wire::CreateDisconnect(fbb, fbb.CreateString(std::string(kMaxReasonBytes + 1, 'r')))),
               DecodeError::StringTooLong, "long reason");
    {
        reset();
        const auto ids = fbb.CreateVector(std::vector<uint32_t>(kMaxAckIds + 1));
        expect_err(raw_packet(fbb, wire::CreateAck(fbb, 1, ids)), DecodeError::TooManyElements, "ack ids");
    }
    {
        reset();
        std::vector<wire::Event> ev(kMaxEvents + 1);
        const auto v = fbb.CreateVectorOfStructs(ev);
        expect_err(raw_packet(fbb, wire::CreateEvents(fbb, 1, v)), DecodeError::TooManyElements, "events");
        reset();
        const wire::Event bad(1, 1, wire::EventKind(3), 1);
        const auto v2 = fbb.CreateVectorOfStructs(&bad, 1);
        expect_err(raw_packet(fbb, wire::CreateEvents(fbb, 1, v2)), DecodeError::BadValue, "event kind");
    }
    // Skeletons.
    const std::vector<vec3> o2 = {{0, 0, 0}, {1, 0, 0}};
    EXPECT_EQ(decode_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, o2)), DecodeError::None);
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 1}, o2), DecodeError::BadSkeleton, "parent not before child");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-2, 0}, o2), DecodeError::BadSkeleton, "parent -2");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {0, 0}, o2), DecodeError::BadSkeleton, "root parent itself");
    expect_err(raw_skeleton_def(2, 0, {}, {}, {}), DecodeError::BadSkeleton, "no joints");
    expect_err(raw_skeleton_def(0, 0, {"a"}, {-1}, {{0, 0, 0}}), DecodeError::BadSkeleton, "joint_count 0");
    expect_err(raw_skeleton_def(2, 1, {"a", "b"}, {-1, 0}, o2), DecodeError::BadSkeleton, "beyond joint_count");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, {{0, 0, 0}, {NAN, 0, 0}}), DecodeError::BadSkeleton, "NaN");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, {{0, 0, 0}, {INFINITY, 0, 0}}), DecodeError::BadSkeleton,
               "inf");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, o2, 0.0f), DecodeError::BadSkeleton, "zero units");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, o2, -1.0f), DecodeError::BadSkeleton, "negative units");
    expect_err(raw_skeleton_def(2, 0, {"a", std::string(kMaxNameBytes + 1, 'b')}, {-1, 0}, o2),
               DecodeError::StringTooLong, "joint name");
    expect_err(raw_skeleton_def(2, 0, {"a", "b"}, {-1, 0}, o2, 1.0f, std::string(kMaxNameBytes + 1, 's')),
               DecodeError::StringTooLong, "skeleton name");
    expect_err(raw_skeleton_def(kMaxJoints + 1, 0, {"a"}, {-1}, {{0, 0, 0}}), DecodeError::TooManyJoints, "joints");
    EXPECT_EQ(decode_err(raw_skeleton_def(kMaxJoints, kMaxJoints - 1, {"a"}, {5}, {{0, 0, 0}})), DecodeError::None);
    {
        reset();
        const auto c = wire::CreateCharacterInfo(fbb, 1, 1, fbb.CreateString(std::string(kMaxNameBytes + 1, 'c')));
        const auto cv = fbb.CreateVector(&c, 1);
        expect_err(raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, 0, cv)), DecodeError::StringTooLong,
                   "character name");
    }
    {
        // One small table referenced many times: accepted by the verifier up to its table cap,
        // refused by the element limit; past the cap the verifier itself refuses.
        for (size_t refs : {size_t(200), size_t(kVerifierMaxTables)}) {
            reset();
            const auto c = wire::CreateCharacterInfo(fbb, 1, 1, 0);
            const std::vector<fb::Offset<wire::CharacterInfo>> many(refs, c);
            const auto cv = fbb.CreateVector(many);
            const Bytes b = raw_packet(fbb, wire::CreateSkeletonDefs(fbb, 1, 0, cv));
            ASSERT_LE(b.size(), kMaxDatagram);
            expect_err(b, refs > kVerifierMaxTables - 2 ? DecodeError::VerifyFailed : DecodeError::TooManyElements,
                       "shared tables");
        }
    }
    // Every error has a case above.
    for (int e = 1; e < int(DecodeError::Count); ++e)
        EXPECT_TRUE(seen.count(DecodeError(e))) << "no test produces " << decode_error_name(DecodeError(e));
    std::set<std::string> names;
    for (int e = 0; e < int(DecodeError::Count); ++e) names.insert(decode_error_name(DecodeError(e)));
    EXPECT_EQ(names.size(), size_t(DecodeError::Count));  // distinct names
    EXPECT_STREQ(message_type_name(MessageType::Snapshot), "Snapshot");
    EXPECT_STREQ(message_type_name(MessageType(200)), "unknown");
}

// ---- Acks against brute-force models ----

// A lossy channel that duplicates and reorders: each sent item arrives 0..max_delay steps later
// (or never, or twice).
template <class T>
struct Channel {
    struct InFlight {
        uint64_t arrive;
        uint64_t order;
        T item;
    };
    std::mt19937& rng;
    double loss, dup;
    int max_delay;
    std::vector<InFlight> flight;
    uint64_t counter = 0;
    void send(uint64_t now, const T& item) {
        std::uniform_real_distribution<double> u(0, 1);
        if (u(rng) < loss) return;
        const int copies = u(rng) < dup ? 2 : 1;
        for (int c = 0; c < copies; ++c)
            flight.push_back({now + uint64_t(std::uniform_int_distribution<int>(0, max_delay)(rng)), counter++, item});
    }
    std::vector<T> receive(uint64_t now) {
        std::vector<InFlight> due;
        auto it = std::partition(flight.begin(), flight.end(), [&](const InFlight& f) { return f.arrive > now; });
        due.assign(it, flight.end());
        flight.erase(it, flight.end());
        std::sort(due.begin(), due.end(), [](const InFlight& a, const InFlight& b) {
            return a.arrive != b.arrive ? a.arrive < b.arrive : a.order < b.order;
        });
        std::vector<T> out;
        for (const auto& f : due) out.push_back(f.item);
        return out;
    }
};

TEST(Protocol, AckTrackerMatchesModelUnderLossDuplicatesReorderingAndWraparound) {
    for (unsigned seed : {1u, 2u, 3u}) {
        std::mt19937 rng(seed);
        Channel<uint64_t> ch{rng, 0.2, 0.1, seed == 3 ? 80 : 40, {}};
        AckTracker tracker;
        EXPECT_FALSE(tracker.any());
        EXPECT_EQ(tracker.ack_bits(), 0u);
        std::set<uint64_t> received;  // absolute sequence numbers
        uint64_t newest = 0;
        bool any = false;
        const uint64_t start = 65536 - 300;  // wraps after 300 packets
        int fresh = 0, stale = 0;
        for (uint64_t t = 0; t < 80000; ++t) {
            ch.send(t, start + t);
            for (uint64_t abs : ch.receive(t)) {
                const bool model_fresh = !received.count(abs) && (!any || abs + 32 > newest);
                EXPECT_EQ(tracker.on_received(uint16_t(abs)), model_fresh) << abs;
                model_fresh ? ++fresh : ++stale;
                if (model_fresh) received.insert(abs);
                if (!any || abs > newest) newest = abs;
                any = true;
                uint32_t bits = 0;
                for (uint32_t i = 0; i < 32 && i <= newest; ++i)
                    if (received.count(newest - i)) bits |= 1u << i;
                ASSERT_EQ(tracker.ack(), uint16_t(newest));
                ASSERT_EQ(tracker.ack_bits(), bits) << "at " << abs;
            }
            while (!received.empty() && *received.begin() + 64 < newest) received.erase(received.begin());
        }
        EXPECT_GT(fresh, 25000);
        EXPECT_GT(stale, 5000);  // duplicates and late arrivals both happened
    }
}

TEST(Protocol, SentPacketLogMatchesModelUnderLossDuplicatesReorderingAndWraparound) {
    struct AckMsg {
        uint16_t ack;
        uint32_t bits;
        uint64_t abs_ack;  // model only
    };
    for (unsigned seed : {7u, 8u}) {
        std::mt19937 rng(seed);
        Channel<uint64_t> forward{rng, 0.25, 0.1, 30, {}};
        Channel<AckMsg> back{rng, 0.25, 0.15, 30, {}};
        AckTracker tracker;
        SentPacketLog log;
        std::set<uint64_t> model_acked;
        uint64_t newest_sent = 0, newest_received = 0;
        bool any_received = false;
        std::set<uint64_t> received;
        const uint64_t start = 65536 * 3 - 1000;
        std::vector<SentPacketLog::Acked> acked;
        size_t reported = 0;
        for (uint64_t t = 0; t < 80000; ++t) {
            const uint64_t abs = start + t;
            log.on_sent(uint16_t(abs), abs * 7 + 3);
            newest_sent = abs;
            EXPECT_EQ(log.tag(uint16_t(abs)), abs * 7 + 3);
            forward.send(t, abs);
            for (uint64_t r : forward.receive(t)) {
                tracker.on_received(uint16_t(r));
                if (!any_received || r > newest_received) newest_received = r;
                any_received = true;
                received.insert(r);
            }
            if (any_received) back.send(t, {tracker.ack(), tracker.ack_bits(), newest_received});
            for (const AckMsg& m : back.receive(t)) {
                acked.clear();
                const size_t n = log.on_ack(m.ack, m.bits, acked);
                ASSERT_EQ(n, acked.size());
                std::vector<uint64_t> want;
                for (int i = 31; i >= 0; --i) {
                    if (!(m.bits & (1u << i)) || m.abs_ack < uint64_t(i)) continue;
                    const uint64_t s = m.abs_ack - uint64_t(i);
                    ASSERT_TRUE(received.count(s)) << "acked a packet never received";
                    if (newest_sent - s >= SentPacketLog::kWindow || model_acked.count(s)) continue;
                    want.push_back(s);
                    model_acked.insert(s);
                }
                ASSERT_EQ(acked.size(), want.size());
                for (size_t i = 0; i < want.size(); ++i) {
                    EXPECT_EQ(acked[i].sequence, uint16_t(want[i]));
                    EXPECT_EQ(acked[i].tag, want[i] * 7 + 3);
                    EXPECT_TRUE(log.acked(uint16_t(want[i])));
                }
                reported += n;
            }
        }
        EXPECT_EQ(reported, model_acked.size());
        // Most delivered packets get acknowledged despite 25 % loss each way (ack redundancy).
        EXPECT_GT(double(model_acked.size()) / double(received.size()), 0.97);
    }
    // Acks for sequences never sent, or from before the window, are ignored.
    SentPacketLog log;
    std::vector<SentPacketLog::Acked> out;
    EXPECT_EQ(log.on_ack(5, ~0u, out), 0u);
    for (uint16_t s = 65530; s != 10; ++s) log.on_sent(s, s);
    EXPECT_EQ(log.on_ack(20, ~0u, out), 16u);  // covers 65525..20, of which 65530..9 were sent
    out.clear();
    EXPECT_EQ(log.on_ack(3, 0x1u, out), 0u);  // already acked
    EXPECT_FALSE(log.acked(12));
}

TEST(Protocol, AckTrackerEdgeCases) {
    AckTracker t;
    EXPECT_TRUE(t.on_received(65535));
    EXPECT_TRUE(t.on_received(0));
    EXPECT_EQ(t.ack(), 0);
    EXPECT_EQ(t.ack_bits(), 0b11u);
    EXPECT_FALSE(t.on_received(65535));
    EXPECT_TRUE(t.on_received(65534));
    EXPECT_EQ(t.ack_bits(), 0b111u);
    EXPECT_TRUE(t.on_received(100));  // a jump beyond the window
    EXPECT_EQ(t.ack(), 100);
    EXPECT_EQ(t.ack_bits(), 1u);
    EXPECT_FALSE(t.on_received(68));  // 32 behind: out of the window
    EXPECT_TRUE(t.on_received(69));   // 31 behind: the oldest bit
    EXPECT_EQ(t.ack_bits(), 0x8000'0001u);
    const PacketHeader h = t.header(7);
    EXPECT_EQ(h.sequence, 7);
    EXPECT_EQ(h.ack, 100);
    EXPECT_EQ(h.ack_bits, 0x8000'0001u);
}

// ---- Random bytes and mutations ----

struct Outcomes {
    size_t total = 0, accepted = 0;
    std::array<size_t, size_t(DecodeError::Count)> errors{};
    DecodeError run(std::span<const uint8_t> b) {
        DecodeError err = DecodeError::Count;
        const auto d = decode_packet(b, &err);
        ++total;
        EXPECT_EQ(d.has_value(), err == DecodeError::None);
        EXPECT_LT(size_t(err), size_t(DecodeError::Count));
        if (size_t(err) < errors.size()) ++errors[size_t(err)];
        if (d) {
            ++accepted;
            walk(*d);
        }
        return err;
    }
    // Reads everything a receiver would read (ASan/UBSan watch).
    static void walk(const DecodedPacket& d) {
        volatile uint64_t sink = 0;
        EXPECT_LE(d.size, kMaxDatagram);
        const wire::Packet* p = d.packet();
        auto str = [&](const fb::String* s) {
            if (s)
                for (char c : s->string_view()) sink = sink + uint8_t(c);
        };
        switch (d.type) {
            case MessageType::ConnectRequest:
                EXPECT_GE(d.size, kMinConnectRequestBytes);
                if (auto* v = p->message_as_ConnectRequest()->padding()) sink = sink + v->size();
                break;
            case MessageType::Challenge:
                EXPECT_EQ(p->message_as_Challenge()->cookie()->size(), kCookieBytes);
                break;
            case MessageType::ChallengeResponse:
                EXPECT_EQ(p->message_as_ChallengeResponse()->cookie()->size(), kCookieBytes);
                break;
            case MessageType::Accept: EXPECT_GT(p->message_as_Accept()->tick_hz(), 0); break;
            case MessageType::SkeletonDefs: {
                const auto* m = p->message_as_SkeletonDefs();
                if (m->defs())
                    for (const auto* def : *m->defs()) {
                        str(def->name());
                        SkeletonAssembler a;
                        std::string error;
                        EXPECT_TRUE(a.add(*def, &error)) << error;
                        if (auto s = skeleton_from_wire(*def, &error)) {
                            EXPECT_EQ(s->skeleton.validate(), "");
                        }
                    }
                if (m->characters())
                    for (const auto* c : *m->characters()) str(c->name());
                break;
            }
            case MessageType::Snapshot: {
                const DecodedPacket::SnapshotView s = d.snapshot();
                EXPECT_LT(s.part, s.part_count);
                for (uint8_t b : s.data) sink = sink + b;
                break;
            }
            case MessageType::Ack:
                if (auto* v = p->message_as_Ack()->reliable_ids())
                    for (uint32_t id : *v) sink = sink + id;
                break;
            case MessageType::Ping: sink = sink + p->message_as_Ping()->ping_id(); break;
            case MessageType::Pong: sink = sink + p->message_as_Pong()->server_tick(); break;
            case MessageType::Disconnect: str(p->message_as_Disconnect()->reason()); break;
            case MessageType::Events:
                if (auto* v = p->message_as_Events()->events()) {
                    for (const auto* e : *v) EXPECT_LE(uint8_t(e->kind()), uint8_t(wire::EventKind::MAX));
                }
                break;
            case MessageType::Viewpoint: {
                const auto* v = p->message_as_Viewpoint();
                for (float x : {v->x(), v->y(), v->z()}) EXPECT_LE(std::fabs(x), 1e6f);
                break;
            }
            case MessageType::Resync: {
                const auto* v = p->message_as_Resync();
                EXPECT_TRUE(v->first_joint() < kMaxJoints || v->first_joint() == 0xFFFF);
                break;
            }
            case MessageType::NONE: ADD_FAILURE() << "decoded a packet without a message"; break;
        }
    }
    size_t sum() const {
        size_t s = accepted;
        for (size_t i = 1; i < errors.size(); ++i) s += errors[i];
        return s;
    }
};

TEST(Protocol, RandomBytesNeverCrash) {
    std::mt19937 rng(20240601);
    Outcomes o;
    std::vector<uint8_t> buf;
    for (int i = 0; i < 100000; ++i) {
        const size_t n = std::uniform_int_distribution<size_t>(0, i % 10 == 0 ? kMaxDatagram + 100 : 200)(rng);
        buf.resize(n);
        for (auto& b : buf) b = uint8_t(rng());
        // Some with a valid-looking root offset and header location, to get past the first checks.
        if (n >= 24 && i % 2) {
            const uint32_t root = uint32_t(std::uniform_int_distribution<size_t>(4, n - 4)(rng)) & ~3u;
            std::memcpy(buf.data(), &root, 4);
        }
        o.run(buf);
    }
    EXPECT_EQ(o.total, 100000u);
    EXPECT_EQ(o.sum(), o.total);
    EXPECT_GT(o.errors[size_t(DecodeError::TooShort)], 0u);
    EXPECT_GT(o.errors[size_t(DecodeError::TooLong)], 0u);
    EXPECT_GT(o.errors[size_t(DecodeError::VerifyFailed)], 0u);
}

TEST(Protocol, MutatedPacketsNeverCrash) {
    const std::vector<Bytes> valid = sample_packets();
    std::set<MessageType> types;
    for (const Bytes& b : valid) types.insert(decode_ok(b).type);
    EXPECT_EQ(types.size(), size_t(MessageType::MAX));  // every message type

    std::mt19937 rng(77);
    auto rnd = [&](size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng); };
    Outcomes o;
    std::map<std::string, std::pair<size_t, size_t>> by_kind;  // kind -> (accepted, rejected)
    Bytes m;
    for (int i = 0; i < 100000; ++i) {
        const Bytes& src = valid[size_t(i) % valid.size()];
        m = src;
        const char* kind = "";
        switch (rnd(0, 4)) {
            case 0: {
                kind = "bit flips";
                for (size_t k = rnd(1, 8); k > 0; --k) m[rnd(0, m.size() - 1)] ^= uint8_t(1u << rnd(0, 7));
                break;
            }
            case 1: {
                kind = "truncation";
                m.resize(rnd(0, m.size() - 1));
                break;
            }
            case 2: {
                kind = "insertion";
                const size_t at = rnd(0, m.size());
                Bytes ins(rnd(1, 16));
                for (auto& b : ins) b = uint8_t(rng());
                m.insert(m.begin() + ptrdiff_t(at), ins.begin(), ins.end());
                break;
            }
            case 3: {
                kind = "overwrite";
                const size_t at = rnd(0, m.size() - 1);
                const size_t len = std::min(rnd(1, 16), m.size() - at);
                for (size_t k = 0; k < len; ++k) m[at + k] = uint8_t(rng());
                break;
            }
            default: {
                kind = "mixed";
                m[rnd(0, m.size() - 1)] = uint8_t(rng());
                if (rnd(0, 1)) m.resize(rnd(1, m.size()));
                if (rnd(0, 1)) m.insert(m.begin() + ptrdiff_t(rnd(0, m.size())), uint8_t(rng()));
                break;
            }
        }
        const DecodeError e = o.run(m);
        auto& [acc, rej] = by_kind[kind];
        (e == DecodeError::None ? acc : rej) += 1;
    }
    EXPECT_EQ(o.total, 100000u);
    EXPECT_EQ(o.sum(), o.total);
    for (const auto& [kind, ar] : by_kind) {
        EXPECT_GT(ar.second, 0u) << kind << " never rejected";
        if (kind != "truncation") {
            EXPECT_GT(ar.first, 0u) << kind << " never accepted";
        }
    }
    EXPECT_GT(o.accepted, 1000u);  // payload bytes (padding, snapshot data, names) take any value
    EXPECT_GT(o.errors[size_t(DecodeError::VerifyFailed)], 1000u);
    EXPECT_GT(o.errors[size_t(DecodeError::WrongProtocol)], 0u);
    std::printf("mutations: %zu accepted", o.accepted);
    for (int e = 1; e < int(DecodeError::Count); ++e)
        if (o.errors[size_t(e)]) std::printf(", %zu %s", o.errors[size_t(e)], decode_error_name(DecodeError(e)));
    std::printf("\n");

    // Directed: any change of the protocol id is rejected as such, any other version as unknown,
    // any change of the sequence / ack fields is accepted and read back.
    for (const Bytes& src : valid) {
        const DecodedPacket d = decode_ok(src);
        if (d.type == MessageType::Snapshot) {
            // The raw header: another magic is not a snapshot (and not a valid FlatBuffer either),
            // another version is unknown, sequence and ack bits read back.
            for (size_t k = 0; k < 4; ++k)
                for (int v = 0; v < 256; ++v) {
                    if (uint8_t(v) == src[k]) continue;
                    Bytes b = src;
                    b[k] = uint8_t(v);
                    ASSERT_NE(decode_err(b), DecodeError::None);
                }
            for (int v = 0; v < 65536; v += 7) {
                if (v == kProtocolVersion) continue;
                Bytes b = src;
                b[4] = uint8_t(v);
                b[5] = uint8_t(v >> 8);
                ASSERT_EQ(decode_err(b), DecodeError::UnknownVersion);
            }
            Bytes b = src;
            b[6] ^= 0x5A;   // sequence
            b[10] ^= 0x01;  // ack_bits
            const DecodedPacket e = decode_ok(b);
            EXPECT_EQ(e.sequence, uint16_t(d.sequence ^ 0x5A));
            EXPECT_EQ(e.ack_bits, d.ack_bits ^ 1u);
            EXPECT_EQ(e.snapshot().tick, d.snapshot().tick);
            continue;
        }
        const size_t at = size_t(reinterpret_cast<const uint8_t*>(d.packet()->header()) - d.storage.data());
        ASSERT_LE(at + sizeof(wire::PacketHeader), src.size());
        for (size_t k = 0; k < 4; ++k)
            for (int v = 0; v < 256; ++v) {
                if (uint8_t(v) == src[at + k]) continue;
                Bytes b = src;
                b[at + k] = uint8_t(v);
                ASSERT_EQ(decode_err(b), DecodeError::WrongProtocol);
            }
        for (int v = 0; v < 65536; v += 7) {
            if (v == kProtocolVersion) continue;
            Bytes b = src;
            b[at + 4] = uint8_t(v);
            b[at + 5] = uint8_t(v >> 8);
            ASSERT_EQ(decode_err(b), DecodeError::UnknownVersion);
        }
        Bytes b = src;
        b[at + 6] ^= 0x5A;  // sequence
        b[at + 12] ^= 0x01;  // ack_bits
        const DecodedPacket e = decode_ok(b);
        EXPECT_EQ(e.sequence, uint16_t(d.sequence ^ 0x5A));
        EXPECT_EQ(e.ack_bits, d.ack_bits ^ 1u);
        EXPECT_EQ(e.type, d.type);
    }
}

}  // namespace
}  // namespace ks::net

TEST(Protocol, ResyncRoundTripsAndAFirstJointBeyondTheLimitIsRefused) {
    using namespace ks::net;
    const auto ok = decode_packet(build_resync({3, 2, 1}, 7, 192, 9000));
    ASSERT_TRUE(ok);
    ASSERT_EQ(ok->type, MessageType::Resync);
    const auto* r = ok->message<wire::Resync>();
    EXPECT_EQ(r->character_id(), 7);
    EXPECT_EQ(r->first_joint(), 192);
    EXPECT_EQ(r->tick(), 9000u);
    EXPECT_TRUE(decode_packet(build_resync({0, 0, 0}, 7, 0xFFFF, 1)));  // every part
    DecodeError e = DecodeError::None;
    EXPECT_FALSE(decode_packet(build_resync({0, 0, 0}, 7, uint16_t(kMaxJoints), 1), &e));
    EXPECT_EQ(e, DecodeError::BadValue);
}

TEST(Protocol, ViewpointRoundTripsAndNonFiniteOrHugeValuesAreRefused) {
    using namespace ks::net;
    const auto ok = decode_packet(build_viewpoint({3, 2, 1}, 1.5f, -2.0f, 300.0f));
    ASSERT_TRUE(ok);
    ASSERT_EQ(ok->type, MessageType::Viewpoint);
    const auto* v = ok->message<wire::Viewpoint>();
    EXPECT_EQ(v->x(), 1.5f);
    EXPECT_EQ(v->y(), -2.0f);
    EXPECT_EQ(v->z(), 300.0f);
    for (float bad : {std::nanf(""), INFINITY, 2e6f, -2e6f}) {
        DecodeError e = DecodeError::None;
        EXPECT_FALSE(decode_packet(build_viewpoint({0, 0, 0}, 0.0f, bad, 0.0f), &e)) << bad;
        EXPECT_EQ(e, DecodeError::BadValue) << bad;
    }
}
