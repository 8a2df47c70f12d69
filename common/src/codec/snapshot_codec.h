#pragma once
// Snapshots: the payload format and the receiver-side decoder. The sender's side (the state
// history and the per-client builder that chooses baselines, priorities and packing) is the
// server's: server/src/net/snapshot_builder.h.
//
// Payload of one datagram (the opaque bytes a Snapshot message carries; the tick travels beside
// it), decodable on its own given the receiver's history. Its format (8) has no byte of its own:
// the datagram header's protocol version (12) names it.
//   entries to the end of the payload (at most kMaxEntries), each:
//                  varint id, u8 mode (bits 0-1: 0 full, 1 delta, 2 delta with a level of detail,
//                  3 a flags byte follows; bit 2: the delta's context is the state its baseline
//                  was coded against, none if that was full (no context age follows); bit 3: the last entry (its coded bytes run to the
//                  payload's end, no length); bits 4-7: a delta's baseline age in ticks when
//                  1..15, else 0),
//                  [flags byte: bits 0-1 the kind (0..2), bit 2 a part of the character, bit 3 a
//                  look-ahead; at least one of the two, nothing else],
//                  [part: varint first joint, varint joint count],
//                  [look-ahead: varint ticks ahead of the snapshot's tick, varint plan],
//                  [delta: varint baseline age in ticks unless the mode byte holds it,
//                          varint context age in ticks from the baseline (0: none) unless bit 2
//                          says it],
//                  [mode 2: varint hold depth: deeper joints keep the baseline's values],
//                  [varint length unless the last], range-coded bytes.
// The usual entry (a whole character, a delta against a baseline up to 15 ticks old, whose
// context is the baseline's own baseline) costs its id and the mode byte, plus its length unless
// it is the last. A receiver keeps, per joint of each state, how old the state it was decoded
// against was, to find such a context.
// An entry without the part bit carries every joint. A character whose update does not fit one
// datagram is sent as parts (plan_parts): each is coded against its own baseline, checked on its
// own and acknowledged on its own, so a lost part costs only its joints. The receiver keeps, per
// character and tick, which joints it holds; a part's baseline must hold all of the part's joints.
// Nothing here knows about sockets: the server and the offline replay share it.

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/src/codec/character_codec.h"

namespace ks {

// EntryHeader::mode: the kind (kModeMask: 0 full, 1 delta, 2 delta with a level of detail) and
// the part and look-ahead bits. On the wire those two ride in a flags byte (kModeFlagsFollow).
constexpr uint8_t kModeMask = 0x3, kModePart = 0x4, kModeAhead = 0x8;
// The wire's mode byte beside the kind: kind 3 = a flags byte follows; the context is the
// baseline's own baseline; the last entry.
constexpr uint8_t kModeFlagsFollow = 0x3, kModeBaseContext = 0x4, kModeLast = 0x8;
constexpr uint32_t kMaxAheadTicks = 2000;  // 2 s at 1000 Hz ticks
constexpr uint32_t kMaxEntries = 4096;     // per payload
// Ticks of states each end keeps per character: a delta's baseline and context lie within them
// (the sender's history holds no older state, so the receiver needs none).
constexpr uint32_t kHistoryTicks = 256;
constexpr uint32_t kModeAgeShift = 4, kMaxModeAge = 15;  // a baseline age the mode byte holds

// Characters with more joints than this are sent in parts of at most this many joints (a full
// part of 96 joints codes to about 600-800 bytes, within one datagram's payload).
constexpr uint32_t kMaxPartJoints = 96;
// The parts of a character of `joints` joints: one range for up to kMaxPartJoints, else equal
// consecutive ranges.
std::vector<JointRange> plan_parts(size_t joints);
// The same without allocating (the builder's and decoder's per-entry path): how many parts, and
// part k of them.
uint32_t part_count(uint32_t joints);
JointRange part_range(uint32_t joints, uint32_t k);
// Every joint, or one of plan_parts(joints): the only ranges a receiver accepts.
bool is_planned_part(JointRange range, uint32_t joints);

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
    const QCharacter* state;  // owned by the decoder's history; valid within `joints`
    bool full;
    JointRange joints;        // the joints this entry carried (every joint unless a part)
};

