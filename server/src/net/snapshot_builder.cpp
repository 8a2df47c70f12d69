#include "server/src/net/snapshot_builder.h"

#include "server/src/net/held_prediction.h"

#include "common/src/util/refusal_text.h"
#include "common/src/util/worker_pool.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace ks {

SnapshotHistory::SnapshotHistory(uint32_t capacity_ticks, uint32_t stride)
    : capacity_(capacity_ticks), stride_(stride), slots_(stride ? (capacity_ticks + stride - 1) / stride : 0) {
    detail::check_config_field(capacity_ticks >= 1, "SnapshotHistory", "capacity_ticks", capacity_ticks, "at least 1");
    detail::check_config_field(stride >= 1 && stride <= capacity_ticks, "SnapshotHistory", "stride", stride, "1 .. capacity_ticks");
}

void SnapshotHistory::add(uint32_t tick, std::span<const CharacterSnapshot> characters, WorkerPool* pool) {
    if (tick % stride_ != 0)
        throw Error(Errc::InvalidArgument, "SnapshotHistory: tick " + std::to_string(tick) + " is not a multiple of the stride " +
                                               std::to_string(stride_), "tick");
    std::vector<Entry*> slots(characters.size());
    for (size_t i = 0; i < characters.size(); ++i) {
        auto& ring = rings_[characters[i].id];
        if (ring.empty()) ring.resize(slots_);
        slots[i] = &ring[(tick / stride_) % slots_];
    }
    auto copy = [&](size_t i) {
        Entry& e = *slots[i];
        e.tick = tick;
        e.valid = true;
        e.state = characters[i].state;
    };
    if (pool) pool->parallel_for(characters.size(), copy);
    else for (size_t i = 0; i < characters.size(); ++i) copy(i);
}

size_t SnapshotHistory::held_bytes() const {
    size_t bytes = 0;
    for (const auto& [id, ring] : rings_)
        for (const Entry& e : ring) bytes += e.state.joints.capacity() * sizeof(QJoint);
    return bytes;
}

const QCharacter* SnapshotHistory::find(uint16_t id, uint32_t tick) const {
    const auto it = rings_.find(id);
    if (it == rings_.end() || tick % stride_ != 0) return nullptr;
    const Entry& e = it->second[(tick / stride_) % slots_];
    return e.valid && e.tick == tick ? &e.state : nullptr;
}

const char* unsent_name(Unsent why) {
    switch (why) {
        case Unsent::Budget: return "budget";
        case Unsent::TooLarge: return "too_large";
        case Unsent::NoPrecision: return "no_precision";
        case Unsent::Starved: return "starved";
        case Unsent::kCount: break;
    }
    return "?";
}

struct SnapshotBuilder::Coded {
    const EncodeCache::Entry* entry = nullptr;  // shared (null: `own`)
    EncodeCache::Entry own;
    const EncodeCache::Entry& bytes() const { return entry ? *entry : own; }
    bool delta = false;
    uint32_t base_tick = 0;
    std::shared_ptr<QCharacter> mixed;  // level of detail: what the client will hold
};

namespace {

constexpr float kMustSend = 1e9f;  // the score of a unit with nothing to predict from (plus its wait)

// Where a datagram's last entry starts, and what frames it.
struct LastEntry {
    size_t start = 0;
    EntryHeader header;
    size_t chunk_bytes = 0;
};

// Frames the payload's last entry again as the last (its coded bytes run to the end, no length):
// returns the bytes saved.
size_t frame_as_last(std::vector<uint8_t>& payload, const LastEntry& last) {
    std::vector<uint8_t> head;
    put_entry_header(head, last.header, last.chunk_bytes, true);
    // The header only shrinks (the length goes): overwrite it, then close the gap before the coded bytes.
    const auto at = payload.begin() + std::ptrdiff_t(last.start);
    const auto coded = payload.end() - std::ptrdiff_t(last.chunk_bytes);
    const size_t saved = size_t(coded - at) - head.size();
    std::copy(head.begin(), head.end(), at);
    payload.erase(at + std::ptrdiff_t(head.size()), coded);
    return saved;
}

}  // namespace

