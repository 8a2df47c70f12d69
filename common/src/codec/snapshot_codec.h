#pragma once
// Snapshots: the payload format and the receiver-side decoder. The sender's side (the state
// history and the per-client builder that chooses baselines, priorities and packing) is the
// server's: server/src/net/snapshot_builder.h.
//
// Payload of one datagram (the opaque bytes a Snapshot message carries; the tick travels beside
// it), decodable on its own given the receiver's history:
//   u8 format (kSnapshotFormat)
//   varint character count
//   per character: varint id, u8 mode (0 full, 1 delta, 2 delta with a level of detail),
//                  [delta: varint baseline age in ticks, varint context age in ticks (0: none)],
//                  [mode 2: varint hold depth: deeper joints keep the baseline's values],
//                  varint length, range-coded bytes.
// Nothing here knows about sockets: the server and the offline replay share it.

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/src/codec/character_codec.h"

namespace ks {

constexpr uint8_t kSnapshotFormat = 2;  // 2: predictions without libm, a 16-bit state check per character

struct CharacterSnapshot {
    uint16_t id = 0;
    uint16_t skeleton = 0;
    QCharacter state;
};

// The payload's varints (LEB128, at most 5 bytes for 32 bits).
void put_varint(std::vector<uint8_t>& out, uint32_t v);
bool get_varint(std::span<const uint8_t> in, size_t& pos, uint32_t& v);

// Precision plan of a skeleton id (nullptr for an unknown one).
using PrecisionLookup = std::function<const SkeletonPrecision*(uint16_t skeleton)>;

struct DecodedCharacter {
    uint16_t id;
    const QCharacter* state;  // owned by the decoder's history
    bool full;
};

enum class SnapshotError {
    None,
    BadFormat,
    Truncated,
    UnknownCharacter,  // no skeleton known for the id
    MissingBaseline,   // baseline or context state not (or no longer) in the history
    BadPayload,        // the range-coded bytes do not decode to a valid state
};
const char* snapshot_error_name(SnapshotError e);

// Receiver side: decodes payloads against its own history of decoded states.
class SnapshotDecoder {
public:
    // tick_hz must match the sender's: baseline ages travel in ticks.
    explicit SnapshotDecoder(float tick_hz = 60.0f, uint32_t capacity_ticks = 512) : tick_hz_(tick_hz), capacity_(capacity_ticks) {}
    void set_tick_hz(float hz) { tick_hz_ = hz; }
    // skeleton_of(id) gives a character's skeleton id (or -1 if unknown).
    SnapshotError decode(uint32_t tick, std::span<const uint8_t> data, const std::function<int(uint16_t)>& skeleton_of,
                         const PrecisionLookup& precision, std::vector<DecodedCharacter>& out);
    const QCharacter* find(uint16_t id, uint32_t tick) const;
    // Drop a character's history (e.g. its skeleton changed).
    void forget(uint16_t id) { rings_.erase(id); }

private:
    struct Entry {
        uint32_t tick = 0;
        bool valid = false;
        QCharacter state;
    };
    float tick_hz_;
    uint32_t capacity_;
    std::unordered_map<uint16_t, std::vector<Entry>> rings_;
};

}  // namespace ks
