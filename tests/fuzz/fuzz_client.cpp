// libFuzzer target for the client's whole datagram handling (built with -DKS_FUZZ=ON and clang):
//   ./kinesync-fuzz-client -max_total_time=20
// Each input is a script for a fresh dev-mode ClientSession: records of [u8 op][u16 length][bytes].
// op 0x80: the server's handshake (a Challenge for the session's own salt, then an Accept);
// op 0x40: the skeleton definitions of two characters, one small and one of 200 joints (sent in
// parts), so later snapshots can decode; op 0x10: a character on a skeleton by reference (the
// session holds the small one: bit 0 of the first byte replaces its hash with the next bytes);
// op 0x20: the bytes as a snapshot payload behind a valid
// snapshot header (tick, part and part count from the first bytes; the payload cut to what a
// datagram holds); anything else: the bytes as a
// datagram. Between records the session's timers run and everything it hands out is taken. Any
// crash, sanitizer report or exception escaping the session is a finding.
//   ./kinesync-fuzz-client -ks_write_seeds=DIR   writes scripts whose snapshots the session decodes
//   (full states, deltas naming their baseline's own baseline as the context, a large character's
//   parts), checks that it decodes every entry of them, and exits (1 if it does not)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "client/src/session.h"
#include "common/src/codec/snapshot_codec.h"
#include "common/src/net/protocol.h"
#include "tests/fuzz/seed_files.h"

namespace {

using namespace ks;

Skeleton chain(int joints) {
    Skeleton s;
    for (int j = 0; j < joints; ++j) {
        s.names.push_back("j" + std::to_string(j));
        s.parents.push_back(j - 1);
        // Offsets that differ joint to joint, so 200 joints still take more than one datagram.
        s.offsets.push_back(j == 0 ? vec3{} : vec3{0.001f * float(j % 7), 0.05f + 0.0001f * float(j), 0});
    }
    return s;
}

uint64_t salt_of(ClientSession& session) {
    for (const auto& d : session.take_outgoing()) {
        const auto p = net::decode_packet(d);
        if (p && p->type == net::MessageType::ConnectRequest) return p->message<net::wire::ConnectRequest>()->client_salt();
    }
    return 0;
}

// A script record: [op][u16 length][bytes].
void record(std::vector<uint8_t>& script, uint8_t op, const std::vector<uint8_t>& bytes) {
    script.push_back(op);
    script.push_back(uint8_t(bytes.size()));
    script.push_back(uint8_t(bytes.size() >> 8));
    script.insert(script.end(), bytes.begin(), bytes.end());
}

// A chain turning a little more each tick, quantized as the server would.
QCharacter chain_state(const Skeleton& s, const SkeletonPrecision& prec, uint32_t tick) {
    Pose p(s);
    for (size_t j = 0; j < p.rot.size(); ++j) {
        p.rot[j] = quat_from_angle_axis(0.01f * float(tick) + 0.002f * float(j), vec3{0, 0, 1});
        p.ang[j] = vec3{0, 0, 0.6f};
    }
    return quantize_character(p, s, prec, 0);
}

// A snapshot record of one entry (the datagram `part` of `parts`): in full, or a delta against
// the state `base_age` ticks older naming that state's own baseline as the context.
std::vector<uint8_t> snapshot(uint32_t tick, uint8_t part, uint8_t parts, uint16_t id, const QCharacter& q, const QCharacter* base,
                              uint32_t base_age, const QCharacter* context, uint32_t context_age, const SkeletonPrecision& prec,
                              JointRange range, bool split) {
    const CharacterBaseline cb{base, base_age / 60.0, context, context_age / 60.0};
    std::vector<uint8_t> coded;
    encode_character(coded, q, base ? &cb : nullptr, prec, range);
    EntryHeader h;
    h.id = id, h.mode = (base ? 1u : 0u) | (split ? kModePart : 0u), h.first = range.first, h.count = range.count;
    h.base_age = base_age, h.base_context = base != nullptr;
    std::vector<uint8_t> out{uint8_t(tick), uint8_t(tick >> 8), uint8_t(tick >> 16), uint8_t(tick >> 24), part, parts};
    put_entry_header(out, h, coded.size(), true);
    out.insert(out.end(), coded.begin(), coded.end());
    return out;
}

// Scripts after the handshake and the definitions: the small character at ticks 2 (full), 4 and
// 6 (deltas: no context, then tick 2); the large one's parts at tick 2, then its first part at 4.
std::vector<std::vector<uint8_t>> seed_scripts(const Skeleton& small, const Skeleton& large) {
    const SkeletonPrecision ps = plan_precision(small, 1.0f), pl = plan_precision(large, 1.0f);
    std::vector<uint8_t> head;
    record(head, 0x80, {});
    record(head, 0x40, {});
    std::vector<uint8_t> a = head, b = head;
    const QCharacter s2 = chain_state(small, ps, 2), s4 = chain_state(small, ps, 4), s6 = chain_state(small, ps, 6);
    record(a, 0x20, snapshot(2, 0, 1, 0, s2, nullptr, 0, nullptr, 0, ps, all_joints(ps), false));
    record(a, 0x20, snapshot(4, 0, 1, 0, s4, &s2, 2, nullptr, 0, ps, all_joints(ps), false));
    record(a, 0x20, snapshot(6, 0, 1, 0, s6, &s4, 2, &s2, 2, ps, all_joints(ps), false));
    const QCharacter l2 = chain_state(large, pl, 2), l4 = chain_state(large, pl, 4);
    const std::vector<JointRange> parts = plan_parts(pl.joints.size());
    for (uint8_t k = 0; k < parts.size(); ++k)
        record(b, 0x20, snapshot(2, k, uint8_t(parts.size()), 1, l2, nullptr, 0, nullptr, 0, pl, parts[k], true));
    record(b, 0x20, snapshot(4, 0, 1, 1, l4, &l2, 2, nullptr, 0, pl, parts[0], true));
    return {a, b};
}

}  // namespace