// Codes one unit against the newest state the client acknowledged (or in full).
SnapshotBuilder::Coded SnapshotBuilder::code(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history,
                                             const SkeletonPrecision& prec, EncodeCache* cache, int hold_depth) {
    const CharacterSnapshot& c = *u.c;
    // What this client holds for a tick: the shared history's state, or the mix it was sent with a
    // level of detail.
    bool client_specific = false;
    auto client_state = [&](uint32_t t) -> const QCharacter* {
        const Sent& s = pu.sent[t % pu.sent.size()];
        if (s.valid && s.tick == t && s.held) {
            client_specific = true;
            return s.held.get();
        }
        return history.find(c.id, t);
    };
    auto compatible = [&](const QCharacter* q, const QCharacter& with) {
        return q && q->epoch == with.epoch && q->joints.size() == with.joints.size();
    };
    Coded out;
    const QCharacter* base = nullptr;
    if (pu.any_acked && tick > pu.newest_acked && tick - pu.newest_acked <= cfg_.max_baseline_age_ticks) {
        base = client_state(pu.newest_acked);
        if (!compatible(base, c.state)) base = nullptr;
    }
    CharacterBaseline cb;
    uint32_t ctx_tick = 0;
    bool base_context = false;  // the context is what the baseline was coded against (none: it was full)
    if (base) {
        out.delta = true;
        out.base_tick = pu.newest_acked;
        cb.state = base;
        cb.age_s = double(tick - out.base_tick) / cfg_.tick_hz;
        const Sent& s = pu.sent[out.base_tick % pu.sent.size()];
        const bool known = s.valid && s.tick == out.base_tick;
        base_context = known && s.ref == out.base_tick;
        if (known && s.ref != out.base_tick) {
            const QCharacter* ctx = client_state(s.ref);
            if (compatible(ctx, *base)) {
                cb.context = ctx;
                cb.context_age_s = double(out.base_tick - s.ref) / cfg_.tick_hz;
                ctx_tick = s.ref;
                base_context = true;
            }
        }
    }
    cb.hold_depth = base ? hold_depth : -1;
    const bool lod = cb.hold_depth >= 0;
    auto make = [&] {
        EncodeCache::Entry e;
        std::vector<uint8_t> chunk;
        if (lod) out.mixed = std::make_shared<QCharacter>();
        encode_character(chunk, c.state, base ? &cb : nullptr, prec, u.joints, &e.cost, out.mixed.get());
        EntryHeader& h = e.header;
        h.id = c.id;
        h.mode = (base ? (lod ? 2u : 1u) : 0u) | (u.split ? kModePart : 0u) | (c.state.ahead ? kModeAhead : 0u);
        h.first = u.joints.first, h.count = u.joints.count;
        h.ahead_ticks = c.state.ahead_ticks, h.plan = c.state.plan;
        h.base_age = base ? tick - out.base_tick : 0;
        h.ctx_age = cb.context ? out.base_tick - ctx_tick : 0;
        h.hold = lod ? uint32_t(cb.hold_depth) : 0;
        h.base_context = base_context;
        put_entry_header(e.framed, h, chunk.size(), false);
        e.framed.insert(e.framed.end(), chunk.begin(), chunk.end());
        e.chunk_bytes = chunk.size();
        return e;
    };
    // Key: the character, the part, and what it is coded against (none, or baseline and context
    // ages), and how the header names the context (two clients' headers may differ there alone).
    const uint64_t key = uint64_t(c.id) << 48 | uint64_t(base_context ? 1 : 0) << 47 | uint64_t(std::min<uint32_t>(u.part, 63)) << 41 |
                         uint64_t(base ? 1 : 0) << 40 |
                         uint64_t(base ? std::min<uint32_t>(tick - out.base_tick, 0xFFFFFu) : 0) << 20 |
                         uint64_t(cb.context ? std::min<uint32_t>(out.base_tick - ctx_tick, 0xFFFFFu) : 0);
    // Shared only when the bytes depend on nothing of this client's own (no level of detail,
    // baseline and context from the shared history).
    if (cache && !lod && !client_specific && !u.late) out.entry = &cache->get(tick, key, make);
    else out.own = make();
    if (u.late && !out.mixed) out.mixed = std::make_shared<QCharacter>(c.state);  // the client holds this, not the history's tick
    return out;
}

