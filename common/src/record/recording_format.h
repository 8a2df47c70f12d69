#pragma once
// The on-disk layout of a recording (see recording.h) shared by its writer and reader: the file
// and block magics, block kinds and size limits, and the little-endian fields of a block header.
// Declared for common/record/*.cpp only.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include <kinesync/common/math/quat.h>
#include <kinesync/common/math/vec3.h>
#include "schema/recording_generated.h"

namespace ks::recording_format {

// Poses are copied to and from the flatbuffer vectors of structs with memcpy: same layout, and
// FlatBuffers stores little-endian.
static_assert(std::endian::native == std::endian::little, "recordings assume a little-endian host");
static_assert(sizeof(::kinesync::rec::Vec3) == sizeof(vec3) && alignof(::kinesync::rec::Vec3) == alignof(vec3));
static_assert(sizeof(::kinesync::rec::Quat) == sizeof(quat) && alignof(::kinesync::rec::Quat) == alignof(quat));
static_assert(sizeof(::kinesync::rec::Event) == 12);

constexpr char kFileMagic[8] = {'K', 'S', 'R', 'E', 'C', '0', '0', '1'};
constexpr char kBlockMagic[4] = {'K', 'S', 'C', 'H'};
// Block header: magic, kind, compressed size, raw size, CRC-32 of the compressed bytes (u32 each).
constexpr size_t kBlockHeaderBytes = 20;
constexpr uint32_t kKindHeader = 0;
constexpr uint32_t kKindChunk = 1;
// A block's flatbuffer (and its compressed form) is at most this big: the writer starts a new
// chunk once the current one passes kChunkSoftLimit, which keeps every block far below it.
constexpr uint64_t kMaxBlockBytes = uint64_t(1) << 30;
constexpr size_t kChunkSoftLimit = size_t(64) << 20;
constexpr size_t kMaxJoints = 32767;  // parents are int16

inline void put_u32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
    p[2] = uint8_t(v >> 16);
    p[3] = uint8_t(v >> 24);
}
inline uint32_t get_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// strerror(e), or "unknown error" for 0.
std::string errno_text(int e);

}  // namespace ks::recording_format