namespace {

const Skeleton& small_skeleton() {
    static const Skeleton s = chain(5);
    return s;
}
const Skeleton& large_skeleton() {
    static const Skeleton s = chain(200);
    return s;
}

// Runs one script through a fresh session; returns its stats.
ClientSessionStats run_script(const uint8_t* data, size_t size) {
    const Skeleton& small = small_skeleton();
    const Skeleton& large = large_skeleton();
    ClientSession session;
    // The session holds the small skeleton (offered by hash), so a reference to it resolves and one
    // to anything else is refused.
    session.set_known_skeletons({{net::skeleton_hash(small, 1.0f), small, 1.0f}});
    double t = 0.0;
    session.connect(t);
    session.update(t);
    const uint64_t salt = salt_of(session);
    uint16_t seq = 1;
    uint32_t mid = 1;
    size_t pos = 0;
    while (pos + 3 <= size) {
        const uint8_t op = data[pos];
        const size_t len = std::min<size_t>(size - pos - 3, size_t(data[pos + 1]) | size_t(data[pos + 2]) << 8);
        const std::span<const uint8_t> bytes(data + pos + 3, len);
        pos += 3 + len;
        if (op == 0x80) {
            net::Cookie cookie{};
            session.on_datagram(net::build_challenge({seq++, 0, 0}, salt, cookie), t);
            session.on_datagram(net::build_accept({seq++, 0, 0}, {7, 60, 30, 0, 0}), t);
        } else if (op == 0x40) {
            const net::SkeletonDefInput defs[] = {{0, "small", &small, 1.0f, 0, -1}, {1, "large", &large, 1.0f, 0, -1}};
            const net::CharacterInfoInput chars[] = {{0, 0, "a"}, {1, 1, "b"}};
            for (const net::SkeletonDefsPlan& plan : net::plan_skeleton_defs(defs, chars))
                session.on_datagram(net::build_skeleton_defs({seq++, 0, 0}, mid++, plan.defs, plan.characters), t);
        } else if (op == 0x10 && len >= 2) {
            // Characters on a skeleton by reference: the one offered, or a hash from the input.
            net::SkeletonHash h = net::skeleton_hash(small, 1.0f);
            if (bytes[0] & 1) std::copy_n(bytes.begin() + 1, std::min(h.size(), bytes.size() - 1), h.begin());
            const net::SkeletonRefInput refs[] = {{uint16_t(2 + bytes[1] % 4), "ref", h}};
            const net::CharacterInfoInput chars[] = {{uint16_t(2 + bytes[1] % 4), uint16_t(2 + bytes[1] % 4), "r"}};
            session.on_datagram(net::build_skeleton_defs({seq++, 0, 0}, mid++, {}, chars, refs), t);
        } else if (op == 0x20 && len >= 6) {
            const uint32_t tick = uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
            const uint8_t count = uint8_t(std::max<int>(1, bytes[5]));
            const uint8_t part = uint8_t(bytes[4] % count);
            // At most what a datagram holds (build_snapshot refuses more).
            const size_t data_bytes = std::min(bytes.size() - 6, net::max_snapshot_data_bytes());
            session.on_datagram(net::build_snapshot({seq++, 0, 0}, tick, part, count, bytes.subspan(6, data_bytes)), t);
        } else {
            session.on_datagram(bytes, t);
        }
        t += 0.01;
        session.update(t);
        session.take_outgoing();
        session.take_received();
        session.take_poses();
        session.take_events();
        session.take_new_skeletons();
        session.take_used_skeletons();
    }
    return session.stats();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    run_script(data, size);
    return 0;
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    const std::string dir = ks::fuzz::seeds_dir(*argc, *argv);
    if (dir.empty()) return 0;
    int n = 0;
    for (const std::vector<uint8_t>& script : seed_scripts(small_skeleton(), large_skeleton())) {
        // Every entry decodes: seeds that drift from the format would only test the refusals.
        const ClientSessionStats st = run_script(script.data(), script.size());
        const uint64_t want = n == 0 ? 3 : 4;
        if (st.characters_decoded != want || st.entries_refused != 0 || st.snapshot_errors != 0) {
            std::fprintf(stderr, "seed %d: %llu of %llu entries decoded, %llu refused, %llu datagrams unreadable\n", n,
                         (unsigned long long)st.characters_decoded, (unsigned long long)want, (unsigned long long)st.entries_refused,
                         (unsigned long long)st.snapshot_errors);
            std::exit(1);
        }
        ks::fuzz::write_seed(dir + "/seed-snapshots-" + std::to_string(n++), script);
    }
    std::printf("wrote %d seed scripts to %s\n", n, dir.c_str());
    std::exit(0);
}
