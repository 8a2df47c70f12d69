#include "common/src/codec/snapshot_codec.h"

#include <algorithm>
#include <cmath>

namespace ks {

void put_varint(std::vector<uint8_t>& out, uint32_t v) {
    while (v >= 0x80) {
        out.push_back(uint8_t(v | 0x80));
        v >>= 7;
    }
    out.push_back(uint8_t(v));
}

bool get_varint(std::span<const uint8_t> in, size_t& pos, uint32_t& v) {
    v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (pos >= in.size()) return false;
        const uint8_t b = in[pos++];
        v |= uint32_t(b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}


uint32_t part_count(uint32_t joints) { return joints <= kMaxPartJoints ? 1u : (joints + kMaxPartJoints - 1) / kMaxPartJoints; }

// Equal consecutive ranges: the first joints % parts get one joint more.
JointRange part_range(uint32_t joints, uint32_t k) {
    const uint32_t parts = part_count(joints), base = joints / parts, extra = joints % parts;
    return {k * base + std::min(k, extra), base + (k < extra ? 1u : 0u)};
}

std::vector<JointRange> plan_parts(size_t joints) {
    std::vector<JointRange> out;
    for (uint32_t k = 0; k < part_count(uint32_t(joints)); ++k) out.push_back(part_range(uint32_t(joints), k));
    return out;
}

bool is_planned_part(JointRange range, uint32_t joints) {
    if (range.count == 0 || range.first >= joints || range.count > joints - range.first) return false;
    if (range.first == 0 && range.count == joints) return true;
    const uint32_t parts = part_count(joints), base = joints / parts, extra = joints % parts;
    // The part that would start at range.first, if any.
    const uint32_t k = range.first < extra * (base + 1) ? range.first / (base + 1) : extra + (range.first - extra * (base + 1)) / base;
    if (k >= parts) return false;
    const JointRange r = part_range(joints, k);
    return r.first == range.first && r.count == range.count;
}

const char* snapshot_error_name(SnapshotError e) {
    switch (e) {
        case SnapshotError::None: return "none";
        case SnapshotError::BadFormat: return "bad format";
        case SnapshotError::Truncated: return "truncated";
        case SnapshotError::UnknownCharacter: return "unknown character";
        case SnapshotError::MissingBaseline: return "missing baseline";
        case SnapshotError::BadPayload: return "bad payload";
        case SnapshotError::BadRange: return "bad joint range";
    }
    return "?";
}

const SnapshotDecoder::Entry* SnapshotDecoder::find_entry(uint16_t id, uint32_t tick, JointRange joints) const {
    const auto it = rings_.find(id);
    if (it == rings_.end() || it->second.slots.empty()) return nullptr;
    const Entry& e = it->second.slots[tick % capacity_];
    if (!e.valid || e.tick != tick) return nullptr;
    if (joints.end() > e.have.size()) return nullptr;
    for (uint32_t j = joints.first; j < joints.end(); ++j)
        if (!e.have[j]) return nullptr;
    return &e;
}

const QCharacter* SnapshotDecoder::find(uint16_t id, uint32_t tick, JointRange joints) const {
    const Entry* e = find_entry(id, tick, joints);
    return e ? &e->state : nullptr;
}

void put_entry_header(std::vector<uint8_t>& out, const EntryHeader& h, size_t coded_bytes, bool last) {
    const uint32_t kind = h.mode & kModeMask, flags = h.mode & (kModePart | kModeAhead);
    const bool delta = kind >= 1;
    const bool short_age = delta && h.base_age >= 1 && h.base_age <= kMaxModeAge;
    put_varint(out, h.id);
    out.push_back(uint8_t((flags ? kModeFlagsFollow : kind) | (delta && h.base_context ? kModeBaseContext : 0) | (last ? kModeLast : 0) |
                          (short_age ? h.base_age << kModeAgeShift : 0)));
    if (flags) out.push_back(uint8_t(kind | flags));
    if (h.mode & kModePart) {
        put_varint(out, h.first);
        put_varint(out, h.count);
    }
    if (h.mode & kModeAhead) {
        put_varint(out, h.ahead_ticks);
        put_varint(out, h.plan);
    }
    if (delta && !short_age) put_varint(out, h.base_age);
    if (delta && !h.base_context) put_varint(out, h.ctx_age);
    if (kind == 2) put_varint(out, h.hold);
    if (!last) put_varint(out, uint32_t(coded_bytes));
}

size_t SnapshotDecoder::held_bytes() const {
    size_t n = 0;
    auto buffers = [](const Entry& e) { return e.state.joints.capacity() * sizeof(QJoint) + e.have.capacity() + e.ref.capacity(); };
    for (const auto& [id, ring] : rings_) {
        n += (ring.slots.capacity() + ring.spare.capacity()) * sizeof(Entry) + ring.order.size() * sizeof(uint32_t);
        for (const Entry& e : ring.slots) n += buffers(e);
        for (const Entry& e : ring.spare) n += buffers(e);
    }
    return n;
}

// The slot of `tick`, holding that tick's state (fresh when it held another). States no longer in
// reach (kHistoryTicks older than `tick`) are retired first: their buffers go to the spares (a few
// kept for the next states, the rest freed), so a character holds only what it received within
// the window however long the client runs.
SnapshotDecoder::Entry& SnapshotDecoder::slot_for(Ring& ring, uint32_t tick, size_t joints) {
    if (ring.slots.empty()) ring.slots.resize(capacity_);
    Entry& e = ring.slots[tick % capacity_];
    if (e.valid && e.tick == tick && e.have.size() == joints) return e;
    while (!ring.order.empty() && tick > ring.order.front() && tick - ring.order.front() >= capacity_) {
        Entry& old = ring.slots[ring.order.front() % capacity_];
        ring.order.pop_front();
        if (!old.valid || old.tick > tick || tick - old.tick < capacity_) continue;  // reused by a later tick since
        old.valid = false;
        if (ring.spare.size() < kSpareStates) ring.spare.push_back(std::move(old));
        old = Entry{};
    }
    if (!e.valid && e.state.joints.capacity() == 0 && !ring.spare.empty()) {
        e = std::move(ring.spare.back());
        ring.spare.pop_back();
    }
    e.tick = tick;
    e.valid = true;
    e.state.joints.assign(joints, QJoint{});
    e.have.assign(joints, 0);
    e.ref.assign(joints, 0);
    ring.order.push_back(tick);
    // Ticks that keep landing in one slot (a hostile sender alternating T and T - 256) never age
    // out of the front: forgetting the oldest keeps the list to the window (slots still bound the states).
    while (ring.order.size() > capacity_) ring.order.pop_front();
    return e;
}

// The mode byte, and the flags byte when it says one follows: kind, part and look-ahead bits.
static SnapshotError read_mode(std::span<const uint8_t> data, size_t& pos, EntryHeader& h, uint32_t& mode_age) {
    if (pos >= data.size()) return SnapshotError::Truncated;
    const uint32_t byte = data[pos++];
    mode_age = byte >> kModeAgeShift;
    h.base_context = (byte & kModeBaseContext) != 0;
    h.last = (byte & kModeLast) != 0;
    h.mode = byte & kModeMask;
    if (h.mode == kModeFlagsFollow) {
        if (pos >= data.size()) return SnapshotError::Truncated;
        const uint32_t flags = data[pos++];
        // One way to write each header: a flags byte carries a part or a look-ahead, and no more.
        if ((flags & kModeMask) > 2 || (flags & ~uint32_t(kModeMask | kModePart | kModeAhead)) || !(flags & (kModePart | kModeAhead)))
            return SnapshotError::BadFormat;
        h.mode = flags;
    }
    if ((h.mode & kModeMask) == 0 && (mode_age != 0 || h.base_context)) return SnapshotError::BadFormat;  // a full state has no baseline
    return SnapshotError::None;
}

SnapshotError read_entry_header(std::span<const uint8_t> data, size_t& pos, EntryHeader& h) {
    h = EntryHeader{};
    if (!get_varint(data, pos, h.id) || h.id > 0xFFFF) return SnapshotError::Truncated;
    uint32_t mode_age = 0;
    if (const SnapshotError e = read_mode(data, pos, h, mode_age); e != SnapshotError::None) return e;
    const uint32_t mode = h.mode & kModeMask;
    if ((h.mode & kModePart) && (!get_varint(data, pos, h.first) || !get_varint(data, pos, h.count)))
        return SnapshotError::Truncated;
    if ((h.mode & kModeAhead) && (!get_varint(data, pos, h.ahead_ticks) || !get_varint(data, pos, h.plan)))
        return SnapshotError::Truncated;
    if (h.ahead_ticks > kMaxAheadTicks || h.plan > 0xFFFF) return SnapshotError::BadFormat;
    if (mode >= 1) {
        h.base_age = mode_age;
        if (mode_age == 0 && !get_varint(data, pos, h.base_age)) return SnapshotError::Truncated;
        if (!h.base_context && !get_varint(data, pos, h.ctx_age)) return SnapshotError::Truncated;
    }
    if (mode == 2 && !get_varint(data, pos, h.hold)) return SnapshotError::Truncated;
    if (h.hold > 255) return SnapshotError::BadFormat;
    uint32_t len = uint32_t(data.size() - pos);
    if (!h.last && (!get_varint(data, pos, len) || len > data.size() - pos)) return SnapshotError::Truncated;
    h.bytes = data.subspan(pos, len);
    pos += len;
    return SnapshotError::None;
}

SnapshotError SnapshotDecoder::decode_entry(uint32_t tick, const EntryHeader& h, const SkeletonPrecision& prec, JointRange range,
                                            DecodedCharacter& out) {
    const uint16_t id = uint16_t(h.id);
    const uint32_t mode = h.mode & kModeMask;
    CharacterBaseline cb;
    if (mode >= 1) {
        if (h.base_age == 0 || h.base_age > tick || h.base_age >= capacity_ || h.base_age > 0xFF) return SnapshotError::MissingBaseline;
        const Entry* base = find_entry(id, tick - h.base_age, range);
        if (base == nullptr) return SnapshotError::MissingBaseline;
        cb.state = &base->state;
        uint32_t ctx_age = h.ctx_age;
        if (h.base_context) {
            // The baseline's own baseline: the same for every joint of the range, or not one state.
            ctx_age = base->ref[range.first];
            for (uint32_t j = range.first; j < range.end(); ++j)
                if (base->ref[j] != ctx_age) return SnapshotError::MissingBaseline;
        }
        if (ctx_age > 0) {
            if (ctx_age > tick - h.base_age || h.base_age + ctx_age >= capacity_) return SnapshotError::MissingBaseline;
            cb.context = find(id, tick - h.base_age - ctx_age, range);
            if (cb.context == nullptr) return SnapshotError::MissingBaseline;
        }
        cb.context_age_s = double(ctx_age) / tick_hz_;
    }
    cb.age_s = double(h.base_age) / tick_hz_;
    cb.hold_depth = mode == 2 ? int(h.hold) : -1;
    if (!decode_character(h.bytes, scratch_, mode >= 1 ? &cb : nullptr, prec, range)) return SnapshotError::BadPayload;
    Entry& e = slot_for(rings_[id], tick, prec.joints.size());
    e.state.epoch = scratch_.epoch;
    e.state.ahead = (h.mode & kModeAhead) != 0;
    e.state.ahead_ticks = uint16_t(h.ahead_ticks);
    e.state.plan = uint16_t(h.plan);
    std::copy(scratch_.joints.begin() + range.first, scratch_.joints.begin() + range.end(), e.state.joints.begin() + range.first);
    std::fill(e.have.begin() + range.first, e.have.begin() + range.end(), uint8_t(1));
    std::fill(e.ref.begin() + range.first, e.ref.begin() + range.end(), uint8_t(mode >= 1 ? h.base_age : 0));
    out = {id, &e.state, mode == 0, range};
    return SnapshotError::None;
}

SnapshotError SnapshotDecoder::decode(uint32_t tick, std::span<const uint8_t> data,
                                      const std::function<int(uint16_t)>& skeleton_of, const PrecisionLookup& precision,
                                      std::vector<DecodedCharacter>& out, std::vector<RefusedCharacter>* refused) {
    out.clear();
    if (refused) refused->clear();
    SnapshotError first_error = SnapshotError::None;
    size_t pos = 0;
    for (uint32_t i = 0; pos < data.size(); ++i) {
        if (i == kMaxEntries) return SnapshotError::BadFormat;
        EntryHeader h;
        if (const SnapshotError e = read_entry_header(data, pos, h); e != SnapshotError::None) return e;
        const int skel = skeleton_of(uint16_t(h.id));
        const SkeletonPrecision* prec = skel < 0 ? nullptr : precision(uint16_t(skel));
        const uint32_t joints = prec ? uint32_t(prec->joints.size()) : 0;
        JointRange range = (h.mode & kModePart) ? JointRange{h.first, h.count} : JointRange{0, joints};
        SnapshotError e = SnapshotError::None;
        if (prec == nullptr) e = SnapshotError::UnknownCharacter;
        else if (!is_planned_part(range, joints)) e = SnapshotError::BadRange;
        DecodedCharacter d{};
        if (e == SnapshotError::None) e = decode_entry(tick, h, *prec, range, d);
        if (e == SnapshotError::None) {
            out.push_back(d);
            continue;
        }
        if (first_error == SnapshotError::None) first_error = e;
        if (refused) refused->push_back({uint16_t(h.id), range, e});
    }
    return first_error;
}

}  // namespace ks
