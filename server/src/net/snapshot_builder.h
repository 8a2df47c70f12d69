#pragma once
// The sender's side of snapshots (payload format: common/src/codec/snapshot_codec.h): the recent states
// of every character, shared by all clients of a server, and each client's builder that chooses
// baselines from what it acknowledged, priorities and packing under its budget.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/src/codec/snapshot_codec.h"

namespace ks {

class WorkerPool;

// Recent quantized states of every character, shared by all clients of a server: the states of the
// last `capacity_ticks` ticks. Only the ticks a snapshot is built for need keeping (baselines and
// contexts are states a client was sent): with `stride` n, only ticks that are multiples of n are
// kept (add() refuses others), in a slot each.
class SnapshotHistory {
public:
    explicit SnapshotHistory(uint32_t capacity_ticks = kHistoryTicks, uint32_t stride = 1);
    // Copies on `pool` when given: a character's first pass through its ring writes fresh memory,
    // whose page faults were the largest cost of a crowd's first seconds on one thread.
    void add(uint32_t tick, std::span<const CharacterSnapshot> characters, WorkerPool* pool = nullptr);
    const QCharacter* find(uint16_t id, uint32_t tick) const;
    uint32_t capacity() const { return capacity_; }
    uint32_t stride() const { return stride_; }
    size_t held_bytes() const;  // the joints kept, every character's ring

private:
    struct Entry {
        uint32_t tick = 0;
        bool valid = false;
        QCharacter state;
    };
    uint32_t capacity_, stride_, slots_;
    std::unordered_map<uint16_t, std::vector<Entry>> rings_;
};

struct BuilderConfig {
    float tick_hz = 60.0f;
    float snapshot_hz = 30.0f;
    float bandwidth_bps = 256000.0f;   // per-client budget, wire bits per second
    size_t max_payload_bytes = 1100;   // snapshot data per datagram (1200 minus envelope overhead)
    // What each snapshot datagram costs beyond its data, counted against the budget: the packet
    // header, sealing, the IPv4 and UDP headers.
    size_t datagram_overhead_bytes = 0;
    uint32_t max_baseline_age_ticks = 120;  // at most (kHistoryTicks - 1) / 2: a context is as old again
    // Error-driven updates (held_prediction.h, docs/NETWORK.md "What the budget buys"). What a
    // client holds: the newest state sent to it (taken as lost when unacknowledged for
    // `presume_delivered_s`; then the newest acknowledged). Units go in order of that state,
    // moved on by its velocities, against the truth, times priority, summed over the snapshots
    // since each was sent; a unit with nothing to predict from (none held, a new epoch or plan, or
    // held for `max_hold_s`) goes first. `hold_error_m` > 0: a unit predicted within it is not sent.
    float hold_error_m = 0.0f;
    // Look-ahead: the client interpolates between the entries it holds, so an entry is not sent
    // while the curve from the newest one held to it passes within `hold_ahead_error_m` (mean
    // over joints) of every entry skipped since; when it misses, the last entry it reached is
    // sent in its place, its content time unchanged. Never while the newest held entry's content
    // time is under `ahead_keep_share` of the horizon from now (the client must not run out of
    // future), nor while the horizon regrows after a decision, nor for parts of a character.
    float hold_ahead_error_m = 0.02f;
    float ahead_keep_share = 0.5f;
    float max_hold_s = 0.5f;
    float presume_delivered_s = 0.3f;
};

// What the builder tracks, sends and hears acknowledged: one character, or one part of a character
// too large for one datagram, named by the character and the part's first joint.
using UnitKey = uint32_t;
constexpr UnitKey unit_key(uint16_t character, uint32_t first_joint) { return UnitKey(character) << 16 | (first_joint & 0xFFFFu); }
constexpr uint16_t unit_character(UnitKey k) { return uint16_t(k >> 16); }
constexpr uint32_t unit_first_joint(UnitKey k) { return k & 0xFFFFu; }
constexpr uint32_t kAllJoints = 0xFFFFu;  // resync(): every part of the character

struct SnapshotPart {
    uint32_t tick = 0;
    std::vector<uint8_t> data;
    std::vector<UnitKey> units;  // what this datagram carries
};

// Why a character (or a part of one) was not sent.
enum class Unsent { Budget, TooLarge, NoPrecision, Starved, kCount };
const char* unsent_name(Unsent why);

struct BuilderStats {
    uint64_t characters_sent = 0, characters_full = 0, characters_delta = 0, characters_skipped = 0;
    uint64_t parts_sent = 0;                         // entries that were one part of a larger character
    uint64_t joint_bits = 0, joints = 0;             // coded character bytes x 8, and joints coded
    uint64_t delta_joint_bits = 0, delta_joints = 0;
    uint64_t full_joint_bits = 0, full_joints = 0;
    uint64_t payload_bytes = 0, datagrams = 0;
    uint64_t resyncs = 0;                            // full updates the client asked for
    uint64_t units_at_rest = 0;                      // entries not needed: every joint at rest, as acknowledged
    uint64_t units_held = 0;                         // entries not needed: the client's prediction holds (hold_*error_m)
    uint64_t units_late = 0;                         // look-ahead entries sent a snapshot or more after their tick
    uint32_t oldest_held_ticks = 0;                  // the oldest state a client held when a unit was considered
    // Entries not sent, by reason (Budget: left for a later snapshot; Starved: a part not sent for
    // over two seconds, counted once each time it happens).
    uint64_t unsent[size_t(Unsent::kCount)] = {};
    CodingCost delta_cost, full_cost;  // where the coded bits went (flags, angular, rotation, position)
};

// A character that could not be sent for a reason other than this snapshot's budget, reported
// once per character and reason (the server logs it).
struct UnsentReport {
    uint16_t character;
    Unsent why;
    size_t bytes;   // TooLarge: the entry's size
    size_t joints;
};

// The character encodings of one tick, shared by every client's builder: a character coded
// against the same baseline (and context) for two clients is the same bytes, coded once. Thread
// safe; clear() (or a new tick) empties it.
class EncodeCache {
public:
    struct Entry {
        std::vector<uint8_t> framed;  // id, mode, ages, length and the coded bytes
        EntryHeader header;           // the framing (its `bytes` empty): the last entry of a payload is framed again without its length
        size_t chunk_bytes = 0;
        CodingCost cost;
    };
    // The entry for this key, coding it with `make` the first time (per tick).
    const Entry& get(uint32_t tick, uint64_t key, const std::function<Entry()>& make);
    // A figure of this tick computed with `make` the first time (the error of what clients hold:
    // the same for every client holding the same state of a character).
    float figure(uint32_t tick, uint64_t key, const std::function<float()>& make);
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

private:
    void begin_tick(uint32_t tick);  // with m_ held

