// The look-ahead's honesty as an A/B test (docs/FIDELITY.md, "Look-ahead"): two runs of the demo
// server (World + WorldStreamer + StreamServer, recording) identical up to a decision at tick T
// (another first teleport time) and different after it. An honest look-ahead, computed at each tick
// from that tick's state alone, stores bit-identical entries for every tick before T, those within
// its horizon of T included; replayed, every strategy shows bit-identical poses until the snapshot
// of T can arrive. A dishonest look-ahead, built here, steps a copy of the whole character (its
// random source and schedules included) and so "knows" the teleport: both checks catch it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <kinesync/common/record/recording.h>
#include <kinesync/server/stream_server.h>
#include "programs/server/sim/world.h"
#include "programs/server/sim/world_streamer.h"
#include "programs/testbench/replay.h"
#include "programs/testbench/view_capture.h"
#include "tests/support/scratch.h"
#include "tests/support/udp_harness.h"

using namespace ks;

namespace {

constexpr uint32_t kTicks = 300;        // 5 s at 60 Hz
constexpr uint32_t kHorizonTicks = 15;  // 0.25 s

// The demo world of the standard recording, with teleports every `teleport_every_s` (the first one
// at a time drawn from the same random number in both runs, so the runs part there).
RecordingReadResult record(float teleport_every_s, const WorldStreamer::LookAheadFn& look_ahead, const std::string& name) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library();
    WorldConfig wc;
    wc.characters = 4;
    wc.seed = 7;
    wc.controller.teleport_every_s = teleport_every_s;
    wc.controller.reset_every_s = 11.0f;
    World world(lib, wc);
    StreamServerConfig sc;
    sc.network = false;
    sc.record_path = test::scratch_path(name);
    StreamServer server(sc);
    WorldStreamer streamer(world, server, 0);
    streamer.set_look_ahead(double(kHorizonTicks) / 60.0, 2);
    streamer.set_decision_restart(WorldStreamer::kDecisionRestartS);  // as kinesync-server does
    if (look_ahead) streamer.set_look_ahead_function(look_ahead);
    while (world.tick() < kTicks) streamer.step();
    server.close();
    RecordingReadResult rec = read_recording(sc.record_path);
    std::remove(sc.record_path.c_str());
    return rec;
}

// Every float of the two poses, bit for bit.
bool same_bits(const Pose& a, const Pose& b) {
    auto eq = [](const auto& x, const auto& y) {
        return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof x[0]) == 0);
    };
    return eq(a.pos, b.pos) && eq(a.rot, b.rot) && eq(a.scl, b.scl) && eq(a.vel, b.vel) && eq(a.ang, b.ang) && eq(a.svl, b.svl);
}

// The first tick whose truth (a pose or an epoch of any character) differs between the runs.
uint32_t first_difference(const RecordingReadResult& a, const RecordingReadResult& b) {
    for (size_t f = 0; f < std::min(a.frames.size(), b.frames.size()); ++f)
        for (size_t c = 0; c < a.frames[f].characters.size(); ++c) {
            const RecordedCharacter& x = a.frames[f].characters[c];
            const RecordedCharacter& y = b.frames[f].characters[c];
            if (x.epoch != y.epoch || !same_bits(x.pose, y.pose)) return a.frames[f].tick;
        }
    return UINT32_MAX;
}

struct AheadCheck {
    size_t compared = 0, near_t = 0, differing = 0;  // entries before T, within the horizon of T, not bit-identical
};

AheadCheck compare_look_ahead(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t t) {
    AheadCheck k;
    for (size_t f = 0; f < a.frames.size() && a.frames[f].tick < t; ++f)
        for (size_t c = 0; c < a.frames[f].characters.size(); ++c) {
            const RecordedCharacter& x = a.frames[f].characters[c];
            const RecordedCharacter& y = b.frames[f].characters[c];
            if (x.ahead_s == 0.0f && y.ahead_s == 0.0f) continue;
            ++k.compared;
            k.near_t += a.frames[f].tick + kHorizonTicks >= t;
            k.differing += std::memcmp(&x.ahead_s, &y.ahead_s, sizeof x.ahead_s) != 0 || x.ahead_plan != y.ahead_plan ||
                           !same_bits(x.ahead, y.ahead);
        }
    return k;
}

