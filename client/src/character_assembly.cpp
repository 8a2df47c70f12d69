#include "client/src/character_assembly.h"

#include <algorithm>
#include <utility>

#include <kinesync/common/math/quat.h>

#include "common/src/codec/quantize.h"

namespace ks {

void SnapshotAssembler::begin_datagram(uint32_t tick, uint32_t index, uint32_t count) {
    finish_older_than(tick);
    TickDatagrams& t = ticks_[tick];
    t.count = std::max(t.count, count);
    if (index < t.seen.size() && !t.seen[index]) {
        t.seen[index] = true;
        ++t.received;
    }
    // Only the last few ticks matter: older entries are done with.
    while (ticks_.size() > 64) ticks_.erase(ticks_.begin());
}

void SnapshotAssembler::add(uint16_t id, uint32_t tick, const QCharacter& state, JointRange joints, const Skeleton& skeleton,
                            const SkeletonPrecision& prec) {
    const size_t n = size_t(skeleton.size());
    Character& c = chars_[id];
    if (c.joint_tick.size() != n) {
        c = Character{};
        c.latest = Pose(int(n));
        c.joint_tick.assign(n, 0);
        c.seen.assign(n, 0);
    }
    if (c.has_pending && tick > c.pending) finish(id, c);
    // The tick being assembled, or a newer one than any shown; else a late part (kept, not shown).
    const bool current = c.has_pending ? tick == c.pending : (!c.any_done || tick > c.newest_done);
    if (current && !c.has_pending) {
        c.pending = tick;
        c.has_pending = true;
        c.fresh_count = 0;
    }
    if (current && c.seen_count > 0 && state.epoch != c.epoch) {  // a new motion: wait for all of it
        std::fill(c.seen.begin(), c.seen.end(), uint8_t(0));
        c.seen_count = 0;
        c.fresh_count = 0;
    }
    if (!current && state.epoch != c.epoch) return;  // late, from another motion
    if (decoded_.size() != int(n)) decoded_ = Pose(int(n));
    dequantize_joints(decoded_, state, skeleton, prec, joints.first, joints.count);
    for (uint32_t j = joints.first; j < joints.end(); ++j) {
        if (c.seen[j] && c.joint_tick[j] >= tick) continue;  // a duplicate, or older than what is held
        c.latest.set(int(j), decoded_.get(int(j)));
        if (!c.seen[j]) ++c.seen_count;
        c.seen[j] = 1;
        c.joint_tick[j] = tick;
        if (current) ++c.fresh_count;
    }
    if (current) {
        c.epoch = state.epoch;
        c.ahead = state.ahead;
        c.ahead_ticks = state.ahead_ticks;
        c.plan = state.plan;
    }
    if (c.has_pending && c.fresh_count == n) finish(id, c);
}

void SnapshotAssembler::end_datagram(uint32_t tick) {
    const auto it = ticks_.find(tick);
    if (it == ticks_.end() || it->second.received < it->second.count) return;
    for (auto& [id, c] : chars_)
        if (c.has_pending && c.pending == tick) finish(id, c);
}

void SnapshotAssembler::finish_older_than(uint32_t tick) {
    for (auto& [id, c] : chars_)
        if (c.has_pending && c.pending < tick) finish(id, c);
}

void SnapshotAssembler::finish(uint16_t id, Character& c) {
    c.has_pending = false;
    c.newest_done = c.pending;
    c.any_done = true;
    if (c.seen_count < c.joint_tick.size()) return;  // not every joint has arrived yet
    size_t waiting = 0;
    auto oldest = ready_.end();
    for (auto it = ready_.begin(); it != ready_.end(); ++it)
        if (it->id == id && waiting++ == 0) oldest = it;
    if (waiting >= kMaxReadyPerCharacter) {
        ready_.erase(oldest);
        ++dropped_;
    }
    Pose buffer;
    if (!spare_.empty()) {
        buffer = std::move(spare_.back());
        spare_.pop_back();
    }
    buffer = c.latest;  // into the recycled buffer's storage when it is large enough
    ready_.push_back({id, c.pending, c.epoch, std::move(buffer), c.ahead, c.ahead_ticks, c.plan});
    Pose& out = ready_.back().pose;
    for (size_t j = 0; j < c.joint_tick.size(); ++j) {
        if (c.joint_tick[j] == c.pending) continue;
        const float dt = float(std::min(double(c.pending - c.joint_tick[j]) / double(tick_hz_), kMaxPartExtrapolation));
        out.pos[j] = c.latest.pos[j] + c.latest.vel[j] * dt;
        out.rot[j] = quat_mul(quat_from_scaled_angle_axis(c.latest.ang[j] * dt), c.latest.rot[j]);
        out.scl[j] = c.latest.scl[j] * exp(c.latest.svl[j] * dt);
    }
}

std::vector<SnapshotAssembler::Ready> SnapshotAssembler::take_ready() { return std::exchange(ready_, {}); }

void SnapshotAssembler::recycle(std::vector<Ready>&& used) {
    const size_t keep = std::max<size_t>(1, chars_.size()) * kSparePerCharacter;
    for (Ready& r : used) {
        if (spare_.size() >= keep) break;
        spare_.push_back(std::move(r.pose));
    }
    used.clear();
    if (ready_.empty() && ready_.capacity() < used.capacity()) ready_.swap(used);  // the list's own storage too
}

}  // namespace ks
