// kinesync-replay's engine: determinism, and a short end-to-end replay of a recording made from a
// shared clip.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <type_traits>

#include "programs/testbench/replay.h"
#include "programs/testbench/sweep.h"
#include "programs/testbench/metrics/report.h"
#include "programs/server/sim/world_streamer.h"
#include <kinesync/server/stream_server.h>
#include "tests/support/clips.h"
#include "tests/support/scratch.h"

using namespace ks;
using namespace ks::test;

namespace {
// Records `seconds` of a world playing `lib` to a file of its own; returns its path.
std::string record_file(const ClipLibrary& lib, double seconds, float teleport_every, int characters = 2) {
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
    sc.record_path = ks::test::scratch_path("replay-") + testing::UnitTest::GetInstance()->current_test_info()->name() + ".ksrec";
    sc.record_scenario = "test";
    {
        StreamServer server(sc);
        WorldStreamer streamer(w, server);
        for (int i = 0; i < int(seconds * 60); ++i) streamer.step();
        server.close();
    }
    return sc.record_path;
}

RecordingReadResult record(const ClipLibrary& lib, double seconds, float teleport_every, int characters = 2) {
    return read_recording(record_file(lib, seconds, teleport_every, characters));
}

template <class T>
bool same_bits(const T& a, const T& b) {
    static_assert(std::is_trivially_copyable_v<T>);
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>  // T: doubles or pairs of them
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Every figure of two replays, to the bit (NaN included), and their printed report.
void expect_identical(const ReplayResult& a, const ReplayResult& b, const ReplayConfig& cfg) {
    // FidelityResult and its Stat3 are 8-byte fields only (no padding): compared as bytes.
    static_assert(sizeof(FidelityResult) % 8 == 0 && sizeof(Stat3) == 5 * 8);
    ASSERT_EQ(a.strategies.size(), b.strategies.size());
    for (size_t k = 0; k < a.strategies.size(); ++k) {
        const ReplayStrategyResult& x = a.strategies[k];
        const ReplayStrategyResult& y = b.strategies[k];
        SCOPED_TRACE(std::string(strategy_name(x.strategy)) + " " + variant_label(x.config));
        EXPECT_EQ(x.strategy, y.strategy);
        EXPECT_TRUE(same_bits(x.result, y.result));
        EXPECT_TRUE(same_bits(x.series, y.series));
        EXPECT_TRUE(same_bits(x.pop_times_s, y.pop_times_s));
        ASSERT_EQ(x.crowd.has_value(), y.crowd.has_value());
        if (x.crowd) {
            EXPECT_EQ(x.crowd->near, y.crowd->near);
            EXPECT_TRUE(same_bits(x.crowd->near_result, y.crowd->near_result));
            EXPECT_TRUE(same_bits(x.crowd->rest_result, y.crowd->rest_result));
        }
    }
    EXPECT_TRUE(same_bits(a.epoch_times_s, b.epoch_times_s));
    EXPECT_TRUE(same_bits(a.blackout_spans_s, b.blackout_spans_s));
    EXPECT_TRUE(same_bits(a.bytes_per_s, b.bytes_per_s));
    EXPECT_TRUE(same_bits(a.bits_per_joint, b.bits_per_joint));
    EXPECT_TRUE(same_bits(a.clock_error_ms, b.clock_error_ms));
    EXPECT_TRUE(same_bits(a.payload_bytes_per_character, b.payload_bytes_per_character));
    EXPECT_TRUE(same_bits(a.envelope_bytes_per_datagram, b.envelope_bytes_per_datagram));
    EXPECT_EQ(a.snapshot_datagrams, b.snapshot_datagrams);
    EXPECT_EQ(a.datagrams_lost, b.datagrams_lost);
    ReportHeader h;
    h.recording = "test";
    h.profile = {cfg.profile.name, cfg.profile.latency_ms, cfg.profile.jitter_ms, cfg.profile.loss, 0, cfg.profile.duplicate};
    auto reports = [](const ReplayResult& r) {
        std::vector<StrategyReport> out;
        for (const auto& s : r.strategies) out.push_back({strategy_name(s.strategy), s.result, s.series});
        return out;
    };
    EXPECT_EQ(fidelity_table(h, reports(a)), fidelity_table(h, reports(b)));
    EXPECT_EQ(fidelity_json(h, reports(a)), fidelity_json(h, reports(b)));
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

// One three-joint runner, its root 1 m up.
RecordingHeader runner_header() {
    Skeleton sk;
    sk.names = {"root", "a", "b"};
    sk.parents = {-1, 0, 1};
    sk.offsets = {{0, 1, 0}, {0, 0.4f, 0}, {0, 0.4f, 0}};
    RecordingHeader h;
    h.skeletons = {sk};
    h.skeleton_names = {"runner"};
    h.metres_per_unit = {1.0f};
    h.characters = {{0, 0, "runner"}};
    return h;
}

// One character running at 4 m/s along +x, teleported 10 m further along its way at tick 168,
// 0.2 s before the recording ends at tick 180 (3 s): a server stopped (SIGTERM) just after a
// teleport, the teleport's news still on its way to a client 150 ms away when the recording ends.
std::string running_into_a_teleport_at_the_end() {
    const RecordingHeader h = runner_header();
    const Skeleton& sk = h.skeletons[0];
    const std::string path =
        ks::test::scratch_path("replay-") + testing::UnitTest::GetInstance()->current_test_info()->name() + ".ksrec";
    RecordingWriter w(path, h);
    const uint32_t teleport = 168, last = 180;
    for (uint32_t tick = 1; tick <= last; ++tick) {
        RecordedFrame f;
        f.tick = tick;
        RecordedCharacter c;
        c.epoch = tick >= teleport ? 1 : 0;
        c.pose = Pose(3);
        for (size_t j = 0; j < 3; ++j) c.pose.pos[j] = sk.offsets[j];
        c.pose.pos[0] = {4.0f * float(tick) / 60.0f + (tick >= teleport ? 10.0f : 0.0f), 1.0f, 0.0f};
        c.pose.vel[0] = {4.0f, 0.0f, 0.0f};
        f.characters.push_back(c);
        if (tick == teleport) f.events.push_back({0, 1, 0, tick});
        w.write(f);
    }
    w.close();
    return path;
}

// The same runner with the server's look-ahead (the pose 0.25 s ahead, on every even tick), this
// time teleported 10 m back along its way at tick 120 (2 s of 4): after the teleport it runs back
// towards where it came from, so a pose of its future lies on the way between the two places.
std::string running_back_after_a_teleport_with_look_ahead() {
    const RecordingHeader h = runner_header();
    const Skeleton& sk = h.skeletons[0];
    const std::string path = ks::test::scratch_path("replay-ahead-teleport.ksrec");
    RecordingWriter w(path, h);
    const uint32_t teleport = 120, last = 240;
    auto pose_at = [&](double t, bool after) {  // after: the motion of the new epoch
        Pose p(3);
        for (size_t j = 0; j < 3; ++j) p.pos[j] = sk.offsets[j];
        p.pos[0] = {4.0f * float(t) - (after ? 10.0f : 0.0f), 1.0f, 0.0f};
        p.vel[0] = {4.0f, 0.0f, 0.0f};
        return p;
    };
    for (uint32_t tick = 1; tick <= last; ++tick) {
        RecordedFrame f;
        f.tick = tick;
        RecordedCharacter c;
        c.epoch = tick >= teleport ? 1 : 0;
        c.pose = pose_at(tick / 60.0, tick >= teleport);
        if (tick % 2 == 0) {
            c.ahead_s = 0.25f;
            c.ahead = pose_at(tick / 60.0 + 0.25, tick >= teleport);  // honest: the old motion carried on before the teleport
        }
        f.characters.push_back(c);
        if (tick == teleport) f.events.push_back({0, 1, 0, tick});
        w.write(f);
    }
    w.close();
    return path;
}

}  // namespace

TEST(Replay, ANewEpochsFirstLookAheadIsShownAtThePresentNotAtItsTime) {
    // hermite+ahead shows a new epoch at once. Its first entry is the pose 0.25 s ahead (1 m on,
    // back towards the old place): held, it would be shown on the way between the two places for
    // a quarter of a second (smear); carried back to the present along its velocity, it is where
    // the runner is.
    const RecordingReadResult rec = read_recording(running_back_after_a_teleport_with_look_ahead());
    ReplayConfig cfg;
    cfg.profile = net_profile("lan");
    cfg.strategies = ahead_strategies();
    const ReplayResult r = run_replay(rec, cfg);
    ASSERT_EQ(r.strategies.size(), ahead_strategies().size());
    for (const auto& s : r.strategies) {
        EXPECT_EQ(s.result.teleport_smear_frames, 0) << strategy_name(s.strategy);
        EXPECT_LT(s.result.present_err_cm.p95, 10.0) << strategy_name(s.strategy);
    }
}

TEST(Replay, ARecordingEndingInATeleportsBlackoutHasNoSmear) {
    // Extrapolating strategies carry the running on while the teleport's news is on its way: on
    // the way to the destination, but no display can know it yet (the network's share).
    const RecordingReadResult rec = read_recording(running_into_a_teleport_at_the_end());
    ReplayConfig cfg;
    cfg.profile.latency_ms = 150;
    const ReplayResult r = run_replay(rec, cfg);
    ASSERT_EQ(r.strategies.size(), all_strategies().size());
    for (const auto& s : r.strategies) {
        EXPECT_GE(s.result.blackout_frames, 8) << strategy_name(s.strategy);
        EXPECT_EQ(s.result.teleport_smear_frames, 0) << strategy_name(s.strategy);
    }
}

TEST(Replay, TheWorstFrameNamesTheTeleportAnInterpolatingDisplayStillShowedBefore) {
    const RecordingReadResult rec = read_recording(running_into_a_teleport_at_the_end());
    ReplayConfig cfg;
    cfg.profile = net_profile("lan");
    cfg.strategies = {Strategy::Interp, Strategy::Extrap};
    const ReplayResult r = run_replay(rec, cfg);
    ASSERT_EQ(r.strategies.size(), 2u);
    const FidelityResult& interp = r.strategies[0].result;
    EXPECT_GT(interp.present_err_cm.max, 950.0) << "the place before the 10 m teleport, shown 100 ms late";
    EXPECT_NEAR(interp.worst.change_s, 168 / 60.0, 1e-9);
    EXPECT_NEAR(interp.worst.jump_m, 10.0, 0.1);
    EXPECT_EQ(interp.worst.old_place, 1);
    EXPECT_EQ(interp.worst.character, 0);
    EXPECT_GE(interp.worst.time_s, interp.worst.news_s);
    EXPECT_LT(interp.worst.time_s, 168 / 60.0 + 0.1 + 1e-9);
    const FidelityResult& extrap = r.strategies[1].result;
    EXPECT_LT(extrap.present_err_cm.max, 100.0);
    EXPECT_EQ(extrap.worst.old_place, 0);
}

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

TEST(Replay, StreamingGivesTheWholeFileFigures) {
    // Teleports and resets every few seconds; 12 s in 12 chunks. The replay streamed from the
    // file (a window of ticks) against the same replay of the recording held whole, under several
    // configurations: every figure must be the same to the bit.
    const ClipLibrary lib = builtin_clip_library();
    const std::string path = record_file(lib, 12.0, 2.0f, 3);
    const RecordingReadResult whole = read_recording(path);
    const RecordingScan scan = scan_recording(path);
    ASSERT_EQ(scan.frames, whole.frames.size());
    EXPECT_EQ(scan.chunks, whole.chunks);
    EXPECT_GE(scan.chunks, 12u);
    EXPECT_EQ(scan.first_tick, whole.frames.front().tick);
    EXPECT_EQ(scan.last_tick, whole.frames.back().tick);
    EXPECT_TRUE(scan.ticks_increase);
    EXPECT_FALSE(scan.truncated);
    EXPECT_GT(scan.epoch_changes.size(), 6u);

    ReplayConfig cfg;
    auto check = [&](const char* what, const RecordingReadResult& w, const RecordingScan& sc) {
        SCOPED_TRACE(what);
        ReplayStreamStats st;
        const ReplayResult streamed = run_replay(sc, cfg, &st);
        expect_identical(run_replay(w, cfg), streamed, cfg);
        if (sc.ticks_increase) {
            EXPECT_EQ(st.frames_read, sc.frames);
        }
    };
    cfg.profile = net_profile("mobile");
    cfg.seed = 4;
    check("mobile, every strategy", whole, scan);
    cfg.profile = net_profile("hostile");
    cfg.reconstruct.interp_delay_s = 0.45;  // the truth 27 ticks back
    check("hostile, interp 450 ms", whole, scan);
    cfg.reconstruct = {};
    cfg.profile = net_profile("broadband");
    cfg.variants = sweep_variants(cfg.reconstruct, {Strategy::Interp, Strategy::DeadBlend});
    check("sweep", whole, scan);
    cfg.variants.clear();
    cfg.viewpoint_m = vec3{1, 0, 2};
    cfg.crowd_near = 1;
    check("crowd", whole, scan);
    cfg.only_near = true;
    check("crowd, nearest only", whole, scan);
    cfg.viewpoint_m.reset();
    cfg.only_near = false;

    // A crash's recording, cut inside its last chunk: the same complete chunks, the same warning.
    const std::string cut = path + ".cut.ksrec";
    std::filesystem::copy_file(path, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 1000);
    const RecordingReadResult whole_cut = read_recording(cut);
    const RecordingScan scan_cut = scan_recording(cut);
    ASSERT_TRUE(whole_cut.truncated);
    EXPECT_TRUE(scan_cut.truncated);
    EXPECT_EQ(scan_cut.warning, whole_cut.warning);
    EXPECT_EQ(scan_cut.frames, whole_cut.frames.size());
    check("truncated", whole_cut, scan_cut);

    // Ticks out of order (no server writes that): replayed whole, as before.
    const std::string odd = path + ".odd.ksrec";
    {
        RecordingWriter w(odd, whole.header);
        std::vector<RecordedFrame> frames = whole.frames;
        std::swap(frames[100], frames[101]);
        for (const RecordedFrame& f : frames) w.write(f);
        w.close();
    }
    const RecordingScan scan_odd = scan_recording(odd);
    EXPECT_FALSE(scan_odd.ticks_increase);
    check("ticks out of order", read_recording(odd), scan_odd);
}

TEST(Replay, StreamingHoldsAWindowNotTheRecording) {
    // 40 s, 40 chunks of 60 ticks: the streamed replay reads every frame once, holding the ticks
    // from the render time less the display delay (interp's 100 ms: 6 ticks) to the newest asked
    // for, and what is left of the chunk being read.
    const ClipLibrary lib = builtin_clip_library();
    const RecordingScan scan = scan_recording(record_file(lib, 40.0, 5.0f));
    ASSERT_EQ(scan.frames, 2400u);
    ASSERT_GE(scan.chunks, 40u);
    ReplayConfig cfg;
    cfg.profile = net_profile("broadband");
    ReplayStreamStats st;
    ReplayResult r = run_replay(scan, cfg, &st);
    ASSERT_FALSE(r.strategies.empty());
    EXPECT_GT(r.strategies.front().result.frames, 4000);
    EXPECT_EQ(st.frames_read, scan.frames);
    EXPECT_GE(st.most_window_frames, 7u);
    EXPECT_LE(st.most_window_frames, 12u);
    EXPECT_LE(st.most_frames_held, 60u + 12u);
    // A longer display delay (1 s: 60 ticks) keeps a longer window, still not the recording.
    cfg.reconstruct.interp_delay_s = 1.0;
    r = run_replay(scan, cfg, &st);
    EXPECT_EQ(st.frames_read, scan.frames);
    EXPECT_GE(st.most_window_frames, 61u);
    EXPECT_LE(st.most_window_frames, 66u);
    EXPECT_LE(st.most_frames_held, 60u + 66u);
}
