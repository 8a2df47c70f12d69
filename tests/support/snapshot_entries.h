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
    uint32_t mode;       // kModeMask, kModePart and kModeAhead bits (EntryHeader::mode)
    size_t coded_at;     // offset of the coded bytes in the payload
    size_t coded_bytes;
    uint32_t base_age;   // ticks back to the baseline (deltas)
};

inline std::vector<PayloadEntry> payload_entries(std::span<const uint8_t> data) {
    std::vector<PayloadEntry> out;
    EntryHeader h;
    for (size_t pos = 0; pos < data.size() && read_entry_header(data, pos, h) == SnapshotError::None;)
        out.push_back({uint16_t(h.id), h.mode, size_t(h.bytes.data() - data.data()), h.bytes.size(), h.base_age});
    return out;
}

}  // namespace ks::test
