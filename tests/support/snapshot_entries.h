#pragma once
// Reading a snapshot payload's entry framing (common/src/codec/snapshot_codec.h) in tests that
// inspect or tamper with what the builder sent: each entry's id, mode byte, and coded bytes.

#include <cstdint>
#include <span>
#include <vector>

#include "common/src/codec/snapshot_codec.h"

namespace ks::test {

struct PayloadEntry {
    uint16_t id;
    uint32_t mode;       // the mode byte (kModeMask, kModePart)
    size_t coded_at;     // offset of the coded bytes in the payload
    size_t coded_bytes;
};

inline std::vector<PayloadEntry> payload_entries(std::span<const uint8_t> data) {
    std::vector<PayloadEntry> out;
    size_t pos = 1;
    uint32_t count = 0, v = 0;
    if (data.empty() || data[0] != kSnapshotFormat || !get_varint(data, pos, count)) return out;
    for (uint32_t i = 0; i < count && pos < data.size(); ++i) {
        uint32_t id = 0, len = 0;
        get_varint(data, pos, id);
        const uint32_t mode = data[pos++];
        if (mode & kModePart) get_varint(data, pos, v), get_varint(data, pos, v);
        if ((mode & kModeMask) >= 1) get_varint(data, pos, v), get_varint(data, pos, v);
        if ((mode & kModeMask) == 2) get_varint(data, pos, v);
        if (!get_varint(data, pos, len)) break;
        out.push_back({uint16_t(id), mode, pos, len});
        pos += len;
    }
    return out;
}

}  // namespace ks::test
