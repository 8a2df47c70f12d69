#pragma once
// Whole poses from snapshot entries. A large character arrives as parts (common/src/codec/
// snapshot_codec.h), possibly in several datagrams, some of which may be lost or late, and a part
// left out for the budget comes in a later snapshot. The pose of a character at tick t holds
// the joints decoded for t and, for the others, their newest earlier state carried forward to t
// by its own velocities (at most kMaxPartExtrapolation s, then held).
//
// A tick's pose is ready when every joint was decoded for it, or every datagram of its tick has
// arrived (the rest was not sent), or a datagram of a newer tick arrived (the rest was lost or is
// late). A character is first shown once every joint has arrived at least once, and after an
// epoch change (teleport, reset) once every joint has arrived in the new epoch: a pose never
// mixes a new root with joints of the old motion.

#include <cstdint>
#include <bitset>
#include <map>
#include <utility>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/skeleton.h>

#include "common/src/codec/character_codec.h"

namespace ks {

constexpr double kMaxPartExtrapolation = 0.25;  // seconds a stale part is carried forward

class SnapshotAssembler {
public:
    explicit SnapshotAssembler(float tick_hz = 60.0f) : tick_hz_(tick_hz) {}
    void set_tick_hz(float hz) { tick_hz_ = hz; }
    // A snapshot datagram of `tick`, number `index` of the tick's `count`, before its entries.
    void begin_datagram(uint32_t tick, uint32_t index, uint32_t count);
    // One decoded entry of that datagram: `joints` of `state` (the skeleton's size).
    void add(uint16_t id, uint32_t tick, const QCharacter& state, JointRange joints, const Skeleton& skeleton,
             const SkeletonPrecision& prec);
    // After the datagram's entries.
    void end_datagram(uint32_t tick);

    struct Ready {
        uint16_t id;
        uint32_t tick;
        uint16_t epoch;
        Pose pose;
        // A look-ahead: the pose is for ahead_ticks after `tick`, under `plan` (QCharacter).
        bool ahead = false;
        uint16_t ahead_ticks = 0, plan = 0;
    };
    // Poses that became ready since the last call, in the order they did. At most
    // kMaxReadyPerCharacter of a character wait: beyond, its oldest is dropped (counted by
    // take_dropped()), so an owner that stops taking them does not make the client grow.
    std::vector<Ready> take_ready();
    // Poses taken and done with, handed back: the next ready poses are copied into their buffers
    // instead of newly allocated ones (a crowd's poses are megabytes a second of allocations,
    // and of fresh pages once the allocator has returned the freed ones). Keeps at most
    // kSparePerCharacter a character; the rest are freed.
    void recycle(std::vector<Ready>&& used);
    size_t spare_poses() const { return spare_.size(); }
    static constexpr size_t kMaxReadyPerCharacter = 4;
    static constexpr size_t kSparePerCharacter = 2;
    // Poses dropped since the last call (taken).
    uint64_t take_dropped() { return std::exchange(dropped_, 0); }
    // A character removed, or its skeleton changed.
    void forget(uint16_t id) { chars_.erase(id); }

private:
    struct Character {
        Pose latest;                     // every joint at its own tick
        std::vector<uint32_t> joint_tick;
        std::vector<uint8_t> seen;       // the joint has arrived at least once
        size_t seen_count = 0;
        size_t fresh_count = 0;          // joints decoded for `pending`
        uint32_t pending = 0;            // the tick being assembled
        bool has_pending = false;
        uint32_t newest_done = 0;        // the newest tick finished
        bool any_done = false;
        uint16_t epoch = 0;
        bool ahead = false;  // of the tick being assembled
        uint16_t ahead_ticks = 0, plan = 0;
    };
    struct TickDatagrams {
        uint32_t count = 0, received = 0;
        std::bitset<256> seen;  // datagram indexes received (duplicates count once)
    };
    void finish(uint16_t id, Character& c);
    void finish_older_than(uint32_t tick);

    float tick_hz_;
    std::map<uint16_t, Character> chars_;
    std::map<uint32_t, TickDatagrams> ticks_;
    std::vector<Ready> ready_;
    std::vector<Pose> spare_;  // recycled buffers
    uint64_t dropped_ = 0;
    Pose decoded_;  // scratch
};

}  // namespace ks
