// kinesync-replay's engine: determinism, and a short end-to-end replay of a recording made from a
// shared clip.
#include <gtest/gtest.h>

#include "client/replay/replay.h"
#include "common/metrics/report.h"
#include "server/sim/world_streamer.h"
#include "server/stream_server.h"
#include "tests/support/clips.h"

using namespace ks;
using namespace ks::test;

namespace {
RecordingReadResult record(const ClipLibrary& lib, double seconds, float teleport_every, int characters = 2) {
    WorldConfig wc;
    wc.characters = characters;
    wc.seed = 9;
    wc.controller.teleport_every_s = teleport_every;
    wc.controller.reset_every_s = teleport_every * 1.5f;
    World w(lib, wc);
    // One file per test: ctest runs the tests of this file in parallel processes.
    StreamServerConfig sc;
    sc.network = false;
    sc.io = IoMode::Pumped;
    sc.record_path = testing::TempDir() + "/replay-" + testing::UnitTest::GetInstance()->current_test_info()->name() + ".ksrec";
    sc.record_scenario = "test";
    {
        StreamServer server(sc);
        WorldStreamer streamer(w, server);
        for (int i = 0; i < int(seconds * 60); ++i) streamer.step();
        server.close();
    }
    const std::string path = sc.record_path;
    return read_recording(path);
}

std::string json_of(const RecordingReadResult& rec, const ReplayConfig& cfg, const ReplayResult& r) {
    ReportHeader h;
    h.recording = "test";
    h.profile = {cfg.profile.name, cfg.profile.latency_ms, cfg.profile.jitter_ms, cfg.profile.loss, 0, cfg.profile.duplicate};
    std::vector<StrategyReport> reports;
    for (const auto& s : r.strategies) reports.push_back({strategy_name(s.strategy), s.result, s.series});
    (void)rec;
    return fidelity_json(h, reports);
}
}  // namespace

TEST(Replay, SameInputsAndSeedGiveIdenticalJson) {
    const ClipLibrary lib = builtin_clip_library();
    const RecordingReadResult rec = record(lib, 6.0, 2.0f);
    ReplayConfig cfg;
    cfg.profile = net_profile("mobile");
    cfg.seed = 4;
    const std::string a = json_of(rec, cfg, run_replay(rec, cfg));
    const std::string b = json_of(rec, cfg, run_replay(rec, cfg));
    EXPECT_EQ(a, b);
    cfg.seed = 5;
    EXPECT_NE(a, json_of(rec, cfg, run_replay(rec, cfg))) << "another seed, another network";
}

