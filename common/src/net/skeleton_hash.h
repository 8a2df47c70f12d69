#pragma once
// A skeleton's identity across sessions and servers: its canonical bytes and their BLAKE2b-256.
//
// A client that already holds a skeleton (from an earlier session, or shipped with the game) says
// so in its handshake by hash, and the server sends a reference instead of the definition
// (schema/PROTOCOL.md, "Skeletons a client already holds"). The hash covers everything the codec
// and the client's FK depend on: joint count, parents, offsets (their float bits), joint names and
// metres per unit; not the skeleton's display name (two servers may name one rig differently).
//
// The canonical bytes are also the skeleton cache's file format (client/src/skeleton_cache.h), all
// little-endian:
//   "KSKL", uint8 format 1, uint16 joint count (1..kMaxJoints), float32 metres per unit;
//   per joint: int16 parent (-1 or an earlier joint), float32 x, y, z, uint8 name length (at
//   most 64), the name's bytes;
//   nothing after the last joint.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kinesync/common/anim/skeleton.h>

namespace ks::net {

constexpr size_t kSkeletonHashBytes = 32;
using SkeletonHash = std::array<uint8_t, kSkeletonHashBytes>;

// Throws ks::Error (InvalidSkeleton) when the skeleton is not well formed, a name is longer than
// 64 bytes, or metres_per_unit is not finite and positive.
std::vector<uint8_t> canonical_skeleton(const Skeleton& s, float metres_per_unit);
SkeletonHash hash_canonical_skeleton(std::span<const uint8_t> canonical);
SkeletonHash skeleton_hash(const Skeleton& s, float metres_per_unit);

struct CanonicalSkeleton {
    Skeleton skeleton;
    float metres_per_unit = 1.0f;
};
// Reads canonical bytes; nullopt and *why ("byte N: what") when they are not exactly that.
std::optional<CanonicalSkeleton> parse_canonical_skeleton(std::span<const uint8_t> bytes, std::string* why = nullptr);

// 64 lower-case hex digits, and back (nullopt unless exactly that).
std::string to_hex(const SkeletonHash& h);
std::optional<SkeletonHash> skeleton_hash_from_hex(std::string_view hex);

}  // namespace ks::net