struct ShownCheck {
    size_t frames = 0, streams = 0, differing = 0;  // frames before T's snapshot arrives; strategies; those that differ there
};

// Replays both runs through every strategy ("+ahead" ones included) over the same simulated
// broadband network and compares what each strategy showed, every joint of every character, in
// the render frames before the snapshot of tick `t` first arrives.
ShownCheck shown_before(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t t) {
    ReplayConfig cfg;
    cfg.profile = net_profile("broadband");
    cfg.seed = 3;
    cfg.strategies = all_strategies();
    cfg.strategies.insert(cfg.strategies.end(), ahead_strategies().begin(), ahead_strategies().end());
    std::vector<std::string> streams{"truth"};
    for (bool ahead : {false, true})  // the replay's order: the present strategies' run, then the +ahead one's
        for (Strategy s : cfg.strategies)
            if (uses_look_ahead(s) == ahead) streams.push_back(strategy_name(s));
    std::vector<int> joints;
    for (const auto& c : a.header.characters) joints.push_back(a.header.skeletons[c.skeleton].size());
    ViewCapture va(streams, joints, 0.0, 60.0), vb(streams, joints, 0.0, 60.0);
    cfg.view = &va;
    run_replay(a, cfg);
    cfg.view = &vb;
    run_replay(b, cfg);
    // The snapshot of tick t is sent at t / 60 s; the earliest arrival of it or a later one.
    double arrival = 1e300;
    for (const ViewCapture* v : {&va, &vb})
        for (const auto& [tick_s, at] : v->snapshots())
            if (tick_s >= double(t) / 60.0 - 1e-9) arrival = std::min(arrival, at);
    ShownCheck k;
    while (k.frames < va.frames() && va.t0() + double(k.frames) / 60.0 < arrival - 1e-9) ++k.frames;
    for (size_t s = 1; s < streams.size(); ++s) {
        ++k.streams;
        k.differing += va.shown(s, k.frames) != vb.shown(s, k.frames);
    }
    return k;
}

// Steps a copy of the whole character: it knows its own next clip, speed, teleport and reset.
void dishonest(const Character& ch, int ticks, double dt, uint32_t now, Character& out) {
    out = ch;
    for (int i = 1; i <= ticks; ++i) out.step(dt, now + uint32_t(i));
}

}  // namespace

TEST(LookAheadHonesty, RunsThatPartAtADecisionAgreeOnEveryLookAheadAndShownPoseBeforeIt) {
    for (const bool honest : {true, false}) {
        const WorldStreamer::LookAheadFn fn = honest ? WorldStreamer::LookAheadFn{} : WorldStreamer::LookAheadFn{dishonest};
        const RecordingReadResult a = record(3.0f, fn, "honesty-a.ksrec"), b = record(3.5f, fn, "honesty-b.ksrec");
        const uint32_t t = first_difference(a, b);
        ASSERT_LT(t, kTicks - 60) << "the runs part within the recording";
        ASSERT_GT(t, 60u);
        const AheadCheck k = compare_look_ahead(a, b, t);
        const ShownCheck v = shown_before(a, b, t);
        std::printf("%s look-ahead: the runs part at tick %u; %zu entries before it (%zu within the horizon), %zu differ; "
                    "%zu render frames before its snapshot arrives, %zu of %zu strategies show something else there\n",
                    honest ? "honest" : "dishonest (broken variant)", t, k.compared, k.near_t, k.differing, v.frames, v.differing,
                    v.streams);
        EXPECT_GT(k.near_t, 4u) << "entries within the horizon of the decision were compared";
        EXPECT_GT(v.frames, 60u);
        EXPECT_EQ(v.streams, 8u);
        if (honest) {
            EXPECT_EQ(k.differing, 0u) << "a look-ahead before T knows nothing of T";
            EXPECT_EQ(v.differing, 0u) << "nothing shown before T's snapshot arrives knows of T";
        } else {
            EXPECT_GT(k.differing, 0u) << "the dishonest look-ahead is caught in the recording";
            EXPECT_GT(v.differing, 0u) << "and on the screen";
        }
    }
}