enum class SnapshotError {
    None,
    BadFormat,         // the datagram's framing (refuses the rest of the datagram)
    Truncated,         // likewise
    UnknownCharacter,  // no skeleton known for the id (this entry only)
    MissingBaseline,   // baseline or context joints not (or no longer) in the history (this entry only)
    BadPayload,        // the coded bytes do not decode to a state that passes its check (this entry only)
    BadRange,          // a part's joints are not one of the skeleton's planned parts (this entry only)
};
constexpr size_t kSnapshotErrorKinds = 7;
const char* snapshot_error_name(SnapshotError e);
// Errors that leave the rest of the datagram unreadable (the others refuse one entry).
inline bool is_framing_error(SnapshotError e) { return e == SnapshotError::BadFormat || e == SnapshotError::Truncated; }

// One entry's framing, as read from a payload.
struct EntryHeader {
    uint32_t id = 0, mode = 0, first = 0, count = 0, base_age = 0, ctx_age = 0, hold = 0, ahead_ticks = 0, plan = 0;
    bool base_context = false;       // the context is the baseline's own baseline (ctx_age: found by the decoder)
    bool last = false;               // its coded bytes ran to the payload's end
    std::span<const uint8_t> bytes;  // the coded bytes
};
// Reads the entry at `pos` and moves past it: None, Truncated or BadFormat (the framing's limits).
SnapshotError read_entry_header(std::span<const uint8_t> data, size_t& pos, EntryHeader& h);
// Writes an entry's framing (every field of `h` but `bytes`), the length of its `coded_bytes`
// unless it is the `last` of its payload, then nothing: the coded bytes follow.
void put_entry_header(std::vector<uint8_t>& out, const EntryHeader& h, size_t coded_bytes, bool last);

// An entry the decoder refused; the others in its datagram are applied.
struct RefusedCharacter {
    uint16_t id;
    JointRange joints;  // as the entry said (every joint of the skeleton if it said none)
    SnapshotError error;
};

// Receiver side: decodes payloads against its own history of decoded states.
class SnapshotDecoder {
public:
    // tick_hz must match the sender's: baseline ages travel in ticks.
    explicit SnapshotDecoder(float tick_hz = 60.0f, uint32_t capacity_ticks = kHistoryTicks) : tick_hz_(tick_hz), capacity_(capacity_ticks) {}
    void set_tick_hz(float hz) { tick_hz_ = hz; }
    // skeleton_of(id) gives a character's skeleton id (or -1 if unknown). Entries decode one by
    // one: a refused entry is listed in `refused` (when given) and the others are still decoded.
    // Returns a framing error (the rest of the datagram unread), else the first entry's error,
    // else None.
    SnapshotError decode(uint32_t tick, std::span<const uint8_t> data, const std::function<int(uint16_t)>& skeleton_of,
                         const PrecisionLookup& precision, std::vector<DecodedCharacter>& out,
                         std::vector<RefusedCharacter>* refused = nullptr);
    // A character's state at a tick, if the decoder holds every joint of `joints` (default: any).
    const QCharacter* find(uint16_t id, uint32_t tick, JointRange joints = {}) const;
    // Drop a character's history (e.g. its skeleton changed).
    void forget(uint16_t id) { rings_.erase(id); }
    // Bytes the history holds: per character, a state per tick received within kHistoryTicks
    // (and a few spare), each the character's joints, and a slot per tick of the window.
    size_t held_bytes() const;

private:
    struct Entry {
        uint32_t tick = 0;
        bool valid = false;
        QCharacter state;
        std::vector<uint8_t> have;  // per joint: decoded for this tick
        std::vector<uint8_t> ref;   // per joint: the age of the baseline it was decoded against (0: full)
    };
    // One character's states: a slot per tick of the window (tick % capacity), and the ticks held,
    // oldest first, so a state out of reach gives its buffers back before a new one takes any.
    struct Ring {
        std::vector<Entry> slots;
        std::deque<uint32_t> order;
        std::vector<Entry> spare;  // retired buffers, at most kSpareStates
    };
    static constexpr size_t kSpareStates = 4;
    Entry& slot_for(Ring& ring, uint32_t tick, size_t joints);
    const Entry* find_entry(uint16_t id, uint32_t tick, JointRange joints) const;
    SnapshotError decode_entry(uint32_t tick, const EntryHeader& h, const SkeletonPrecision& prec, JointRange range,
                               DecodedCharacter& out);
    float tick_hz_;
    uint32_t capacity_;
    std::unordered_map<uint16_t, Ring> rings_;
    QCharacter scratch_;
};

}  // namespace ks
