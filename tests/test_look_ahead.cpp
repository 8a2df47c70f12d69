// The authority's look-ahead (docs/FIDELITY.md, "Look-ahead"): computed at tick t from the state at
// t alone. Without a decision in the horizon it is the future the simulation then reaches (clips,
// speed easing, transitions in progress and the look-at target carried on); a decision after t
// changes the future but not the look-ahead computed at t; the recording keeps what was computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <chrono>
#include <thread>

#include <kinesync/common/record/recording.h>
#include "common/src/codec/snapshot_codec.h"
#include <kinesync/server/stream_server.h>
#include "programs/server/sim/look_ahead_horizon.h"
#include "programs/server/sim/world.h"
#include "programs/server/sim/world_streamer.h"
#include "tests/support/udp_harness.h"
#include "tests/support/scratch.h"

using namespace ks;

namespace {

WorldConfig busy_world() {
    WorldConfig wc;
    wc.characters = 4;
    wc.seed = 11;
    wc.controller.switch_min_s = 0.6f;  // transitions often in progress
    wc.controller.switch_max_s = 1.2f;
    return wc;
}

// Largest distance between two poses' joint positions and rotations (radians) and velocities.
struct PoseDiff {
    float pos = 0, rot = 0, vel = 0;
};
PoseDiff diff(const Pose& a, const Pose& b) {
    PoseDiff d;
    for (size_t j = 0; j < a.pos.size(); ++j) {
        d.pos = std::max(d.pos, length(a.pos[j] - b.pos[j]));
        d.rot = std::max(d.rot, length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(a.rot[j], b.rot[j])))));
        d.vel = std::max(d.vel, length(a.vel[j] - b.vel[j]));
    }
    return d;
}

// A root and one child 1 m above it.
Skeleton two_joints() {
    Skeleton s;
    s.names = {"root", "a"};
    s.parents = {-1, 0};
    s.offsets = {{0, 0, 0}, {0, 1, 0}};
    return s;
}

// A server without a network, recording to a scratch file of this name.
StreamServerConfig recording_server(const std::string& name) {
    StreamServerConfig sc;
    sc.network = false;
    sc.record_path = ks::test::scratch_path(name);
    return sc;
}

}  // namespace

TEST(LookAhead, WithoutADecisionItIsTheFutureTheSimulationReaches) {
    const ClipLibrary lib = builtin_clip_library();
    World w(lib, busy_world());
    const int horizon = 15;  // 0.25 s at 60 Hz
    const double dt = 1.0 / 60.0;
    std::vector<Character> ahead(w.characters());
    int compared = 0, blending = 0;
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < 7; ++i) w.step();
        std::vector<int> switches;
        std::vector<uint16_t> epochs;
        for (size_t c = 0; c < w.characters().size(); ++c) {
            w.characters()[c].look_ahead(horizon, dt, ahead[c]);
            switches.push_back(w.characters()[c].switches());
            epochs.push_back(w.characters()[c].epoch());
        }
        for (int i = 0; i < horizon; ++i) w.step();
        for (size_t c = 0; c < w.characters().size(); ++c) {
            const Character& ch = w.characters()[c];
            if (ch.switches() != switches[c] || ch.epoch() != epochs[c]) continue;  // a decision came: the future changed
            const PoseDiff d = diff(ahead[c].pose(), ch.pose());
            // The built-in body is in centimetres. Clip time sums the eased speeds in closed form, the
            // truth tick by tick in float: they agree to well under a millimetre.
            EXPECT_LT(d.pos, 0.05f) << "round " << round << " character " << c;
            EXPECT_LT(d.rot, 1e-3f) << "round " << round << " character " << c;
            EXPECT_LT(d.vel, 0.5f) << "round " << round << " character " << c;
            ++compared;
            blending += ch.switches() > 0;
        }
    }
    EXPECT_GT(compared, 100);
    EXPECT_GT(blending, 20) << "horizons after a clip switch, its transition carried on";
}