// Nothing to say: every joint of the unit is at rest (no velocities) and as in the state the client
// acknowledged and in every state sent since, which it keeps showing as they are. Sent again once
// the baseline is half as old as a baseline may be, so one is always there.
SnapshotBuilder::SnapshotBuilder(BuilderConfig cfg) : cfg_(cfg) {
    detail::check_config_field(cfg.max_baseline_age_ticks >= 1 && cfg.max_baseline_age_ticks <= (kHistoryTicks - 1) / 2,
                               "SnapshotBuilder", "max_baseline_age_ticks", cfg.max_baseline_age_ticks, "1 .. 127");
    detail::check_config_field(std::isfinite(cfg.hold_error_m) && cfg.hold_error_m >= 0.0f, "SnapshotBuilder", "hold_error_m",
                               cfg.hold_error_m, "finite, >= 0");
    detail::check_config_field(std::isfinite(cfg.max_hold_s) && cfg.max_hold_s >= 0.0f && cfg.max_hold_s <= 2.0f, "SnapshotBuilder",
                               "max_hold_s", cfg.max_hold_s, "0 .. 2");
    detail::check_config_field(std::isfinite(cfg.hold_ahead_error_m) && cfg.hold_ahead_error_m >= 0.0f, "SnapshotBuilder",
                               "hold_ahead_error_m", cfg.hold_ahead_error_m, "finite, >= 0");
    detail::check_config_field(std::isfinite(cfg.ahead_keep_share) && cfg.ahead_keep_share >= 0.0f && cfg.ahead_keep_share <= 1.0f,
                               "SnapshotBuilder", "ahead_keep_share", cfg.ahead_keep_share, "0 .. 1");
    detail::check_config_field(std::isfinite(cfg.presume_delivered_s) && cfg.presume_delivered_s >= 0.0f && cfg.presume_delivered_s <= 2.0f,
                               "SnapshotBuilder", "presume_delivered_s", cfg.presume_delivered_s, "0 .. 2");
}