    std::mutex m_;
    uint32_t tick_ = 0;
    std::unordered_map<uint64_t, std::unique_ptr<Entry>> entries_;
    // Figures are asked for once per unit and client: in shards, so builders on other threads
    // rarely wait for one another.
    struct FigureShard {
        std::mutex m;
        uint32_t tick = 0;
        std::unordered_map<uint64_t, float> values;
    };
    std::array<FigureShard, 16> figures_;
    uint64_t hits_ = 0, misses_ = 0;
};

// One client's view: what it acknowledged, what baseline each sent state used, priorities.
class SnapshotBuilder {
public:
    // Refuses (ks::Error) a max_baseline_age_ticks whose baseline and context could lie beyond
    // what a receiver keeps (kHistoryTicks).
    explicit SnapshotBuilder(BuilderConfig cfg = {});
    SnapshotBuilder(SnapshotBuilder&&) = default;  // moving keeps units_'s nodes (last_units_ points at them)
    SnapshotBuilder& operator=(SnapshotBuilder&&) = default;
    SnapshotBuilder(const SnapshotBuilder&) = delete;
    SnapshotBuilder& operator=(const SnapshotBuilder&) = delete;
    // Builds this snapshot's datagram payloads. A character of more than kMaxPartJoints joints goes
    // as parts (plan_parts), each with its own baseline, acknowledgement and priority. Units go in
    // order of what the client's view is off by, times `priority(id)` (default 1; BuilderConfig,
    // "Error-driven updates"); those left out rise as their error goes on. `hold_depth(id)` >= 0
    // codes that character (when it has a baseline, and only while the previous snapshot had to
    // leave most characters out) with a level of detail: deeper joints keep what the client has.
    std::vector<SnapshotPart> build(uint32_t tick, std::span<const CharacterSnapshot> characters,
                                    const SnapshotHistory& history, const PrecisionLookup& precision,
                                    const std::function<float(uint16_t)>& priority = {}, EncodeCache* cache = nullptr,
                                    const std::function<int(uint16_t)>& hold_depth = {});
    // The client received these units of `tick` (its packet was acknowledged).
    void on_delivered(uint32_t tick, std::span<const UnitKey> units);
    // The client does not hold the part starting at `first_joint` (kAllJoints: every part) of a
    // character as of `tick`: its acknowledgements up to then are void, so its next update is full.
    void resync(uint16_t character, uint32_t first_joint, uint32_t tick);
    // Other traffic to this client (reliable messages, pongs) used `bytes` (wire) of its budget:
    // the next snapshots get that much less, the whole debt repaid before any is sent.
    void charge(size_t bytes);
    // The rate the path carries now (rate_control.h), at most the configured budget: what the
    // next snapshots may spend (wire bits per second).
    void set_bandwidth(float bps);
    // A snapshot tick with nothing this client can decode yet (its characters' definitions still
    // on the way): the budget accrues as if a snapshot had been built, so the definitions' bytes
    // are repaid while they travel, not after them.
    void idle();
    // Forget a character (e.g. removed from the game).
    void forget(uint16_t id);
    const BuilderStats& stats() const { return stats_; }
    // Characters newly found unsendable (taken).
    std::vector<UnsentReport> take_unsent_reports() { return std::exchange(reports_, {}); }
    const BuilderConfig& config() const { return cfg_; }

private:
    struct Sent {
        uint32_t tick = 0;
        uint32_t ref = 0;  // baseline tick it was coded against (== tick when full)
        bool valid = false;
        bool acked = false;
        std::shared_ptr<const QCharacter> held;  // sent with a level of detail: the mix the client holds
        uint16_t epoch = 0, plan = 0;             // of the state sent
    };
    // What a state the client may hold is, kept beside the unit (its Sent slot is a cache miss
    // per unit and client on every build).
    struct HeldInfo {
        uint16_t epoch = 0, plan = 0;
        bool own = false;  // Sent::held: the client's own state, not the history's
    };
    struct PerUnit {
        std::vector<Sent> sent = std::vector<Sent>(kHistoryTicks);
        float score = 0.0f;        // this build's order
        float accumulated = 0.0f;  // predicted errors x priority, summed since last sent
        uint32_t newest_sent = 0;
        bool any_sent = false;
        HeldInfo sent_info, acked_info;  // of newest_sent and newest_acked
        uint32_t held_tick = 0;  // this build's: the tick of the state it holds
        bool held_own = false;   // this build's: that state is the client's own (not the shared history's)
        uint32_t reached_tick = 0;  // look-ahead: the newest skipped entry the curve from the held one reached
        bool any_reached = false;
        uint16_t full_ahead_ticks = 0;  // look-ahead: the longest horizon seen (shorter after a decision, regrowing)
        std::shared_ptr<QCharacter> late;  // this build's: the entry to send instead of the newest
        uint32_t newest_acked = 0;
        bool any_acked = false;
        uint32_t void_through = 0;  // acknowledgements of ticks up to this are void (resync)
        bool any_void = false;
        uint32_t waiting_since = 0;  // tick it was last sent (or first seen)
        bool starved = false;
    };
    struct Candidate {
        const CharacterSnapshot* c;
        JointRange joints;
        UnitKey key;
        uint32_t part;
        bool split;
        PerUnit* pu;  // units_[key], looked up once (elements of an unordered_map stay put)
        float priority;
        bool late = false;  // c is an earlier entry sent now (pu->late)
    };
    struct Coded;
    Coded code(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history, const SkeletonPrecision& prec,
               EncodeCache* cache, int hold_depth);
    void account(const Candidate& u, bool delta, size_t chunk_bytes, const CodingCost& cost);
    static bool holds(const PerUnit& pu, uint32_t tick);  // the client acknowledged the unit at that tick
    bool at_rest(uint32_t tick, const Candidate& u, const PerUnit& pu, const SnapshotHistory& history) const;
    // Sets pu.score (and pu.late); false when what the client holds makes the unit needless.
    bool assess(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history, const SkeletonPrecision& prec, float priority);
    // Look-ahead: true when the client's curve through the entries it holds makes this one needless
    // (BuilderConfig::hold_ahead_error_m); when it missed, pu.late may name the entry to send instead.
    bool holds_ahead(uint32_t tick, const Candidate& u, PerUnit& pu, const SnapshotHistory& history, const SkeletonPrecision& prec,
                     const QCharacter& held, float dt, const std::function<float()>& predicted_err);
    // `make`'s figure, shared through this build's cache when `shared` (the held state is the history's).
    float figure(uint32_t tick, const Candidate& u, uint32_t kind, bool shared, const std::function<float()>& make);
    void report(uint16_t character, Unsent why, size_t bytes, size_t joints);
    double per_snapshot_budget() const;  // bytes

    PerUnit& unit(size_t position, UnitKey key, uint32_t tick);

    BuilderConfig cfg_;
    EncodeCache* cache_ = nullptr;  // this build's
    std::unordered_map<UnitKey, PerUnit> units_;
    // The units of the previous build in its order: the next build, whose characters come in the
    // same order, finds each without a lookup in units_ (whose buckets and nodes were most of a
    // build's cache misses). Emptied when a unit is forgotten.
    std::vector<std::pair<UnitKey, PerUnit*>> last_units_;
    BuilderStats stats_;
    double budget_carry_ = 0.0;
    size_t left_out_ = 0;  // units the previous build could not send
    std::vector<UnsentReport> reports_;
    std::set<std::pair<uint16_t, int>> reported_;
};

}  // namespace ks
