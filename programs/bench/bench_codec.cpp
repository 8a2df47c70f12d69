// kinesync-bench: snapshot codec. Encode and decode time per character (delta against a baseline
// 4 snapshots old), and the figures: bits per joint (benchmarks named ..._abs / ..._delta, counter
// bits_per_joint) and bytes per second per character at 20/30/60 Hz snapshots (100 ms round trip,
// 1 % loss, on a sealed session's wire: IPv4/UDP headers, the seal and the snapshot header
// included), on the shared walk and dance clips (built-in walk when ../shared/mocap is absent).
// BM_ClientFrame: what a client pays per character per render frame: decoding (a 30 Hz snapshot
// every other 60 Hz frame), the render of deadblend+sod or of deadblend+sod+ahead (the path a
// default client runs once look-ahead arrives) and the world pose (FK), as StreamClient::update
// does, for the walk (31 joints), the game rig (250) and the stress rig (1,000). The `_cold`
// variant writes 8 MB between frames (untimed), as a game's other work and a client sleeping
// between frames leave its caches (a live client's reconstruct_ns_per_character_median is
// close to it).
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include <kinesync/offline/looping.h>
#include <kinesync/offline/bvh.h>
#include "client/src/reconstruct.h"
#include "programs/bench/bench_smoke.h"
#include "tests/support/codec_sim.h"

using namespace ks;

