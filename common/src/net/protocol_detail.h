#pragma once
// What the protocol's source files share and its users do not need: the per-packet element
// limits of SkeletonDefs, the reused FlatBuffers builder with its envelope and size check, and
// the checks of skeleton definitions (sent and received). Declared for common/net/*.cpp only.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/src/net/protocol.h"

namespace ks::net::detail {

constexpr size_t kMaxDefsPerPacket = 32;
constexpr size_t kMaxCharactersPerPacket = 128;

// A builder for one packet, not one per thread: nothing thread_local with a destructor
// (tests/thread_exit_test.sh says why).
flatbuffers::FlatBufferBuilder builder();

// Wraps `body` in the Packet envelope (protocol id, version and `h`); returns the datagram size.
template <class T>
size_t finish(flatbuffers::FlatBufferBuilder& fbb, const PacketHeader& h, flatbuffers::Offset<T> body) {
    const wire::PacketHeader header(kProtocolId, kProtocolVersion, h.sequence, h.ack, 0, h.ack_bits);
    fbb.Finish(wire::CreatePacket(fbb, &header, wire::MessageTraits<T>::enum_value, body.Union()));
    return fbb.GetSize();
}

// The finished datagram's bytes; throws std::invalid_argument when it exceeds kMaxDatagram.
std::vector<uint8_t> take(flatbuffers::FlatBufferBuilder& fbb, const char* what);

// Throws std::invalid_argument when `s` is longer than `limit` bytes.
void check_name(std::string_view s, size_t limit, const char* what);

struct SkeletonJoints;  // skeleton_coding.h
// The semantic limits of one received SkeletonDef (a whole skeleton or a part), its coded joints
// decoded into *joints when given, their new name bytes taken from *new_name_bytes (a packet's
// kMaxNewNameBytesPerPacket); sets *why (when given) on failure. A part coded against another
// skeleton (base_skeleton) is decoded against `base`; without it only its framing is checked, and
// *joints is left as it was (the receiver decodes it once it holds the base).
DecodeError check_skeleton_def(const wire::SkeletonDef& d, std::string* why, size_t* new_name_bytes,
                               SkeletonJoints* joints = nullptr, const Skeleton* base = nullptr);

// Throws std::invalid_argument when a skeleton definition to send breaks a protocol limit.
void check_def_input(const SkeletonDefInput& d);

// Builds a SkeletonDefs packet into `fbb` from definitions (checked) and their coded joints (not
// checked against kMaxDatagram); returns its size.
size_t build_skeleton_defs_into(flatbuffers::FlatBufferBuilder& fbb, const PacketHeader& h, uint32_t message_id,
                                std::span<const SkeletonDefInput> defs, std::span<const std::span<const uint8_t>> coded,
                                std::span<const CharacterInfoInput> characters, std::span<const SkeletonRefInput> refs);

}  // namespace ks::net::detail
