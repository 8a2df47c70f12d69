// The server's shared history of quantized states: what it keeps, and that it keeps it whole when
// the copies run on the worker pool.
#include <gtest/gtest.h>

#include "common/src/util/worker_pool.h"
#include "programs/server/sim/in_process_rig.h"
#include "server/src/net/snapshot_builder.h"
#include "tests/support/udp_harness.h"

using namespace ks;

TEST(SnapshotHistory, CopiesOnAPoolKeepEveryCharactersStateAsGiven) {
    WorkerPool pool(1);
    SnapshotHistory on_pool(8), alone(8);
    for (uint32_t tick = 1; tick <= 12; ++tick) {
        std::vector<CharacterSnapshot> now;
        for (uint16_t id = 1; id <= 5; ++id) {
            CharacterSnapshot c{id, 0, {}};
            c.state.epoch = uint16_t(tick);
            c.state.joints.resize(3 + id);
            c.state.joints[0].rot[1] = int32_t(tick * 100 + id);
            now.push_back(c);
        }
        on_pool.add(tick, now, &pool);
        alone.add(tick, now);
        for (const CharacterSnapshot& c : now) {
            const QCharacter* q = on_pool.find(c.id, tick);
            ASSERT_NE(q, nullptr);
            EXPECT_EQ(*q, c.state);
        }
    }
    for (uint16_t id = 1; id <= 5; ++id) {
        EXPECT_EQ(on_pool.find(id, 4), nullptr) << "tick 4 was overwritten by tick 12 in a ring of 8";
        for (uint32_t tick = 5; tick <= 12; ++tick) EXPECT_EQ(*on_pool.find(id, tick), *alone.find(id, tick));
    }
    EXPECT_EQ(on_pool.held_bytes(), alone.held_bytes());
}

TEST(SnapshotHistory, TheServerKeepsOnlyTheTicksItBuiltSnapshotsFor) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("game");
    InProcessRigConfig rc;
    rc.characters = 2;
    rc.clients = 1;
    rc.worker_threads = 1;
    InProcessRig rig(lib, rc);
    const int ticks = 600;  // 60 Hz ticks, 30 Hz snapshots: every other tick
    for (int n = 1; n <= ticks; ++n) rig.tick(n);
    const ClientSession& s = *rig.sessions()[0];
    ASSERT_EQ(s.characters().size(), 2u) << "the client shows both characters";
    const SnapshotHistory& h = rig.server().history();
    size_t expected_bytes = 0;
    for (uint16_t id : s.characters()) {
        int kept = 0;
        for (uint32_t t = uint32_t(ticks) - h.capacity() + 1; t <= uint32_t(ticks); ++t) {
            if (!h.find(id, t)) continue;
            ++kept;
            EXPECT_EQ(h.find(id, t - 1), nullptr) << "two consecutive ticks kept: " << t - 1 << ", " << t;
        }
        EXPECT_EQ(kept, int(h.capacity() / 2)) << "character " << id;
        const QCharacter* last = h.find(id, uint32_t(ticks)) ? h.find(id, uint32_t(ticks)) : h.find(id, uint32_t(ticks - 1));
        ASSERT_NE(last, nullptr);
        expected_bytes += (h.capacity() / 2) * last->joints.size() * sizeof(QJoint);
    }
    EXPECT_EQ(h.held_bytes(), expected_bytes) << "half the ring's slots hold a state";
}