bool SnapshotBuilder::assess(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history,
                             const SkeletonPrecision& prec, float priority) {
    pu.late.reset();
    const uint32_t presume = uint32_t(std::lround(cfg_.presume_delivered_s * cfg_.tick_hz));
    bool have = false;
    if (pu.any_sent && tick > pu.newest_sent && tick - pu.newest_sent <= presume) pu.held_tick = pu.newest_sent, have = true;
    else if (pu.any_acked && tick > pu.newest_acked) pu.held_tick = pu.newest_acked, have = true;
    const CharacterSnapshot& c = *u.c;
    const HeldInfo info = pu.held_tick == pu.newest_sent && pu.any_sent ? pu.sent_info : pu.acked_info;
    pu.held_own = have && info.own;
    const uint32_t age = have ? tick - pu.held_tick : tick - std::min(tick, pu.waiting_since);
    stats_.oldest_held_ticks = std::max(stats_.oldest_held_ticks, age);
    // Nothing held, or nothing a prediction can bridge: sent first, the longest waiting first.
    // A client that holds nothing of the character (or an old epoch or plan) before one whose
    // state has only grown old.
    if (!have || info.epoch != c.state.epoch || info.plan != c.state.plan) {
        pu.score = 2.0f * kMustSend + float(age);
        return true;
    }
    if (float(age) >= cfg_.max_hold_s * cfg_.tick_hz) {
        pu.score = kMustSend + float(age);
        return true;
    }
    // The held state itself only when a figure needs it (a cache miss per unit and client).
    const QCharacter* held_state = nullptr;
    const auto held = [&]() -> const QCharacter* {
        if (held_state == nullptr) {
            const Sent& s = pu.sent[pu.held_tick % pu.sent.size()];
            held_state = pu.held_own && s.valid && s.tick == pu.held_tick ? s.held.get() : history.find(c.id, pu.held_tick);
        }
        return held_state && held_state->joints.size() == c.state.joints.size() ? held_state : nullptr;
    };
    auto content_s = [&](uint32_t t, const QCharacter& q) { return float((double(t) + q.ahead_ticks) / cfg_.tick_hz); };
    // The score: what the client's view has been off by, summed over the snapshots since the unit
    // was last sent (a character far off for long goes before one briefly off by more). Only
    // needed while the budget leaves units out (else every unit goes, in any order) or to hold one.
    const auto predicted = [&] {
        return figure(tick, u, 0, !pu.held_own, [&] {
            const QCharacter* h = held();
            if (h == nullptr) return 1e3f;
            const float dt = content_s(tick, c.state) - content_s(pu.held_tick, *h);
            return dt > 0.0f ? held_prediction_error_m(*h, c.state, dt, prec, u.joints) : 0.0f;
        });
    };
    const bool rank = left_out_ > 0;
    const float err = rank || cfg_.hold_error_m > 0.0f ? predicted() : 0.0f;
    pu.accumulated += priority * (rank ? err : 1.0f);
    pu.score = pu.accumulated;
    if (c.state.ahead && !u.split && cfg_.hold_ahead_error_m > 0.0f) {
        const QCharacter* h = held();
        return h == nullptr || !holds_ahead(tick, u, pu, history, prec, *h, content_s(tick, c.state) - content_s(pu.held_tick, *h), predicted);
    }
    return err >= cfg_.hold_error_m;
}

float SnapshotBuilder::figure(uint32_t tick, const Candidate& u, uint32_t kind, bool shared, const std::function<float()>& make) {
    if (!shared || cache_ == nullptr) return make();
    // The character, the part, what is measured, and how old the held state is (which state, at this tick).
    const uint64_t key = uint64_t(u.c->id) << 48 | uint64_t(std::min<uint32_t>(u.part, 63)) << 41 | uint64_t(kind & 1) << 40 |
                         uint64_t(std::min<uint32_t>(tick - u.pu->held_tick, 0xFFFFFu)) << 20;
    return cache_->figure(tick, key, make);
}

bool SnapshotBuilder::holds_ahead(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history,
                                  const SkeletonPrecision& prec, const QCharacter& held, float dt,
                                  const std::function<float()>& predicted_err) {
    const CharacterSnapshot& c = *u.c;
    // A character sent in parts is never held: its parts must come from the same tick.
    if (u.split || cfg_.hold_ahead_error_m <= 0.0f) return false;
    // After a decision the horizon restarts short and regrows: every entry goes until it is full.
    // Otherwise the newest entry held must stay far enough ahead that the client never runs out.
    pu.full_ahead_ticks = std::max(pu.full_ahead_ticks, c.state.ahead_ticks);
    const double held_content = double(pu.held_tick) + held.ahead_ticks;
    const bool regrowing = c.state.ahead_ticks * 10 < pu.full_ahead_ticks * 9;
    const bool running_out = dt <= 0.0f || regrowing || held_content < double(tick) + double(cfg_.ahead_keep_share) * c.state.ahead_ticks;
    // The curve from the held entry to this one, against every entry skipped since (none yet:
    // the held entry's own prediction of this one). The same for every client holding that entry.
    const auto curve = [&] {
        float err = 0.0f;
        bool between = false;
        for (uint32_t t = pu.held_tick + 1; t < tick && err < cfg_.hold_ahead_error_m; ++t) {
            const QCharacter* mid = t % history.stride() == 0 ? history.find(c.id, t) : nullptr;
            if (mid == nullptr) continue;
            const float at = float((double(t) + mid->ahead_ticks - held_content) / cfg_.tick_hz);
            const bool on_curve = mid->epoch == c.state.epoch && mid->plan == c.state.plan &&
                                  mid->joints.size() == c.state.joints.size() && at > 0.0f && at < dt;
            err = std::max(err, on_curve ? interpolation_error_m(held, c.state, dt, *mid, at, prec, u.joints) : 1e3f);
            between = true;
        }
        return between ? err : predicted_err();
    };
    const float err = running_out ? 1e3f : figure(tick, u, 1, !pu.held_own, curve);
    if (!running_out && err < cfg_.hold_ahead_error_m) {
        pu.reached_tick = tick;
        pu.any_reached = true;
        return true;
    }
    // Missed: the last entry the curve reached goes now in this one's place (its content time
    // is still ahead), unless the client needs this one's future.
    if (!running_out && pu.any_reached && pu.reached_tick > pu.held_tick) {
        const QCharacter* last = history.find(c.id, pu.reached_tick);
        if (last && last->epoch == c.state.epoch && last->plan == c.state.plan && pu.reached_tick + last->ahead_ticks >= tick) {
            pu.late = std::make_shared<QCharacter>(*last);
            pu.late->ahead_ticks = uint16_t(pu.reached_tick + last->ahead_ticks - tick);
        }
    }
    return false;
}

