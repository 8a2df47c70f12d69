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


const char* snapshot_error_name(SnapshotError e) {
    switch (e) {
        case SnapshotError::None: return "none";
        case SnapshotError::BadFormat: return "bad format";
        case SnapshotError::Truncated: return "truncated";
        case SnapshotError::UnknownCharacter: return "unknown character";
        case SnapshotError::MissingBaseline: return "missing baseline";
        case SnapshotError::BadPayload: return "bad payload";
    }
    return "?";
}

const QCharacter* SnapshotDecoder::find(uint16_t id, uint32_t tick) const {
    const auto it = rings_.find(id);
    if (it == rings_.end()) return nullptr;
    const Entry& e = it->second[tick % capacity_];
    return e.valid && e.tick == tick ? &e.state : nullptr;
}

SnapshotError SnapshotDecoder::decode(uint32_t tick, std::span<const uint8_t> data,
                                      const std::function<int(uint16_t)>& skeleton_of, const PrecisionLookup& precision,
                                      std::vector<DecodedCharacter>& out) {
    out.clear();
    size_t pos = 0;
    if (data.empty() || data[0] != kSnapshotFormat) return SnapshotError::BadFormat;
    pos = 1;
    uint32_t count = 0;
    if (!get_varint(data, pos, count)) return SnapshotError::Truncated;
    if (count > 4096) return SnapshotError::BadFormat;
    QCharacter decoded;
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t id = 0, len = 0, base_age = 0, ctx_age = 0, hold = 0;
        if (!get_varint(data, pos, id) || id > 0xFFFF) return SnapshotError::Truncated;
        if (pos >= data.size()) return SnapshotError::Truncated;
        const uint8_t mode = data[pos++];
        if (mode > 2) return SnapshotError::BadFormat;
        if (mode >= 1 && (!get_varint(data, pos, base_age) || !get_varint(data, pos, ctx_age)))
            return SnapshotError::Truncated;
        if (mode == 2 && !get_varint(data, pos, hold)) return SnapshotError::Truncated;
        if (hold > 255) return SnapshotError::BadFormat;
        if (!get_varint(data, pos, len) || len > data.size() - pos) return SnapshotError::Truncated;
        const std::span<const uint8_t> bytes = data.subspan(pos, len);
        pos += len;
        const int skel = skeleton_of(uint16_t(id));
        const SkeletonPrecision* prec = skel < 0 ? nullptr : precision(uint16_t(skel));
        if (prec == nullptr) return SnapshotError::UnknownCharacter;
        CharacterBaseline cb;
        if (mode >= 1) {
            if (base_age == 0 || base_age > tick) return SnapshotError::BadFormat;
            cb.state = find(uint16_t(id), tick - base_age);
            if (cb.state == nullptr) return SnapshotError::MissingBaseline;
            if (ctx_age > 0) {
                if (ctx_age > tick - base_age) return SnapshotError::BadFormat;
                cb.context = find(uint16_t(id), tick - base_age - ctx_age);
                if (cb.context == nullptr) return SnapshotError::MissingBaseline;
            }
        }
        cb.age_s = double(base_age) / tick_hz_;
        cb.context_age_s = double(ctx_age) / tick_hz_;
        cb.hold_depth = mode == 2 ? int(hold) : -1;
        if (!decode_character(bytes, decoded, mode >= 1 ? &cb : nullptr, *prec)) return SnapshotError::BadPayload;
        auto& ring = rings_[uint16_t(id)];
        if (ring.empty()) ring.resize(capacity_);
        Entry& e = ring[tick % capacity_];
        e.tick = tick;
        e.valid = true;
        e.state = decoded;
        out.push_back({uint16_t(id), &e.state, mode == 0});
    }
    return SnapshotError::None;
}

}  // namespace ks
