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

TEST(SnapshotHistory, AStrideKeepsOneSlotPerKeptTickAndBadArgumentsAreRefusedByName) {
    SnapshotHistory h(256, 3);  // 86 slots: ticks 3, 6, ... within the last 256
    std::vector<CharacterSnapshot> now(1);
    now[0].id = 4;
    now[0].state.joints.resize(10);
    for (uint32_t tick = 3; tick <= 900; tick += 3) {
        now[0].state.epoch = uint16_t(tick);
        h.add(tick, now);
    }
    EXPECT_EQ(h.held_bytes(), 86 * 10 * sizeof(QJoint));
    EXPECT_EQ(h.find(4, 900)->epoch, 900);
    EXPECT_EQ(h.find(4, 899), nullptr) << "not a kept tick";
    ASSERT_NE(h.find(4, 645), nullptr) << "the oldest kept tick within 256";
    EXPECT_EQ(h.find(4, 645)->epoch, 645);
    EXPECT_EQ(h.find(4, 642), nullptr) << "older than 256 ticks: overwritten";
    try {
        h.add(901, now);
        ADD_FAILURE() << "a tick off the stride was kept";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_EQ(e.field(), "tick");
    }
    for (const auto& [capacity, stride] : {std::pair{256u, 0u}, std::pair{256u, 257u}, std::pair{0u, 1u}}) {
        try {
            SnapshotHistory bad(capacity, stride);
            ADD_FAILURE() << capacity << ", " << stride << " accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidConfig);
            EXPECT_EQ(e.field(), capacity == 0 ? "config.capacity_ticks" : "config.stride");
        }
    }
}

// 60 Hz ticks and 30 or 20 Hz snapshots: the server keeps the snapshots' ticks, a slot each.
TEST(SnapshotHistory, TheServerKeepsOnlyTheTicksItBuiltSnapshotsFor) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("game");
    for (const float hz : {30.0f, 20.0f}) {
        SCOPED_TRACE(hz);
        const uint32_t every = uint32_t(60.0f / hz);
        InProcessRig rig(lib, InProcessRigConfig{.characters = 2, .clients = 1, .worker_threads = 1, .snapshot_hz = hz});
        const uint32_t ticks = 600;
        for (int n = 1; n <= int(ticks); ++n) rig.tick(n);
        const ClientSession& s = *rig.sessions()[0];
        ASSERT_EQ(s.characters().size(), 2u) << "the client shows both characters";
        const SnapshotHistory& h = rig.server().history();
        EXPECT_EQ(h.stride(), every);
        const uint32_t slots = (h.capacity() + every - 1) / every;
        size_t expected_bytes = 0;
        for (uint16_t id : s.characters()) {
            uint32_t kept = 0;
            for (uint32_t t = ticks - slots * every + 1; t <= ticks; ++t) {
                if (!h.find(id, t)) continue;
                ++kept;
                EXPECT_EQ(t % every, 0u) << "tick " << t << " kept";
            }
            EXPECT_EQ(kept, slots) << "character " << id;
            const QCharacter* last = h.find(id, ticks - ticks % every);
            ASSERT_NE(last, nullptr);
            expected_bytes += slots * last->joints.size() * sizeof(QJoint);
        }
        EXPECT_EQ(h.held_bytes(), expected_bytes) << "a slot per kept tick";
    }
}
