// libFuzzer target for the client's whole datagram handling (built with -DKS_FUZZ=ON and clang):
//   ./kinesync-fuzz-client -max_total_time=20
// Each input is a script for a fresh dev-mode ClientSession: records of [u8 op][u16 length][bytes].
// op 0x80: the server's handshake (a Challenge for the session's own salt, then an Accept);
// op 0x40: the skeleton definitions of two characters, one small and one of 200 joints (sent in
// parts), so later snapshots can decode; op 0x10: a character on a skeleton by reference (the
// session holds the small one: bit 0 of the first byte replaces its hash with the next bytes);
// op 0x20: the bytes as a snapshot payload behind a valid
// snapshot header (tick, part and part count from the first bytes); anything else: the bytes as a
// datagram. Between records the session's timers run and everything it hands out is taken. Any
// crash, sanitizer report or exception escaping the session is a finding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "client/src/session.h"
#include "common/src/net/protocol.h"

namespace {

using namespace ks;

Skeleton chain(int joints) {
    Skeleton s;
    for (int j = 0; j < joints; ++j) {
        s.names.push_back("j" + std::to_string(j));
        s.parents.push_back(j - 1);
        s.offsets.push_back(j == 0 ? vec3{} : vec3{0, 0.05f, 0});
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const Skeleton small = chain(5), large = chain(200);
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
            session.on_datagram(net::build_snapshot({seq++, 0, 0}, tick, part, count, bytes.subspan(6)), t);
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
    return 0;
}