bool SnapshotBuilder::at_rest(uint32_t tick, const Candidate& u, const PerUnit& pu, const SnapshotHistory& history) const {
    if (!pu.any_acked || tick <= pu.newest_acked || tick - pu.newest_acked > cfg_.max_baseline_age_ticks / 2) return false;
    // The shared state first: it is in cache for every client, the client's ring and the history
    // are not (a moving character, the usual case, is told apart without touching them).
    const auto still = [](const QJoint& q) {
        return q.ang[0] == 0 && q.ang[1] == 0 && q.ang[2] == 0 && q.vel[0] == 0 && q.vel[1] == 0 && q.vel[2] == 0 && q.svl[0] == 0 &&
               q.svl[1] == 0 && q.svl[2] == 0;
    };
    const auto joints = std::span(u.c->state.joints).subspan(u.joints.first, u.joints.count);
    if (!std::all_of(joints.begin(), joints.end(), still)) return false;

    const Sent& s = pu.sent[pu.newest_acked % pu.sent.size()];
    if (!s.valid || s.tick != pu.newest_acked || s.held) return false;
    const QCharacter* base = history.find(u.c->id, pu.newest_acked);
    if (base == nullptr || base->epoch != u.c->state.epoch || base->joints.size() != u.c->state.joints.size()) return false;
    if (!std::equal(joints.begin(), joints.end(), base->joints.begin() + u.joints.first)) return false;
    // What was sent since, arrived or not, must be the same: the client may hold any of it.
    for (uint32_t t = pu.newest_acked + 1; t < tick; ++t) {
        const Sent& later = pu.sent[t % pu.sent.size()];
        if (!later.valid || later.tick != t) continue;
        const QCharacter* q = history.find(u.c->id, t);
        if (later.held || q == nullptr || q->epoch != base->epoch ||
            !std::equal(q->joints.begin() + u.joints.first, q->joints.begin() + u.joints.end(), base->joints.begin() + u.joints.first))
            return false;
    }
    return true;
}

void SnapshotBuilder::account(const Candidate& u, bool delta, size_t chunk_bytes, const CodingCost& cost) {
    ++stats_.characters_sent;
    if (u.split) ++stats_.parts_sent;
    const uint64_t bits = uint64_t(chunk_bytes) * 8, joints = u.joints.count;
    stats_.joint_bits += bits;
    stats_.joints += joints;
    CodingCost& total = delta ? stats_.delta_cost : stats_.full_cost;
    for (int k = 0; k < CodingCost::kCount; ++k) total.bits256[k] += cost.bits256[k];
    (delta ? stats_.characters_delta : stats_.characters_full)++;
    (delta ? stats_.delta_joint_bits : stats_.full_joint_bits) += bits;
    (delta ? stats_.delta_joints : stats_.full_joints) += joints;
}

