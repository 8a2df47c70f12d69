// The look-ahead's honesty as A/B tests (docs/FIDELITY.md, "Honesty"; the check itself:
// programs/testbench/honesty.h). For each kind of decision the demo server makes (teleport, reset,
// clip switch, speed change), a pair of runs of the demo server (World + WorldStreamer +
// StreamServer, recording) identical up to that decision, taken by every character at tick T, on
// an even tick (look-ahead is sent on even ticks, so one is computed at T) and on an odd one (one
// is computed at T - 1). The honest look-ahead passes every pair. A family of dishonest ones, built
// through the same seam (WorldStreamer::set_look_ahead_function), must each be caught: one that
// knows the next decision of one kind only, and ones that peek one or two ticks into the future.
// A one-tick peek cannot be seen when T is even (no look-ahead is computed at T - 1, and the one
// computed at T - 2 peeks no further than T - 1): the odd pair catches it.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <kinesync/common/record/recording.h>
#include <kinesync/server/stream_server.h>
#include <kinesync/common/anim/ops_fk.h>
#include "programs/server/sim/world.h"
#include "programs/server/sim/world_streamer.h"
#include "programs/testbench/honesty.h"
#include "tests/support/scratch.h"
#include "tests/support/udp_harness.h"

using namespace ks;

namespace {

constexpr uint32_t kTicks = 200;        // 3.3 s at 60 Hz: the decision at 2.5 s, its snapshot arriving after
constexpr uint32_t kHorizonTicks = 15;  // 0.25 s
constexpr Decision::Kind kKinds[] = {Decision::Kind::Teleport, Decision::Kind::Reset, Decision::Kind::Switch, Decision::Kind::Speed};
constexpr uint32_t kDecisionTicks[] = {150, 151};  // even, odd

// The decision every character takes at tick t in run B (run A takes none).
Decision decision_for(Decision::Kind kind, uint32_t t, const World& world, size_t c) {
    const Character& ch = world.characters()[c];
    const std::vector<int> mine = world.library().clips_of(ch.skeleton());
    const float m = world.library().metres_per_unit[size_t(ch.skeleton())];
    Decision d;
    d.kind = kind;
    d.tick = t;
    d.position = vec3{20.0f + 3.0f * float(c), 0.0f, 10.0f} / m;
    d.yaw = 1.0f + 0.5f * float(c);
    d.clip = mine[(c + 1) % mine.size()];
    d.clip_time = 0.37 + 0.2 * double(c);
    d.speed = 1.6f;
    return d;
}

// The demo world of the standard recording (its own random decisions identical in both runs),
// recorded with the look-ahead `fn` (Character::look_ahead when empty).
RecordingReadResult record(const WorldStreamer::LookAheadFn& fn, std::optional<Decision::Kind> kind, uint32_t t) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library();
    WorldConfig wc;
    wc.characters = 4;
    wc.seed = 7;
    wc.controller.teleport_every_s = 7.0f;
    wc.controller.reset_every_s = 11.0f;
    World world(lib, wc);
    if (kind)
        for (size_t c = 0; c < world.characters().size(); ++c) world.characters()[c].schedule(decision_for(*kind, t, world, c));
    StreamServerConfig sc;
    sc.network = false;
    sc.record_path = test::scratch_path("honesty.ksrec");
    StreamServer server(sc);
    WorldStreamer streamer(world, server, 0);
    streamer.set_look_ahead(double(kHorizonTicks) / 60.0, 2);
    streamer.set_decision_restart(WorldStreamer::kDecisionRestartS);  // as kinesync-server does
    if (fn) streamer.set_look_ahead_function(fn);
    while (world.tick() < kTicks) streamer.step();
    server.close();
    RecordingReadResult rec = read_recording(sc.record_path);
    std::remove(sc.record_path.c_str());
    return rec;
}

