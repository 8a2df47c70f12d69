#include "common/codec/snapshot_codec.h"

#include <algorithm>
#include <cmath>

namespace ks {

namespace {

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

}  // namespace

void SnapshotHistory::add(uint32_t tick, std::span<const CharacterSnapshot> characters) {
    for (const CharacterSnapshot& c : characters) {
        auto& ring = rings_[c.id];
        if (ring.empty()) ring.resize(capacity_);
        Entry& e = ring[tick % capacity_];
        e.tick = tick;
        e.valid = true;
        e.state = c.state;
    }
}

const QCharacter* SnapshotHistory::find(uint16_t id, uint32_t tick) const {
    const auto it = rings_.find(id);
    if (it == rings_.end()) return nullptr;
    const Entry& e = it->second[tick % capacity_];
    return e.valid && e.tick == tick ? &e.state : nullptr;
}

std::vector<SnapshotPart> SnapshotBuilder::build(uint32_t tick, std::span<const CharacterSnapshot> characters,
                                                 const SnapshotHistory& history, const PrecisionLookup& precision,
                                                 const std::function<float(uint16_t)>& priority) {
    // Budget for this snapshot, with at most one snapshot's worth carried over.
    const double per_snapshot = cfg_.bandwidth_bps / 8.0 / std::max(1.0f, cfg_.snapshot_hz);
    double budget = per_snapshot + budget_carry_;

    // Highest accumulated priority first.
    std::vector<const CharacterSnapshot*> order;
    for (const CharacterSnapshot& c : characters) {
        PerCharacter& pc = chars_[c.id];
        pc.accumulator += priority ? priority(c.id) : 1.0f;
        order.push_back(&c);
    }
    std::stable_sort(order.begin(), order.end(), [this](const CharacterSnapshot* a, const CharacterSnapshot* b) {
        return chars_[a->id].accumulator > chars_[b->id].accumulator;
    });

    std::vector<SnapshotPart> parts;
    std::vector<uint8_t> chunk;
    for (const CharacterSnapshot* c : order) {
        const SkeletonPrecision* prec = precision(c->skeleton);
        if (prec == nullptr || prec->joints.size() != c->state.joints.size()) continue;
        PerCharacter& pc = chars_[c->id];
        // Baseline: the newest acknowledged state still in the shared history, same epoch.
        const QCharacter* base = nullptr;
        uint32_t base_tick = 0;
        if (pc.any_acked && tick > pc.newest_acked && tick - pc.newest_acked <= cfg_.max_baseline_age_ticks) {
            base = history.find(c->id, pc.newest_acked);
            base_tick = pc.newest_acked;
            if (base && (base->epoch != c->state.epoch || base->joints.size() != c->state.joints.size())) base = nullptr;
        }
        CharacterBaseline cb;
        uint32_t ctx_tick = 0;
        if (base) {
            cb.state = base;
            cb.age_s = double(tick - base_tick) / cfg_.tick_hz;
            const Sent& s = pc.sent[base_tick % pc.sent.size()];
            if (s.valid && s.tick == base_tick && s.ref != base_tick) {
                const QCharacter* ctx = history.find(c->id, s.ref);
                if (ctx && ctx->epoch == base->epoch && ctx->joints.size() == base->joints.size()) {
                    cb.context = ctx;
                    cb.context_age_s = double(base_tick - s.ref) / cfg_.tick_hz;
                    ctx_tick = s.ref;
                }
            }
        }
        chunk.clear();
        CodingCost cost;
        encode_character(chunk, c->state, base ? &cb : nullptr, *prec, &cost);

        std::vector<uint8_t> framed;
        put_varint(framed, c->id);
        framed.push_back(base ? 1 : 0);
        if (base) {
            put_varint(framed, tick - base_tick);
            put_varint(framed, cb.context ? base_tick - ctx_tick : 0);
        }
        put_varint(framed, uint32_t(chunk.size()));
        framed.insert(framed.end(), chunk.begin(), chunk.end());

        // Header bytes of a new datagram: format + count (<= 2 varint bytes).
        const size_t header = 1 + 2;
        if (framed.size() + header > cfg_.max_payload_bytes || double(framed.size()) > budget) {
            ++stats_.characters_skipped;
            continue;  // stays unsent; its accumulator keeps growing
        }
        if (parts.empty() || parts.back().data.size() + framed.size() > cfg_.max_payload_bytes) {
            parts.push_back({tick, {kSnapshotFormat, 0, 0}, {}});  // count patched below
        }
        SnapshotPart& part = parts.back();
        part.data.insert(part.data.end(), framed.begin(), framed.end());
        part.characters.push_back(c->id);
        budget -= double(framed.size());

        Sent& s = pc.sent[tick % pc.sent.size()];
        s = {tick, base ? base_tick : tick, true, false};
        pc.accumulator = 0.0f;
        ++stats_.characters_sent;
        const uint64_t bits = uint64_t(chunk.size()) * 8, joints = c->state.joints.size();
        stats_.joint_bits += bits;
        stats_.joints += joints;
        CodingCost& total = base ? stats_.delta_cost : stats_.full_cost;
        for (int k = 0; k < CodingCost::kCount; ++k) total.bits256[k] += cost.bits256[k];
        if (base) {
            ++stats_.characters_delta;
            stats_.delta_joint_bits += bits;
            stats_.delta_joints += joints;
        } else {
            ++stats_.characters_full;
            stats_.full_joint_bits += bits;
            stats_.full_joints += joints;
        }
    }
    // Patch each datagram's character count (2-byte varint slot, always two bytes).
    for (SnapshotPart& p : parts) {
        const uint32_t n = uint32_t(p.characters.size());
        p.data[1] = uint8_t((n & 0x7F) | 0x80);
        p.data[2] = uint8_t(n >> 7);
        stats_.payload_bytes += p.data.size();
        ++stats_.datagrams;
    }
    budget_carry_ = std::clamp(budget, 0.0, per_snapshot);
    return parts;
}

void SnapshotBuilder::on_delivered(uint32_t tick, std::span<const uint16_t> characters) {
    for (uint16_t id : characters) {
        auto it = chars_.find(id);
        if (it == chars_.end()) continue;
        PerCharacter& pc = it->second;
        Sent& s = pc.sent[tick % pc.sent.size()];
        if (!s.valid || s.tick != tick) continue;  // too old, or never sent
        s.acked = true;
        if (!pc.any_acked || tick > pc.newest_acked) {
            pc.newest_acked = tick;
            pc.any_acked = true;
        }
    }
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
        uint32_t id = 0, len = 0, base_age = 0, ctx_age = 0;
        if (!get_varint(data, pos, id) || id > 0xFFFF) return SnapshotError::Truncated;
        if (pos >= data.size()) return SnapshotError::Truncated;
        const uint8_t mode = data[pos++];
        if (mode > 1) return SnapshotError::BadFormat;
        if (mode == 1 && (!get_varint(data, pos, base_age) || !get_varint(data, pos, ctx_age)))
            return SnapshotError::Truncated;
        if (!get_varint(data, pos, len) || len > data.size() - pos) return SnapshotError::Truncated;
        const std::span<const uint8_t> bytes = data.subspan(pos, len);
        pos += len;
        const int skel = skeleton_of(uint16_t(id));
        const SkeletonPrecision* prec = skel < 0 ? nullptr : precision(uint16_t(skel));
        if (prec == nullptr) return SnapshotError::UnknownCharacter;
        CharacterBaseline cb;
        if (mode == 1) {
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
        if (!decode_character(bytes, decoded, mode == 1 ? &cb : nullptr, *prec)) return SnapshotError::BadPayload;
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