void SnapshotBuilder::report(uint16_t character, Unsent why, size_t bytes, size_t joints) {
    if (reported_.insert({character, int(why)}).second) reports_.push_back({character, why, bytes, joints});
}

std::vector<SnapshotPart> SnapshotBuilder::build(uint32_t tick, std::span<const CharacterSnapshot> characters,
                                                 const SnapshotHistory& history, const PrecisionLookup& precision,
                                                 const std::function<float(uint16_t)>& priority, EncodeCache* cache,
                                                 const std::function<int(uint16_t)>& hold_depth) {
    cache_ = cache;
    // Budget for this snapshot, with at most one snapshot's worth carried over.
    const double per_snapshot = per_snapshot_budget();
    double budget = per_snapshot + budget_carry_;

    // Every unit (a character, or each of its parts), highest accumulated priority first.
    std::vector<Candidate> order;
    for (const CharacterSnapshot& c : characters) {
        const SkeletonPrecision* prec = precision(c.skeleton);
        if (prec == nullptr || prec->joints.size() != c.state.joints.size() || c.state.joints.empty()) {
            ++stats_.unsent[size_t(Unsent::NoPrecision)];
            report(c.id, Unsent::NoPrecision, 0, c.state.joints.size());
            continue;
        }
        const float p = priority ? priority(c.id) : 1.0f;
        const uint32_t joints = uint32_t(c.state.joints.size()), parts = part_count(joints);
        for (uint32_t k = 0; k < parts; ++k) {
            const JointRange range = part_range(joints, k);
            const UnitKey key = unit_key(c.id, range.first);
            PerUnit& pu = unit(order.size(), key, tick);
            order.push_back({&c, range, key, k, parts > 1, &pu, p});
        }
    }
    last_units_.resize(order.size());
    // At rest or predicted well enough: nothing to send (counted, not left out).
    std::erase_if(order, [&](const Candidate& u) {
        PerUnit& pu = *u.pu;
        const bool rest = at_rest(tick, u, pu, history);
        const bool held = !rest && !assess(tick, u, pu, history, *precision(u.c->skeleton), u.priority);
        if (!rest && !held) return false;
        if (rest) {
            pu.waiting_since = tick;
            pu.starved = false;
            ++stats_.units_at_rest;
        } else {
            ++stats_.units_held;
        }
        return true;
    });
    std::stable_sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) { return a.pu->score > b.pu->score; });

    // Look-ahead entries sent late stand in for the newest (coded from these copies).
    std::deque<CharacterSnapshot> late;
    for (Candidate& u : order)
        if (u.pu->late) {
            late.push_back({u.c->id, u.c->skeleton, *u.pu->late});
            u.c = &late.back();
            u.late = true;
        }
    std::vector<SnapshotPart> parts;
    std::vector<LastEntry> last_entries;  // per datagram
    double saving_for = 0.0;  // the cost of the unit the budget stopped at
    // The previous snapshot left most units out: the budget is far short of carrying everyone,
    // and a far character's top is worth more than its limbs.
    const bool pressed = left_out_ * 2 > order.size();
    size_t sent = 0;
    for (const Candidate& u : order) {
        PerUnit& pu = *u.pu;
        const SkeletonPrecision& prec = *precision(u.c->skeleton);
        const int hold = hold_depth && pressed ? hold_depth(u.c->id) : -1;
        const Coded coded = code(tick, u, pu, history, prec, cache, hold);
        const std::vector<uint8_t>& framed = coded.bytes().framed;
        if (framed.size() > cfg_.max_payload_bytes) {
            ++stats_.unsent[size_t(Unsent::TooLarge)];
            report(u.c->id, Unsent::TooLarge, framed.size(), u.joints.count);
            continue;
        }
        const bool opens_datagram = parts.empty() || parts.back().data.size() + framed.size() > cfg_.max_payload_bytes;
        const double cost = double(framed.size() + (opens_datagram ? cfg_.datagram_overhead_bytes : 0));
        if (cost > budget) {
            // The most needed unit left does not fit: what is left of the budget is kept for it,
            // however large it is (lesser units slipping into the gap would take the bytes it
            // needs, and one larger than a snapshot's budget would never go), and the rest are
            // not coded at all (with hundreds of characters, coding them all for every client to
            // send a dozen is most of a server's tick).
            ++stats_.characters_skipped;
            saving_for = cost;
            break;
        }
        if (opens_datagram) {
            parts.push_back({tick, {}, {}});
            last_entries.emplace_back();
        }
        SnapshotPart& part = parts.back();
        last_entries.back() = {part.data.size(), coded.bytes().header, coded.bytes().chunk_bytes};
        part.data.insert(part.data.end(), framed.begin(), framed.end());
        part.units.push_back(u.key);
        budget -= cost;

        Sent& s = pu.sent[tick % pu.sent.size()];
        s = {tick, coded.delta ? coded.base_tick : tick, true, false, coded.mixed, u.c->state.epoch, u.c->state.plan};
        pu.newest_sent = tick;
        pu.any_sent = true;
        pu.sent_info = {s.epoch, s.plan, s.held != nullptr};
        if (u.late) ++stats_.units_late;
        pu.any_reached = false;
        pu.accumulated = 0.0f;
        pu.waiting_since = tick;
        pu.starved = false;
        ++sent;
        account(u, coded.delta, coded.bytes().chunk_bytes, coded.bytes().cost);
    }
    // What was left: for this snapshot's budget, and for over two seconds (reported once).
    const uint32_t starve_ticks = uint32_t(2.0f * cfg_.tick_hz);
    for (const Candidate& u : order) {
        PerUnit& pu = *u.pu;
        if (pu.waiting_since == tick) continue;  // sent, at rest, or new this tick
        ++stats_.unsent[size_t(Unsent::Budget)];
        if (!pu.starved && tick - pu.waiting_since > starve_ticks) {
            pu.starved = true;
            ++stats_.unsent[size_t(Unsent::Starved)];
            report(u.c->id, Unsent::Starved, 0, u.joints.count);
        }
    }
    for (size_t k = 0; k < parts.size(); ++k) {
        SnapshotPart& p = parts[k];
        budget += double(frame_as_last(p.data, last_entries[k]));
        stats_.payload_bytes += p.data.size();
        ++stats_.datagrams;
    }
    budget_carry_ = std::min(budget, std::max(per_snapshot, saving_for));  // debts from charge() carry over in full
    left_out_ = order.size() - sent;
    cache_ = nullptr;
    return parts;
}

