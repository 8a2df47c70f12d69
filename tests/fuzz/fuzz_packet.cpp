// libFuzzer target for the datagram decoder (built with -DKS_FUZZ=ON and clang):
//   ./kinesync-fuzz-packet -max_total_time=20 [corpus_dir]
//   ./kinesync-fuzz-packet -ks_write_seeds=DIR   writes one valid packet of every type to DIR
//                                                (a seed corpus) and exits
// Every input must either decode into a packet within the protocol's limits or be rejected with
// a DecodeError; ASan/UBSan abort on any out-of-bounds read or undefined behaviour. A decoded
// packet is walked completely (every string, vector and skeleton) so any accessor the verifier
// would let misbehave is exercised.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "common/src/net/connect_token.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"
#include "tests/fuzz/seed_files.h"

namespace {

using namespace ks::net;

volatile uint64_t g_sink = 0;

void touch(const flatbuffers::String* s) {
    if (s)
        for (char c : s->string_view()) g_sink = g_sink + uint8_t(c);
}
template <class T>
void touch(const flatbuffers::Vector<T>* v) {
    if (v)
        for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) g_sink = g_sink + uint64_t(v->Get(i));
}

void walk(const DecodedPacket& d) {
    const wire::Packet* p = d.packet();
    switch (d.type) {
        case MessageType::ConnectRequest: touch(p->message_as_ConnectRequest()->padding()); break;
        case MessageType::Challenge: touch(p->message_as_Challenge()->cookie()); break;
        case MessageType::ChallengeResponse: touch(p->message_as_ChallengeResponse()->cookie()); break;
        case MessageType::Accept: g_sink = g_sink + p->message_as_Accept()->server_time_us(); break;
        case MessageType::SkeletonDefs: {
            const auto* m = p->message_as_SkeletonDefs();
            SkeletonAssembler assembler;
            if (m->defs())
                for (const wire::SkeletonDef* def : *m->defs()) {
                    touch(def->name());
                    std::string error;
                    assembler.add(*def, &error);  // may refuse parts that contradict each other
                    if (auto s = skeleton_from_wire(*def, &error); s && !s->skeleton.validate().empty()) std::abort();
                }
            if (m->characters())
                for (const wire::CharacterInfo* c : *m->characters()) touch(c->name());
            break;
        }
        case MessageType::Snapshot:
            for (uint8_t b : d.snapshot().data) g_sink = g_sink + b;
            break;
        case MessageType::Ack: touch(p->message_as_Ack()->reliable_ids()); break;
        case MessageType::Ping: g_sink = g_sink + p->message_as_Ping()->ping_id(); break;
        case MessageType::Pong: g_sink = g_sink + p->message_as_Pong()->server_tick(); break;
        case MessageType::Disconnect: touch(p->message_as_Disconnect()->reason()); break;
        case MessageType::Events: {
            const auto* e = p->message_as_Events()->events();
            if (e)
                for (const wire::Event* ev : *e) g_sink = g_sink + ev->tick() + uint8_t(ev->kind());
            break;
        }
        case MessageType::Viewpoint: {
            const auto* v = p->message_as_Viewpoint();
            if (!(std::fabs(v->x()) <= 1e6f && std::fabs(v->y()) <= 1e6f && std::fabs(v->z()) <= 1e6f)) std::abort();  // decode checked it
            break;
        }
        case MessageType::Resync: {
            const auto* r = p->message_as_Resync();
            if (r->first_joint() >= kMaxJoints && r->first_joint() != 0xFFFF) std::abort();  // decode checked it
            g_sink = g_sink + r->character_id() + r->tick();
            break;
        }
        case MessageType::NONE: std::abort();  // decode_packet never returns it
    }
}

std::vector<std::vector<uint8_t>> seeds() {
    static ks::Skeleton skel;
    skel.names = {"hips", "spine", "head", "left_leg", "right_leg"};
    skel.parents = {-1, 0, 1, 0, 0};
    skel.offsets = {{0, 1, 0}, {0, 0.2f, 0}, {0, 0.5f, 0}, {-0.1f, -0.1f, 0}, {0.1f, -0.1f, 0}};
    const PacketHeader h{100, 99, 0xFFFF0001u};
    Cookie cookie{};
    for (size_t i = 0; i < cookie.size(); ++i) cookie[i] = uint8_t(i * 17);
    const SkeletonDefInput def{1, "seed", &skel, 0.01f};
    const SkeletonDefInput part{2, "part", &skel, 1.0f, 2, 2};
    const SkeletonDefInput defs[] = {def, part};
    const CharacterInfoInput chars[] = {{1, 1, "one"}, {2, 2, "two"}};
    const uint8_t data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const uint32_t ids[] = {7, 8};
    const EventInfo events[] = {{1, 2, wire::EventKind::Teleport, 3}, {4, 5, wire::EventKind::Reset, 6}};
    const SkeletonHash known[] = {skeleton_hash(skel, 0.01f), SkeletonHash{7}};
    const SkeletonRefInput refs[] = {{3, "by ref", known[0]}};
    return {build_connect_request(h, 1),
            build_challenge(h, 1, cookie),
            build_challenge_response(h, 1, cookie),
            build_challenge_response(h, 1, cookie, nullptr, known),
            build_skeleton_defs(h, 6, {}, chars, refs),
            build_accept(h, {1, 60, 30, 1000, 2000}),
            build_skeleton_defs(h, 3, defs, chars),
            build_snapshot(h, 5, 1, 2, data),
            build_ack(h, 5, ids),
            build_ping(h, 10, 11),
            build_pong(h, 10, 11, 12, 13),
            build_disconnect(h, "bye"),
            build_events(h, 4, events), build_viewpoint(h, 1.0f, 2.0f, 3.0f),
            build_resync(h, 2, 96, 1234)};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    const std::string dir = ks::fuzz::seeds_dir(*argc, *argv);
    if (dir.empty()) return 0;
    int n = 0;
    for (const auto& packet : seeds()) ks::fuzz::write_seed(dir + "/seed_" + std::to_string(n++), packet);
    std::printf("wrote %d seed packets to %s\n", n, dir.c_str());
    std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    DecodeError err = DecodeError::Count;
    const auto d = decode_packet(std::span<const uint8_t>(data, size), &err);
    if (d.has_value() != (err == DecodeError::None)) std::abort();
    if (d) {
        if (d->size != size) std::abort();
        walk(*d);
    } else if (err == DecodeError::Count || decode_error_name(err)[0] == '\0') {
        std::abort();
    }
    // The same bytes as a sealed datagram (must never open under a key the input cannot know) and
    // as a connect token (parsed, or refused with a reason).
    static const Key key = [] {
        Key k;
        k.fill(7);
        return k;
    }();
    PacketOpener opener(key);
    std::vector<uint8_t> inner;
    if (opener.open(std::span<const uint8_t>(data, size), inner) == PacketOpener::Result::Ok) std::abort();
    std::string why;
    if (!parse_connect_token(std::span<const uint8_t>(data, size), &why) && why.empty()) std::abort();
    return 0;
}