TEST(LookAhead, ADecisionAfterTickTChangesTheFutureButNotTheLookAheadRecordedAtT) {
    // Two servers record the same world; in the second a teleport is injected right after tick t.
    const ClipLibrary lib = builtin_clip_library();
    test::quiet_server_logger();
    const uint32_t t = 60, horizon_ticks = 15;
    std::vector<RecordingReadResult> recs;
    std::vector<Pose> truth_after;  // character 0 at t + horizon
    for (const bool decide : {false, true}) {
        WorldConfig wc = busy_world();
        wc.controller.switch_min_s = wc.controller.switch_max_s = 30.0f;  // no clip switch in this window
        World world(lib, wc);
        StreamServerConfig sc;
        sc.network = false;
        sc.record_path = ks::test::scratch_path(decide ? "ahead-decided.ksrec" : "ahead-plain.ksrec");
        StreamServer server(sc);
        WorldStreamer streamer(world, server, 0);
        streamer.set_look_ahead(double(horizon_ticks) / 60.0, 2);
        while (world.tick() < t + horizon_ticks) {
            if (decide && world.tick() == t) world.characters()[0].teleport({500, 0, 500}, 1.0f, t + 1);
            streamer.step();
        }
        truth_after.push_back(world.characters()[0].pose());
        server.close();
        recs.push_back(read_recording(sc.record_path));
        std::remove(sc.record_path.c_str());
    }
    const RecordedCharacter& plain = recs[0].frames[t - 1].characters[0];
    const RecordedCharacter& decided = recs[1].frames[t - 1].characters[0];
    ASSERT_EQ(recs[0].frames[t - 1].tick, t);
    ASSERT_FLOAT_EQ(plain.ahead_s, float(horizon_ticks) / 60.0f);
    EXPECT_EQ(diff(plain.ahead, decided.ahead).pos, 0.0f) << "the look-ahead at t knows nothing of what comes after t";
    EXPECT_EQ(diff(plain.pose, decided.pose).pos, 0.0f);
    EXPECT_LT(diff(plain.ahead, truth_after[0]).pos, 0.05f) << "without the decision it was the future";
    EXPECT_GT(diff(decided.ahead, truth_after[1]).pos, 100.0f) << "with it, the future moved and the look-ahead is wrong";
    EXPECT_EQ(recs[0].frames[t - 2].characters[0].ahead_s, 0.0f) << "snapshot ticks only (every second tick here)";
}

TEST(LookAhead, NoLookAheadReachesBackAcrossATeleportOrReset) {
    const ClipLibrary lib = builtin_clip_library();
    test::quiet_server_logger();
    WorldConfig wc = busy_world();
    wc.controller.teleport_every_s = 1.0f;
    wc.controller.reset_every_s = 1.5f;
    World world(lib, wc);
    const StreamServerConfig sc = recording_server("ahead-epochs.ksrec");
    StreamServer server(sc);
    WorldStreamer streamer(world, server, 0);
    const double horizon_s = 0.25;
    streamer.set_look_ahead(horizon_s, 2);
    while (world.tick() < 600) streamer.step();
    server.close();
    const RecordingReadResult rec = read_recording(sc.record_path);
    std::remove(sc.record_path.c_str());
    std::map<uint16_t, uint32_t> last_event;  // character -> tick of its last teleport or reset
    int ramped = 0, full = 0;
    for (const RecordedFrame& f : rec.frames) {
        for (const RecordedEvent& e : f.events) last_event[e.character] = e.tick;
        for (const RecordedCharacter& c : f.characters) {
            if (f.tick % 2 != 0) {
                EXPECT_EQ(c.ahead_s, 0.0f) << "tick " << f.tick;
                continue;
            }
            const double since = double(f.tick - (last_event.count(c.id) ? last_event[c.id] : 0)) / 60.0;
            EXPECT_LE(double(c.ahead_s), std::min(horizon_s, since) + 1e-6) << "character " << c.id << " tick " << f.tick;
            EXPECT_GE(double(c.ahead_s), std::min(horizon_s, since) - 1e-6) << "character " << c.id << " tick " << f.tick;
            ramped += c.ahead_s > 0 && c.ahead_s < float(horizon_s) - 1e-4f;
            full += c.ahead_s > float(horizon_s) - 1e-4f;
        }
    }
    EXPECT_GT(ramped, 20);
    EXPECT_GT(full, 200);
}