SnapshotBuilder::PerUnit& SnapshotBuilder::unit(size_t position, UnitKey key, uint32_t tick) {
    if (position < last_units_.size() && last_units_[position].first == key) return *last_units_[position].second;
    auto [it, fresh] = units_.try_emplace(key);
    if (fresh) it->second.waiting_since = tick;
    if (position >= last_units_.size()) last_units_.resize(position + 1);
    last_units_[position] = {key, &it->second};
    return it->second;
}

void SnapshotBuilder::charge(size_t bytes) { budget_carry_ -= double(bytes); }

void SnapshotBuilder::set_bandwidth(float bps) {
    if (!(std::isfinite(bps) && bps > 0.0f))
        throw Error(Errc::InvalidConfig, "SnapshotBuilder: bandwidth " + std::to_string(bps) + " bit/s is not positive", "bandwidth_bps");
    cfg_.bandwidth_bps = bps;
}

double SnapshotBuilder::per_snapshot_budget() const { return cfg_.bandwidth_bps / 8.0 / std::max(1.0f, cfg_.snapshot_hz); }

void SnapshotBuilder::idle() { budget_carry_ = std::min(budget_carry_ + per_snapshot_budget(), per_snapshot_budget()); }

void EncodeCache::begin_tick(uint32_t tick) {
    if (tick == tick_) return;
    entries_.clear();
    tick_ = tick;
}