// Knows the scheduled decisions of one kind: steps a copy that keeps only those (its random
// source silenced, so it knows nothing else).
WorldStreamer::LookAheadFn knows_next(Decision::Kind kind) {
    return [kind](const Character& ch, int ticks, double dt, uint32_t now, Character& out) {
        out = ch;
        out.clear_schedule();
        for (const Decision& d : ch.scheduled())
            if (d.kind == kind) out.schedule(d);
        out.stop_random_decisions();
        for (int i = 1; i <= ticks; ++i) out.step(dt, now + uint32_t(i));
    };
}

// Computes the honest look-ahead from the state `peek` ticks in the future.
WorldStreamer::LookAheadFn peeks(int peek) {
    return [peek](const Character& ch, int ticks, double dt, uint32_t now, Character& out) {
        Character later = ch;
        for (int i = 1; i <= peek; ++i) later.step(dt, now + uint32_t(i));
        later.look_ahead(std::max(0, ticks - peek), dt, out);
    };
}

struct Variant {
    std::string name;
    WorldStreamer::LookAheadFn fn;
    std::optional<Decision::Kind> only;  // the pairs it is run on (all when empty)
    int caught_parities = 2;             // pairs of each kind it must be caught in (the odd one when 1)
    bool replayed = false;               // the shown check too (else the entry check alone)
};

std::vector<Variant> variants() {
    // The replays cost most: every honest pair is replayed, and the cheat whose entries come due
    // soonest (knowing a teleport) to show that the shown check catches one too.
    std::vector<Variant> v{{"honest", {}, std::nullopt, 0, true}};
    for (Decision::Kind k : kKinds)
        v.push_back({std::string("knows the next ") + decision_kind_name(k), knows_next(k), k, 2, k == Decision::Kind::Teleport});
    v.push_back({"peeks one tick", peeks(1), std::nullopt, 1});
    v.push_back({"peeks two ticks", peeks(2), std::nullopt, 2});
    return v;
}

}  // namespace

TEST(LookAheadHonesty, EveryKindOfDecisionOnEitherParityIsHiddenFromEarlierLookAheadsAndEveryCheatIsCaught) {
    for (const Variant& v : variants()) {
        const RecordingReadResult a = record(v.fn, std::nullopt, 0);
        const double span = double(kDecisionTicks[1]) / 60.0 + 1.0;
        const ShownReplay shown_a = v.replayed ? replay_shown(a, {}, span) : ShownReplay{};
        for (Decision::Kind kind : kKinds) {
            if (v.only && *v.only != kind) continue;
            int caught = 0;
            for (uint32_t t : kDecisionTicks) {
                SCOPED_TRACE(v.name + ", " + decision_kind_name(kind) + " at tick " + std::to_string(t));
                const RecordingReadResult b = record(v.fn, kind, t);
                HonestyReport r;
                r.decision_tick = t;
                r.truth_parts_at = first_truth_difference(a, b);
                r.entries = compare_entries(a, b, t);
                if (v.replayed) r.shown = compare_shown(shown_a, replay_shown(b, {}, span), t, a.header.tick_hz);
                std::printf("%-24s %-8s T=%u: %s\n", v.name.c_str(), decision_kind_name(kind), t, honesty_summary(r).c_str());
                // The pair is what it claims: the truths part at the decision (a speed change shows
                // from the next tick: the speed eases from its old value), with look-ahead entries
                // reaching past it and frames to compare before its snapshot arrives.
                EXPECT_GE(r.truth_parts_at, t);
                EXPECT_LE(r.truth_parts_at, t + 1);
                EXPECT_GE(r.entries.reaching, 8u) << "entries whose horizon reaches the decision were compared";
                if (v.replayed) {
                    EXPECT_GT(r.shown.frames, 60u);
                    EXPECT_EQ(r.shown.strategies, 8u);
                }
                if (v.replayed && v.fn) {
                    EXPECT_GT(r.shown.differing, 0u) << "the shown check catches it too";
                }
                if (!v.fn) {
                    EXPECT_EQ(r.entries.differing, 0u) << "a look-ahead before T knows nothing of T";
                    EXPECT_EQ(r.shown.differing, 0u) << "nothing shown before T's snapshot arrives knows of T";
                }
                if (!r.honest()) ++caught;
                if (v.fn && v.caught_parities == 1 && t % 2 == 1) {
                    EXPECT_FALSE(r.honest()) << "caught on the odd tick";
                }
            }
            if (v.fn) {
                EXPECT_GE(caught, v.caught_parities) << v.name << " is caught on " << v.caught_parities << " parities of "
                                                     << decision_kind_name(kind);
            }
        }
    }
}