// --decision-restart: after a clip switch the horizon starts again short and grows back a tick per
// tick, so each plan's entries come due in order; without it (the control) it never shortens.
TEST(LookAhead, AfterADecisionTheHorizonRestartsShortAndGrowsBackATickPerTick) {
    const ClipLibrary lib = builtin_clip_library();
    test::quiet_server_logger();
    for (const double restart_s : {0.1, -1.0}) {
        World world(lib, busy_world());
        const StreamServerConfig sc = recording_server("ahead-restart.ksrec");
        StreamServer server(sc);
        WorldStreamer streamer(world, server, 0);
        const double horizon_s = 0.25;
        streamer.set_look_ahead(horizon_s, 2);
        streamer.set_decision_restart(restart_s);
        // The tick of each character's last clip switch, read from the world after every step.
        std::map<std::pair<uint16_t, uint32_t>, uint32_t> switch_tick;  // (character, tick) -> tick of its last switch
        std::map<uint16_t, std::pair<int, uint32_t>> last;               // character -> (switches, tick of the last)
        while (world.tick() < 600) {
            const uint32_t tick = streamer.step();
            for (size_t c = 0; c < world.characters().size(); ++c) {
                const int n = world.characters()[c].switches();
                auto it = last.find(uint16_t(c));
                if (it == last.end()) it = last.emplace(uint16_t(c), std::make_pair(n, 0u)).first;
                if (it->second.first != n) it->second = {n, tick};
                switch_tick[{uint16_t(c), tick}] = it->second.second;
            }
        }
        server.close();
        const RecordingReadResult rec = read_recording(sc.record_path);
        std::remove(sc.record_path.c_str());
        std::map<uint16_t, std::pair<uint16_t, double>> due;  // character -> (plan, its latest entry's time)
        int restarted = 0;
        for (const RecordedFrame& f : rec.frames)
            for (const RecordedCharacter& c : f.characters) {
                if (f.tick % 2 != 0 || c.ahead_s == 0.0f) continue;
                const double since = double(f.tick - switch_tick.at({c.id, f.tick})) / 60.0;
                const double start = double(f.tick) / 60.0;  // the horizon also ramps from the first tick
                const double expected = std::min({horizon_s, start, restart_s < 0 ? horizon_s : restart_s + since});
                EXPECT_NEAR(double(c.ahead_s), expected, 1e-6) << "character " << c.id << " tick " << f.tick;
                restarted += start > horizon_s && c.ahead_s < float(horizon_s) - 1e-4f;
                const double t = start + double(c.ahead_s);
                const auto before = due.find(c.id);
                if (before != due.end() && before->second.first == c.ahead_plan) {
                    EXPECT_GT(t, before->second.second) << "character " << c.id << " tick " << f.tick;
                }
                due[c.id] = {c.ahead_plan, t};
            }
        if (restart_s < 0) {
            EXPECT_EQ(restarted, 0);
        } else {
            EXPECT_GT(restarted, 40) << "4 characters switching every 0.6 to 1.2 s for 10 s";
        }
    }
}

TEST(LookAhead, ADecisionRestartOverTwoSecondsOrNotANumberIsRefused) {
    const ClipLibrary lib = builtin_clip_library();
    test::quiet_server_logger();
    World world(lib, busy_world());
    StreamServerConfig sc;
    sc.network = false;
    StreamServer server(sc);
    WorldStreamer streamer(world, server, 0);
    for (const double bad : {2.5, std::nan("")}) {
        try {
            streamer.set_decision_restart(bad);
            ADD_FAILURE() << bad << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("at most 2 s"), std::string::npos) << e.what();
        }
    }
    streamer.set_decision_restart(-1.0);  // off
    streamer.set_decision_restart(2.0);
}

TEST(LookAhead, TheServerLibraryRefusesABadLookAheadNamingIt) {
    StreamServerConfig sc;
    sc.network = false;
    StreamServer server(sc);
    const Skeleton s = two_joints();
    const uint16_t c = server.add_character(server.add_skeleton("s", s));
    const Pose p(s);
    try {
        server.set_look_ahead(c, p, 0.2f, 0);
        ADD_FAILURE() << "a look-ahead before any pose";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::State);
    }
    server.set_pose(c, p);
    for (const float bad : {0.0f, -0.1f, 2.5f, std::nanf("")}) {
        try {
            server.set_look_ahead(c, p, bad, 0);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "seconds") << bad;
        }
    }
    Pose nan = p;
    nan.vel[1].x = std::nanf("");
    try {
        server.set_look_ahead(c, nan, 0.2f, 0);
        ADD_FAILURE() << "a NaN look-ahead";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "pose.vel");
    }
    server.set_look_ahead(c, p, 0.2f, 0);
}