TEST(Replay, SharedClipEndToEnd) {
    KS_REQUIRE_MOCAP();
    const ClipLibrary lib = load_clip_library({mocap_path("cmu_02_01_walk.bvh"), mocap_path("cmu_35_24_run_jog.bvh")});
    const RecordingReadResult rec = record(lib, 8.0, 3.0f);
    ReplayConfig cfg;
    cfg.profile = net_profile("broadband");
    const ReplayResult r = run_replay(rec, cfg);
    ASSERT_EQ(r.strategies.size(), all_strategies().size());
    EXPECT_FALSE(r.epoch_times_s.empty());
    EXPECT_GT(r.bytes_per_s, 1000.0);
    EXPECT_GT(r.bits_per_joint, 1.0);
    EXPECT_LT(r.clock_error_ms, 20.0) << "ping/pong clock estimate";
    for (const auto& s : r.strategies) {
        const FidelityResult& f = s.result;
        EXPECT_GT(f.frames, 500) << strategy_name(s.strategy);
        EXPECT_TRUE(std::isfinite(f.present_err_cm.mean)) << strategy_name(s.strategy);
        EXPECT_EQ(f.teleport_smear_frames, 0) << strategy_name(s.strategy);
        if (s.strategy == Strategy::Interp) {
            EXPECT_NEAR(f.display_delay_ms, 100.0, 1e-6);
            EXPECT_LT(f.shape_err_cm.p95, 5.0) << "interp shows the motion itself faithfully, only late";
        }
    }
    // Resets are epoch changes like teleports (8 s: teleports at about 3 and 6 s, resets at 4.5 s,
    // per character), and each has a blackout of about the one-way delay plus the wait for the next
    // snapshot (50 ms +- 10 ms, snapshots every 33 ms).
    {
        int resets = 0, teleports = 0;
        for (const RecordedFrame& f : rec.frames)
            for (const RecordedEvent& e : f.events) (e.kind == 1 ? resets : teleports)++;
        ASSERT_GT(resets, 0);
        ASSERT_GT(teleports, 0);
        const FidelityResult& f = r.strategies.front().result;
        EXPECT_EQ(f.epoch_changes, resets + teleports);
        EXPECT_GT(f.blackout_frames, 0);
        EXPECT_GT(f.blackout_ms_mean, 30.0);
        EXPECT_LT(f.blackout_ms_max, 200.0);
        for (const auto& s : r.strategies) EXPECT_EQ(s.result.blackout_frames, f.blackout_frames) << "the network's share";
    }
    // Extrapolation is closer to the present than buffered interpolation.
    const auto by = [&](Strategy st) {
        for (const auto& s : r.strategies)
            if (s.strategy == st) return s.result;
        return FidelityResult{};
    };
    EXPECT_LT(by(Strategy::Extrap).present_err_cm.p95, by(Strategy::Interp).present_err_cm.p95);
    EXPECT_LT(by(Strategy::DeadBlend).accel_rms_ratio, by(Strategy::Extrap).accel_rms_ratio) << "dead blending is smoother";
    // The default is not beaten on both accuracy and smoothness by any other strategy.
    const FidelityResult def = by(Strategy::DeadBlendSod);
    for (const auto& s : r.strategies) {
        if (s.strategy == Strategy::DeadBlendSod) continue;
        EXPECT_FALSE(s.result.present_err_cm.mean < def.present_err_cm.mean && s.result.accel_rms_ratio < def.accel_rms_ratio)
            << strategy_name(s.strategy) << " dominates the default";
    }
    EXPECT_LT(def.pops, by(Strategy::Extrap).pops);
    EXPECT_LT(def.pops, by(Strategy::DeadBlend).pops);
}

TEST(Replay, CrowdModeKeepsTheNearestAsFaithfulAsAlone) {
    // 49 characters on a 7 x 7 grid 3 m apart, more than a 256 kbit/s budget carries every
    // snapshot; the client watches from a corner. The 8 nearest must stay within 25 % of their
    // error when streamed alone; the rest are refreshed less often and are worse.
    const ClipLibrary lib = builtin_clip_library();
    const RecordingReadResult rec = record(lib, 12.0, 0.0f, 49);
    ReplayConfig cfg;
    cfg.profile = net_profile("broadband");
    cfg.strategies = {Strategy::DeadBlendSod};
    cfg.viewpoint_m = vec3{0, 0, 0};
    const ReplayResult crowd = run_replay(rec, cfg);
    cfg.only_near = true;
    const ReplayResult alone = run_replay(rec, cfg);
    ASSERT_TRUE(crowd.strategies[0].crowd && alone.strategies[0].crowd);
    const CrowdResult& c = *crowd.strategies[0].crowd;
    const CrowdResult& a = *alone.strategies[0].crowd;
    EXPECT_EQ(c.near.size(), 8u);
    EXPECT_EQ(c.near, a.near);
    EXPECT_GT(c.near_result.frames, 1000);
    EXPECT_LE(c.near_result.present_err_cm.mean, 1.25 * a.near_result.present_err_cm.mean)
        << "crowd " << c.near_result.present_err_cm.mean << " cm, alone " << a.near_result.present_err_cm.mean << " cm";
    EXPECT_GT(c.rest_result.present_err_cm.mean, c.near_result.present_err_cm.mean);
    EXPECT_GT(crowd.bytes_per_s, alone.bytes_per_s) << "the budget carries the others too";
    // On a budget far short of the crowd (128 kbit/s), the level of detail (the others' hierarchy
    // top only) refreshes them more often, and they are nearer the truth than with every joint.
    cfg.only_near = false;
    cfg.bandwidth_bps = 128000.0f;
    const ReplayResult lod = run_replay(rec, cfg);
    cfg.far_hold_depth = -1;
    const ReplayResult every_joint = run_replay(rec, cfg);
    EXPECT_LT(lod.strategies[0].crowd->rest_result.present_err_cm.mean, every_joint.strategies[0].crowd->rest_result.present_err_cm.mean);
}