float EncodeCache::figure(uint32_t tick, uint64_t key, const std::function<float()>& make) {
    FigureShard& f = figures_[(key ^ key >> 29 ^ key >> 47) % figures_.size()];
    const auto at_tick = [&] {
        if (f.tick != tick) {
            f.values.clear();
            f.tick = tick;
        }
    };
    {
        std::lock_guard<std::mutex> lock(f.m);
        at_tick();
        const auto it = f.values.find(key);
        if (it != f.values.end()) return it->second;
    }
    // Outside the lock: `make` may ask for another figure (of any shard); a racing builder
    // computes the same value.
    const float v = make();
    std::lock_guard<std::mutex> lock(f.m);
    at_tick();
    f.values.emplace(key, v);
    return v;
}

const EncodeCache::Entry& EncodeCache::get(uint32_t tick, uint64_t key, const std::function<Entry()>& make) {
    {
        std::lock_guard<std::mutex> lock(m_);
        begin_tick(tick);
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

void SnapshotBuilder::on_delivered(uint32_t tick, std::span<const UnitKey> units) {
    for (UnitKey key : units) {
        auto it = units_.find(key);
        if (it == units_.end()) continue;
        PerUnit& pu = it->second;
        if (pu.any_void && tick <= pu.void_through) continue;  // the client said it does not hold it
        Sent& s = pu.sent[tick % pu.sent.size()];
        if (!s.valid || s.tick != tick) continue;  // too old, or never sent
        // A delta against a baseline the client does not hold (voided by a resync) was refused
        // too, though its datagram arrived.
        if (s.ref != tick && !holds(pu, s.ref)) continue;
        s.acked = true;
        if (!pu.any_acked || tick > pu.newest_acked) {
            pu.newest_acked = tick;
            pu.acked_info = {s.epoch, s.plan, s.held != nullptr};
            pu.any_acked = true;
        }
    }
}

void SnapshotBuilder::resync(uint16_t character, uint32_t first_joint, uint32_t tick) {
    for (auto& [key, pu] : units_) {
        if (unit_character(key) != character || (first_joint != kAllJoints && unit_first_joint(key) != first_joint)) continue;
        ++stats_.resyncs;
        pu.any_sent = false;  // what was sent since may be refused too: predict from what is acknowledged
        if (!pu.any_void || tick > pu.void_through) pu.void_through = tick;
        pu.any_void = true;
        // Void what the client lost, and whatever was coded against it since; then the newest
        // acknowledgement left, if any.
        std::vector<Sent*> by_tick;
        for (Sent& s : pu.sent)
            if (s.valid && s.acked) by_tick.push_back(&s);
        std::sort(by_tick.begin(), by_tick.end(), [](const Sent* a, const Sent* b) { return a->tick < b->tick; });
        pu.any_acked = false;
        for (Sent* s : by_tick) {
            if (s->tick <= pu.void_through || (s->ref != s->tick && !holds(pu, s->ref))) s->acked = false;
            if (s->acked && (!pu.any_acked || s->tick > pu.newest_acked)) {
                pu.newest_acked = s->tick;
                pu.acked_info = {s->epoch, s->plan, s->held != nullptr};
                pu.any_acked = true;
            }
        }
    }
}

bool SnapshotBuilder::holds(const PerUnit& pu, uint32_t tick) {
    const Sent& s = pu.sent[tick % pu.sent.size()];
    return s.valid && s.tick == tick && s.acked;
}

void SnapshotBuilder::forget(uint16_t id) {
    for (auto it = reported_.begin(); it != reported_.end();) it = it->first == id ? reported_.erase(it) : std::next(it);
    for (auto it = units_.begin(); it != units_.end();) it = unit_character(it->first) == id ? units_.erase(it) : std::next(it);
    last_units_.clear();  // its pointers may name erased units
}

}  // namespace ks