TEST(LookAhead, LiveClientsReceiveTheLookAheadWithItsHorizonAndPlan) {
    test::quiet_server_logger();
    StreamServerConfig sc;
    sc.port = 0;
    sc.io = IoMode::Pumped;
    StreamServer server(sc);
    const Skeleton s = two_joints();
    const uint16_t id = server.add_character(server.add_skeleton("s", s));
    Pose present(s), ahead(s);
    ahead.pos[0].x = 1.0f;
    test::UdpClient c(server.port());
    c.session.connect(c.now());
    std::vector<SnapshotAssembler::Ready> got;
    int ticks = 0;
    test::wait_until([&] { return got.size() >= 5; }, [&] {
        server.set_pose(id, present);
        if (++ticks > 10) server.set_look_ahead(id, ahead, 0.25f, 7);
        server.end_tick();
        c.pump();
        for (SnapshotAssembler::Ready& r : c.session.take_poses())
            if (r.ahead) got.push_back(std::move(r));
    }, test::kDeadlineS, std::chrono::milliseconds(3));
    ASSERT_GE(got.size(), 5u) << c.session.state_name();
    for (const SnapshotAssembler::Ready& r : got) {
        EXPECT_EQ(r.ahead_ticks, 15) << "0.25 s at 60 Hz ticks";
        EXPECT_EQ(r.plan, 7);
        EXPECT_NEAR(r.pose.pos[0].x, 1.0f, 1e-3f) << "the look-ahead pose, sent instead of the present one";
    }
    server.close();
}

TEST(LookAhead, AnEntryClaimingAHorizonBeyondTwoSecondsIsRefused) {
    SnapshotDecoder d(60.0f);
    std::vector<DecodedCharacter> out;
    for (const uint32_t ticks : {2000u, 2001u}) {
        std::vector<uint8_t> p{0, kModeFlagsFollow, kModeAhead};
        put_varint(p, ticks);
        put_varint(p, 3);
        put_varint(p, 0);  // no coded bytes: the entry then fails on its skeleton, not its framing
        const SnapshotError e = d.decode(1, p, [](uint16_t) { return -1; }, [](uint16_t) { return nullptr; }, out);
        if (ticks <= kMaxAheadTicks) EXPECT_EQ(e, SnapshotError::UnknownCharacter);
        else EXPECT_EQ(e, SnapshotError::BadFormat);
    }
}

TEST(LookAhead, TheHorizonFollowsTheSlowerClientsAndMovesSlowly) {
    // Without a measured client: the configured horizon.
    EXPECT_EQ(horizon_for_clients({}, 30.0, 0.25), 0.25);
    EXPECT_EQ(horizon_for_clients({0.0, std::nan("")}, 30.0, 0.25), 0.25);
    // broadband (100 ms round trip): 1.5 x 50 ms + 2 snapshot intervals = 0.142 s.
    EXPECT_NEAR(horizon_for_clients({100.0}, 30.0, 0.25), 0.075 + 2.0 / 30.0, 1e-9);
    // The 90th percentile (nearest rank): one slow client in ten does not set everyone's horizon,
    // two do.
    std::vector<double> rtts(9, 100.0);
    rtts.push_back(300.0);
    EXPECT_NEAR(horizon_for_clients(rtts, 30.0, 0.25), 0.075 + 2.0 / 30.0, 1e-9);
    rtts[0] = 300.0;
    EXPECT_NEAR(horizon_for_clients(rtts, 30.0, 0.25), 0.225 + 2.0 / 30.0, 1e-9);
    // Within [0.1, 0.5] s.
    EXPECT_EQ(horizon_for_clients({1.0}, 30.0, 0.25), 0.1);
    EXPECT_EQ(horizon_for_clients({5000.0}, 30.0, 0.25), 0.5);
    // A quarter snapshot interval per snapshot at most, so look-ahead times keep increasing.
    double h = 0.25;
    for (int i = 0; i < 100; ++i) {
        const double next = slew_horizon(h, 0.1, 30.0);
        EXPECT_GT(i / 30.0 + 1.0 / 30.0 + next, i / 30.0 + h);
        EXPECT_LE(std::abs(next - h), 0.25 / 30.0 + 1e-12);
        h = next;
    }
    EXPECT_DOUBLE_EQ(h, 0.1);
}
