#include "server/src/net/snapshot_builder.h"

#include <algorithm>
#include <cmath>

namespace ks {

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
                                                 const std::function<float(uint16_t)>& priority, EncodeCache* cache,
                                                 const std::function<int(uint16_t)>& hold_depth) {
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
    int skipped_in_row = 0;
    // The previous snapshot left most characters out: the budget is far short of carrying
    // everyone, and a far character's top is worth more than its limbs.
    const bool pressed = left_out_ * 2 > characters.size();
    size_t sent = 0;
    for (const CharacterSnapshot* c : order) {
        const SkeletonPrecision* prec = precision(c->skeleton);
        if (prec == nullptr || prec->joints.size() != c->state.joints.size()) continue;
        PerCharacter& pc = chars_[c->id];
        // What this client holds for a tick: the shared history's state, or the mix it was sent
        // with a level of detail.
        bool client_specific = false;
        auto client_state = [&](uint32_t t) -> const QCharacter* {
            const Sent& s = pc.sent[t % pc.sent.size()];
            if (s.valid && s.tick == t && s.held) {
                client_specific = true;
                return s.held.get();
            }
            return history.find(c->id, t);
        };
        // Baseline: the newest acknowledged state still in the shared history, same epoch.
        const QCharacter* base = nullptr;
        uint32_t base_tick = 0;
        if (pc.any_acked && tick > pc.newest_acked && tick - pc.newest_acked <= cfg_.max_baseline_age_ticks) {
            base = client_state(pc.newest_acked);
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
                const QCharacter* ctx = client_state(s.ref);
                if (ctx && ctx->epoch == base->epoch && ctx->joints.size() == base->joints.size()) {
                    cb.context = ctx;
                    cb.context_age_s = double(base_tick - s.ref) / cfg_.tick_hz;
                    ctx_tick = s.ref;
                }
            }
        }
        // Level of detail (far characters, with a baseline): only the hierarchy's top is coded.
        // Only while the budget is far short: with room for most, every joint goes.
        cb.hold_depth = base && hold_depth && pressed ? hold_depth(c->id) : -1;
        const bool lod = cb.hold_depth >= 0;
        std::shared_ptr<QCharacter> mixed;
        auto make = [&] {
            EncodeCache::Entry e;
            chunk.clear();
            if (lod) mixed = std::make_shared<QCharacter>();
            encode_character(chunk, c->state, base ? &cb : nullptr, *prec, &e.cost, mixed.get());
            put_varint(e.framed, c->id);
            e.framed.push_back(base ? (lod ? 2 : 1) : 0);
            if (base) {
                put_varint(e.framed, tick - base_tick);
                put_varint(e.framed, cb.context ? base_tick - ctx_tick : 0);
            }
            if (lod) put_varint(e.framed, uint32_t(cb.hold_depth));
            put_varint(e.framed, uint32_t(chunk.size()));
            e.framed.insert(e.framed.end(), chunk.begin(), chunk.end());
            e.chunk_bytes = chunk.size();
            return e;
        };
        EncodeCache::Entry own;
        // Key: the character and what it is coded against (none, or baseline and context ages).
        const uint64_t key = uint64_t(c->id) << 48 | uint64_t(base ? 1 : 0) << 47 |
                             uint64_t(base ? std::min<uint32_t>(tick - base_tick, 0xFFFFFu) : 0) << 20 |
                             uint64_t(cb.context ? std::min<uint32_t>(base_tick - ctx_tick, 0xFFFFFu) : 0);
        // Shared only when the bytes depend on nothing of this client's own (no level of detail,
        // baseline and context from the shared history).
        const EncodeCache::Entry& coded = cache && !lod && !client_specific ? cache->get(tick, key, make) : (own = make());
        const std::vector<uint8_t>& framed = coded.framed;
        const CodingCost& cost = coded.cost;

        // Header bytes of a new datagram: format + count (<= 2 varint bytes).
        const size_t header = 1 + 2;
        if (framed.size() + header > cfg_.max_payload_bytes || double(framed.size()) > budget) {
            ++stats_.characters_skipped;
            // Stays unsent; its accumulator keeps growing. Once a few in a row do not fit, the
            // budget is spent: the rest are not coded at all (with hundreds of characters, coding
            // them all for every client to send a dozen is most of a server's tick).
            if (++skipped_in_row >= 4 || budget < 8.0) break;
            continue;
        }
        skipped_in_row = 0;
        if (parts.empty() || parts.back().data.size() + framed.size() > cfg_.max_payload_bytes) {
            parts.push_back({tick, {kSnapshotFormat, 0, 0}, {}});  // count patched below
        }
        SnapshotPart& part = parts.back();
        part.data.insert(part.data.end(), framed.begin(), framed.end());
        part.characters.push_back(c->id);
        budget -= double(framed.size());

        Sent& s = pc.sent[tick % pc.sent.size()];
        s = {tick, base ? base_tick : tick, true, false, lod ? std::shared_ptr<const QCharacter>(mixed) : nullptr};
        pc.accumulator = 0.0f;
        ++stats_.characters_sent;
        ++sent;
        const uint64_t bits = uint64_t(coded.chunk_bytes) * 8, joints = c->state.joints.size();
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
    budget_carry_ = std::clamp(budget, -2.0 * per_snapshot, per_snapshot);  // debts from charge() carry over
    left_out_ = order.size() - sent;
    return parts;
}

void SnapshotBuilder::charge(size_t bytes) {
    const double per_snapshot = cfg_.bandwidth_bps / 8.0 / std::max(1.0f, cfg_.snapshot_hz);
    budget_carry_ = std::max(budget_carry_ - double(bytes), -2.0 * per_snapshot);
}

const EncodeCache::Entry& EncodeCache::get(uint32_t tick, uint64_t key, const std::function<Entry()>& make) {
    {
        std::lock_guard<std::mutex> lock(m_);
        if (tick != tick_) {
            entries_.clear();
            tick_ = tick;
        }
        const auto it = entries_.find(key);
        if (it != entries_.end()) {
            ++hits_;
            return *it->second;
        }
    }
    auto e = std::make_unique<Entry>(make());  // coded outside the lock: other builders go on
    std::lock_guard<std::mutex> lock(m_);
    ++misses_;
    auto [it, inserted] = entries_.emplace(key, std::move(e));  // a racing builder may have coded it too: same bytes
    return *it->second;
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

}  // namespace ks