namespace {

const Clip& bench_clip(const std::string& name) {
    static std::map<std::string, Clip> cache;
    auto it = cache.find(name);
    if (it != cache.end()) return it->second;
    const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
    const bool rig = name == "stress" || name == "game";
    const std::string file = dir + "/" + (name == "walk" || rig ? "cmu_02_01_walk.bvh" : "cmu_05_20_dance_leaps.bvh");
    Clip c;
    if (rig) {
        LoopOptions lo;
        lo.root = RootMode::Fix;
        c = make_loop(name == "game" ? make_game_rig(bench_clip("walk")) : make_stress_rig(bench_clip("walk")), lo);
    } else if (std::filesystem::exists(file)) {
        BvhOptions bo;
        bo.skip_frames = 1;
        LoopOptions lo;
        lo.root = RootMode::Fix;
        c = make_loop(load_bvh(file, bo).clip, lo);
    } else {
        c = builtin_clip(name == "walk" ? "walk" : "run");
    }
    return cache.emplace(name, std::move(c)).first->second;
}

struct States {
    SkeletonPrecision prec;
    std::vector<QCharacter> q;
};

const States& states_for(const Clip& c) {
    static std::map<const Clip*, States> cache;
    auto it = cache.find(&c);
    if (it != cache.end()) return it->second;
    States s;
    s.prec = plan_precision(c.skeleton, c.metres_per_unit);
    for (int i = 0; i < 300; ++i) s.q.push_back(quantize_character(test::sample_pose(c, i / 30.0 + 0.1), c.skeleton, s.prec, 0));
    return cache.emplace(&c, std::move(s)).first->second;
}

// Each state from the 9th on, coded per part against the states 4 and 8 before it (as the server
// sends it): per state, per part.
std::vector<std::vector<std::vector<uint8_t>>> coded_deltas(const States& s, const std::vector<JointRange>& parts) {
    std::vector<std::vector<std::vector<uint8_t>>> coded;
    for (size_t i = 8; i < s.q.size(); ++i) {
        CharacterBaseline b{&s.q[i - 4], 4.0 / 30.0, &s.q[i - 8], 4.0 / 30.0};
        coded.emplace_back();
        for (const JointRange& r : parts) encode_character(coded.back().emplace_back(), s.q[i], &b, s.prec, r);
    }
    return coded;
}

// Joints, and the time per joint (seconds_per_joint: linear in joints when it stays put).
void per_joint_counters(benchmark::State& state, int joints) {
    state.counters["joints"] = joints;
    state.counters["seconds_per_joint"] =
        benchmark::Counter(double(joints), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_EncodeDelta(benchmark::State& state, std::string clip) {
    const Clip& c = bench_clip(clip);
    const States& s = states_for(c);
    const std::vector<JointRange> parts = plan_parts(size_t(c.joints()));
    std::vector<uint8_t> out;
    size_t i = 8;
    for (auto _ : state) {
        CharacterBaseline b{&s.q[i - 4], 4.0 / 30.0, &s.q[i - 8], 4.0 / 30.0};
        out.clear();
        for (const JointRange& r : parts) encode_character(out, s.q[i], &b, s.prec, r);  // as the server sends it
        benchmark::DoNotOptimize(out.data());
        if (++i == s.q.size()) i = 8;
    }
    per_joint_counters(state, c.joints());
}

void BM_DecodeDelta(benchmark::State& state, std::string clip) {
    const Clip& c = bench_clip(clip);
    const States& s = states_for(c);
    const std::vector<JointRange> parts = plan_parts(size_t(c.joints()));
    const std::vector<std::vector<std::vector<uint8_t>>> coded = coded_deltas(s, parts);
    QCharacter out;
    size_t k = 0;
    for (auto _ : state) {
        const size_t i = k + 8;
        CharacterBaseline b{&s.q[i - 4], 4.0 / 30.0, &s.q[i - 8], 4.0 / 30.0};
        for (size_t p = 0; p < parts.size(); ++p) benchmark::DoNotOptimize(decode_character(coded[k][p], out, &b, s.prec, parts[p]));
        if (++k == coded.size()) k = 0;
    }
    per_joint_counters(state, c.joints());
}

// One render frame of one character on a client: every other frame a snapshot arrives (decoded,
// dequantized, handed to the reconstructor 80 ms late), and every frame the strategy renders:
// deadblend+sod (what a client shows before look-ahead arrives) or deadblend+sod+ahead (what it
// switches to once the server sends look-ahead, as the demo server does by default: each entry
// the pose 0.25 s ahead of the tick it was computed at).
void BM_ClientFrame(benchmark::State& state, std::string clip, Strategy strategy, bool cold = false) {
    std::vector<uint8_t> other(cold ? size_t(8) << 20 : 0);  // what the rest of a game frame touches
    const Clip& c = bench_clip(clip);
    const States& s = states_for(c);
    const std::vector<JointRange> parts = plan_parts(size_t(c.joints()));
    const std::vector<std::vector<std::vector<uint8_t>>> coded = coded_deltas(s, parts);
    ReconstructConfig cfg;
    cfg.strategy = strategy;
    const bool ahead = strategy == Strategy::DeadBlendSodAhead;
    CharacterReconstructor shown(c.skeleton, cfg, c.metres_per_unit);
    QCharacter q;
    Pose pose(c.joints()), global(c.joints());
    size_t k = 0;
    int64_t frame = 0;
    for (auto _ : state) {
        // Cold: the caches flushed between frames, the frame timed by hand (PauseTiming's own
        // cost is of the order of a frame's).
        if (cold)
            for (size_t i = 0; i < other.size(); i += 64) other[i] = uint8_t(other[i] + 1);
        const auto t0 = std::chrono::steady_clock::now();
        const double now = double(frame) / 60.0;
        if (frame++ % 2 == 0) {
            const size_t i = k + 8;
            CharacterBaseline b{&s.q[i - 4], 4.0 / 30.0, &s.q[i - 8], 4.0 / 30.0};
            for (size_t p = 0; p < parts.size(); ++p)
                if (!decode_character(coded[k][p], q, &b, s.prec, parts[p])) {
                    state.SkipWithError("a coded snapshot did not decode");
                    return;
                }
            dequantize_character(pose, q, c.skeleton, s.prec);
            if (ahead)
                shown.add_snapshot(now - 0.08 + 0.25, pose, 0, 0, now - 0.08);
            else
                shown.add_snapshot(now - 0.08, pose, 0);
            if (++k == coded.size()) k = 0;
        }
        op_fk(global, shown.render(now, 1.0 / 60.0), c.skeleton.parents);
        benchmark::DoNotOptimize(global.pos.data());
        if (cold) state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    per_joint_counters(state, c.joints());
}

// Figures from a 20 s simulated session; the timed loop quantizes one pose (the per-tick cost
// the server pays once per character).
void BM_Figures(benchmark::State& state, std::string clip, bool delta, float hz) {
    const Clip& c = bench_clip(clip);
    const test::SimResult r = test::simulate({&c}, 20.0, hz, test::LinkSim{0.01f, 0.01f, 0.0f, 6, 2, 9});
    const States& s = states_for(c);
    const Pose p = test::sample_pose(c, 0.5);
    for (auto _ : state) benchmark::DoNotOptimize(quantize_character(p, c.skeleton, s.prec, 0));
    state.counters["bits_per_joint"] = delta ? r.delta_bits_per_joint : r.full_bits_per_joint;
    state.counters["rot_ang_bits_per_joint"] = delta ? r.delta_rotang_bits_per_joint : 0.0;
    state.counters["bytes_per_s_per_character"] = r.bytes_per_s;
    state.counters["snapshot_hz"] = hz;
}

}  // namespace

BENCHMARK_CAPTURE(BM_EncodeDelta, walk, std::string("walk"));
BENCHMARK_CAPTURE(BM_EncodeDelta, dance, std::string("dance"));
BENCHMARK_CAPTURE(BM_DecodeDelta, walk, std::string("walk"));
BENCHMARK_CAPTURE(BM_DecodeDelta, dance, std::string("dance"));
BENCHMARK_CAPTURE(BM_EncodeDelta, stress_rig_1000, std::string("stress"));
BENCHMARK_CAPTURE(BM_DecodeDelta, stress_rig_1000, std::string("stress"));
BENCHMARK_CAPTURE(BM_ClientFrame, walk_31/deadblend_sod, std::string("walk"), Strategy::DeadBlendSod);
BENCHMARK_CAPTURE(BM_ClientFrame, game_rig_250/deadblend_sod, std::string("game"), Strategy::DeadBlendSod);
BENCHMARK_CAPTURE(BM_ClientFrame, stress_rig_1000/deadblend_sod, std::string("stress"), Strategy::DeadBlendSod);
BENCHMARK_CAPTURE(BM_ClientFrame, game_rig_250/deadblend_sod_ahead_cold, std::string("game"), Strategy::DeadBlendSodAhead, true)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_ClientFrame, walk_31/deadblend_sod_ahead, std::string("walk"), Strategy::DeadBlendSodAhead);
BENCHMARK_CAPTURE(BM_ClientFrame, game_rig_250/deadblend_sod_ahead, std::string("game"), Strategy::DeadBlendSodAhead);
BENCHMARK_CAPTURE(BM_ClientFrame, stress_rig_1000/deadblend_sod_ahead, std::string("stress"), Strategy::DeadBlendSodAhead);
BENCHMARK_CAPTURE(BM_Figures, codec_abs_walk_30hz, std::string("walk"), false, 30.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_abs_dance_30hz, std::string("dance"), false, 30.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_walk_20hz, std::string("walk"), true, 20.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_walk_30hz, std::string("walk"), true, 30.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_walk_60hz, std::string("walk"), true, 60.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_dance_20hz, std::string("dance"), true, 20.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_dance_30hz, std::string("dance"), true, 30.0f)->Iterations(bench_smoke() ? 1 : 1000);
BENCHMARK_CAPTURE(BM_Figures, codec_delta_dance_60hz, std::string("dance"), true, 60.0f)->Iterations(bench_smoke() ? 1 : 1000);