TEST(LookAheadHonesty, TheCheckRefusesAPairItCannotJudge) {
    const RecordingReadResult a = record({}, std::nullopt, 0), b = record({}, Decision::Kind::Teleport, 120);
    EXPECT_THROW(check_honesty(a, b, 150), std::invalid_argument);
    EXPECT_THROW(check_honesty(a, a, kTicks + 100), std::invalid_argument) << "no look-ahead reaches a tick past the end";
    const HonestyReport r = check_honesty(a, b, 120);
    EXPECT_TRUE(r.honest()) << honesty_summary(r);
}

namespace {

// A game of its own on the public API: one character it animates (the demo's controller stands in
// for its animation graph) and a look-ahead it computes itself, handed to StreamServer::
// set_look_ahead: the pose carried on along its velocities for the horizon. The dishonest game
// knows its script: a teleport at tick T, applied to its look-ahead from T - horizon on.
RecordingReadResult record_game(bool knows_the_script, std::optional<uint32_t> teleport_at) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library();
    Character ch(lib, 0, 11, vec3{}, 0.0f, ControllerConfig{});
    const vec3 there = vec3{15.0f, 0.0f, -4.0f} / lib.metres_per_unit[0];
    if (teleport_at) ch.schedule(Decision{Decision::Kind::Teleport, *teleport_at, there, 0.5f, 0, 0.0, 1.0f});
    StreamServerConfig sc;
    sc.network = false;
    sc.record_path = test::scratch_path("honesty-game.ksrec");
    StreamServer server(sc);
    server.add_skeleton(lib.skeleton_names[0], lib.skeletons[0], lib.metres_per_unit[0]);
    const uint16_t id = server.add_character(0, "hero");
    Pose ahead(ch.pose().size());
    const float horizon = float(kHorizonTicks) / 60.0f;
    for (uint32_t tick = 1; tick <= kTicks; ++tick) {
        ch.step(1.0 / 60.0, tick);
        if (!ch.events().empty()) server.teleport(id);
        server.set_pose(id, ch.pose());
        op_integrate(ahead, ch.pose(), horizon);
        if (knows_the_script && teleport_at && tick < *teleport_at && tick + kHorizonTicks >= *teleport_at) {
            kform root = ahead.get(0);
            root.pos = vec3{there.x, root.pos.y, there.z};
            ahead.set(0, root);
        }
        if (tick % 2 == 0) server.set_look_ahead(id, ahead, horizon, uint16_t(ch.plan()));
        server.end_tick();
    }
    server.close();
    RecordingReadResult rec = read_recording(sc.record_path);
    std::remove(sc.record_path.c_str());
    return rec;
}

}  // namespace

TEST(LookAheadHonesty, AGamesOwnLookAheadThroughThePublicApiIsCheckedTheSameWay) {
    for (const bool knows : {false, true}) {
        for (const uint32_t t : kDecisionTicks) {
            const HonestyReport r = check_honesty(record_game(knows, std::nullopt), record_game(knows, t), t);
            std::printf("%s game, teleport at T=%u: %s\n", knows ? "dishonest" : "honest", t, honesty_summary(r).c_str());
            EXPECT_EQ(r.truth_parts_at, t);
            EXPECT_GE(r.entries.reaching, 3u);
            EXPECT_EQ(r.honest(), !knows) << honesty_summary(r);
        }
    }
}
