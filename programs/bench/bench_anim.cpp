// kinesync-bench: the per-character animation chain and its ops, with and without velocities.
// Chain: two samples + blend (moving weight) + FK, per character. Skeletons: 31 joints (CMU
// cmu_02_01_walk + cmu_35_24_run_jog when ../shared/mocap is present, else synthetic), 66 joints
// (synthetic, animated non-uniform scales), 100 joints (the iClone rig cmu_06_10, else synthetic).
// Names: chain/<sampler>/<velocities|values>/<joints>, with sampler = cubic_cached (the SampleCache
// path a game uses), cubic (no cache, the reference), linear_cached. Counters: per_joint (s per
// joint). Run with --benchmark_format=json for JSON, --benchmark_repetitions=11 for medians.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <map>

#include <kinesync/common/anim/ops_additive.h>
#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/offline/bvh.h>
#include "tests/support/synthetic.h"

using namespace ks;

namespace {

struct ClipPair {
    Clip a, b;
    SampleCache ca, cb;
};

std::string mocap(const std::string& file) {
    const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
    return std::filesystem::exists(dir + "/" + file) ? dir + "/" + file : std::string();
}

const ClipPair& clips_for(int joints) {
    static std::map<int, ClipPair> all;
    ClipPair& c = all[joints];
    if (c.a.frames) return c;
    const std::string walk = mocap("cmu_02_01_walk.bvh"), run = mocap("cmu_35_24_run_jog.bvh"),
                      iclone = mocap("cmu_06_10_dribble_left_turns_iclone.bvh");
    if (joints == 31 && !walk.empty() && !run.empty()) {
        c.a = load_bvh(walk).clip;
        c.b = load_bvh(run).clip;
    } else if (joints == 100 && !iclone.empty()) {
        c.a = load_bvh(iclone).clip;
        c.b = c.a;  // the same rig at another time (the second sample plays 1.3x faster)
    } else {
        c.a = test::synthetic_clip(joints, 240, 60.0f, 2);
        c.b = test::synthetic_clip(joints, 240, 60.0f, 3);
        c.b.skeleton = c.a.skeleton;
    }
    c.ca = build_sample_cache(c.a);
    c.cb = build_sample_cache(c.b);
    return c;
}

enum class Sampler { CubicCached, Cubic, LinearCached };

template <Sampler kSampler, bool kVelocities>
void sample(Pose& out, const Clip& clip, const SampleCache& cache, double t) {
    if constexpr (kSampler == Sampler::CubicCached) {
        if constexpr (kVelocities) op_sample_cubic(out, clip, cache, t);
        else op_sample_cubic_values(out, clip, cache, t);
    } else if constexpr (kSampler == Sampler::Cubic) {
        if constexpr (kVelocities) op_sample_cubic(out, clip, t);
        else op_sample_cubic_values(out, clip, t);
    } else {
        if constexpr (kVelocities) op_sample_linear(out, clip, cache, t);
        else op_sample_linear_values(out, clip, cache, t);
    }
}

void per_joint(benchmark::State& state, int joints) {
    state.counters["joints"] = double(joints);
    // Seconds per joint (shown as e.g. "25n" = 25 ns per joint).
    state.counters["per_joint"] =
        benchmark::Counter(double(joints), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <Sampler kSampler, bool kVelocities>
void BM_Chain(benchmark::State& state) {
    const int joints = int(state.range(0));
    const ClipPair& c = clips_for(joints);
    Pose a(joints), b(joints), blended(joints), global(joints);
    double t = 0.0;
    for (auto _ : state) {
        const double ta = std::fmod(t, double(c.a.duration())), tb = std::fmod(t * 1.3, double(c.b.duration()));
        const float alpha = 0.5f + 0.4f * float(std::sin(t));
        sample<kSampler, kVelocities>(a, c.a, c.ca, ta);
        sample<kSampler, kVelocities>(b, c.b, c.cb, tb);
        if constexpr (kVelocities) {
            op_blend(blended, a, b, alpha, 0.4f * float(std::cos(t)));
            op_fk(global, blended, c.a.skeleton.parents);
        } else {
            op_blend_values(blended, a, b, alpha);
            op_fk_static(global, blended, c.a.skeleton.parents);
        }
        benchmark::DoNotOptimize(global.pos.data());
        benchmark::ClobberMemory();
        t += 1.0 / 60.0;
    }
    per_joint(state, joints);
}

// One op alone: 0 sample (cubic cached), 1 blend, 2 FK, 3 additive, 4 inertialize, 5 dead
// blending (extrapolation + blend_via).
template <int kOp, bool kVelocities>
void BM_Op(benchmark::State& state) {
    const int joints = int(state.range(0));
    const ClipPair& c = clips_for(joints);
    Pose a(joints), b(joints), blended(joints), global(joints);
    op_sample_cubic(a, c.a, c.ca, 0.37);
    op_sample_cubic(b, c.b, c.cb, 0.81);
    op_blend(blended, a, b, 0.4f, 0.1f);
    Pose offset(joints), scratch(joints);
    op_inertialize_transition(offset, a, b);
    std::vector<quat> dirs(static_cast<size_t>(joints));
    double t = 0.0;
    for (auto _ : state) {
        if constexpr (kOp == 0) sample<Sampler::CubicCached, kVelocities>(a, c.a, c.ca, std::fmod(t, double(c.a.duration())));
        if constexpr (kOp == 1) {
            if constexpr (kVelocities) op_blend(blended, a, b, 0.5f + 0.4f * float(std::sin(t)), 0.1f);
            else op_blend_values(blended, a, b, 0.5f + 0.4f * float(std::sin(t)));
        }
        if constexpr (kOp == 2) {
            if constexpr (kVelocities) op_fk(global, blended, c.a.skeleton.parents);
            else op_fk_static(global, blended, c.a.skeleton.parents);
        }
        if constexpr (kOp == 3) {
            global = blended;
            if constexpr (kVelocities) op_additive(global, a, 0.5f + 0.4f * float(std::sin(t)), 0.1f);
            else op_additive_values(global, a, 0.5f + 0.4f * float(std::sin(t)));
        }
        if constexpr (kOp == 4) {
            const float bt = float(std::fmod(t, 0.3));
            if constexpr (kVelocities) op_inertialize(global, offset, b, bt, 0.3f);
            else op_inertialize_values(global, offset, b, bt, 0.3f);
        }
        if constexpr (kOp == 5) {
            const float bt = float(std::fmod(t, 0.3));
            if constexpr (kVelocities) op_dead_blending(global, scratch, dirs, a, b, 0.1f, bt, 0.3f);
            else op_dead_blending_values(global, scratch, dirs, a, b, 0.1f, bt, 0.3f);
        }
        benchmark::DoNotOptimize(a.pos.data());
        benchmark::DoNotOptimize(blended.pos.data());
        benchmark::DoNotOptimize(global.pos.data());
        benchmark::ClobberMemory();
        t += 1.0 / 60.0;
    }
    per_joint(state, joints);
}

// The velocities / values-only ratio of the cached cubic chain, both timed in the same run,
// interleaved in batches of 64 characters: counters velocities_ns, values_ns, ratio.
void BM_VelocityCost(benchmark::State& state) {
    const int joints = int(state.range(0));
    const ClipPair& c = clips_for(joints);
    Pose a(joints), b(joints), blended(joints), global(joints);
    double t = 0.0, with = 0.0, without = 0.0;
    auto chain = [&](bool velocities) {
        const double ta = std::fmod(t, double(c.a.duration())), tb = std::fmod(t * 1.3, double(c.b.duration()));
        const float alpha = 0.5f + 0.4f * float(std::sin(t));
        if (velocities) {
            op_sample_cubic(a, c.a, c.ca, ta);
            op_sample_cubic(b, c.b, c.cb, tb);
            op_blend(blended, a, b, alpha, 0.4f * float(std::cos(t)));
            op_fk(global, blended, c.a.skeleton.parents);
        } else {
            op_sample_cubic_values(a, c.a, c.ca, ta);
            op_sample_cubic_values(b, c.b, c.cb, tb);
            op_blend_values(blended, a, b, alpha);
            op_fk_static(global, blended, c.a.skeleton.parents);
        }
        benchmark::DoNotOptimize(global.pos.data());
        benchmark::ClobberMemory();
        t += 1.0 / 60.0;
    };
    for (auto _ : state) {
        for (bool velocities : {true, false}) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 64; ++i) chain(velocities);
            (velocities ? with : without) += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        }
    }
    const double n = double(state.iterations()) * 64.0;
    state.counters["velocities_ns"] = with / n;
    state.counters["values_ns"] = without / n;
    state.counters["ratio"] = with / without;
}

}  // namespace

BENCHMARK(BM_VelocityCost)->Name("velocity_cost/cubic_cached")->Arg(31)->Arg(66)->Arg(100);
#define KS_JOINTS ->Arg(31)->Arg(66)->Arg(100)
BENCHMARK(BM_Chain<Sampler::CubicCached, true>)->Name("chain/cubic_cached/velocities") KS_JOINTS;
BENCHMARK(BM_Chain<Sampler::CubicCached, false>)->Name("chain/cubic_cached/values") KS_JOINTS;
BENCHMARK(BM_Chain<Sampler::LinearCached, true>)->Name("chain/linear_cached/velocities") KS_JOINTS;
BENCHMARK(BM_Chain<Sampler::LinearCached, false>)->Name("chain/linear_cached/values") KS_JOINTS;
BENCHMARK(BM_Chain<Sampler::Cubic, true>)->Name("chain/cubic/velocities") KS_JOINTS;
BENCHMARK(BM_Chain<Sampler::Cubic, false>)->Name("chain/cubic/values") KS_JOINTS;
BENCHMARK(BM_Op<0, true>)->Name("op/sample_cubic_cached/velocities") KS_JOINTS;
BENCHMARK(BM_Op<0, false>)->Name("op/sample_cubic_cached/values") KS_JOINTS;
BENCHMARK(BM_Op<1, true>)->Name("op/blend/velocities") KS_JOINTS;
BENCHMARK(BM_Op<1, false>)->Name("op/blend/values") KS_JOINTS;
BENCHMARK(BM_Op<2, true>)->Name("op/fk/velocities") KS_JOINTS;
BENCHMARK(BM_Op<2, false>)->Name("op/fk/values") KS_JOINTS;
BENCHMARK(BM_Op<3, true>)->Name("op/additive/velocities") KS_JOINTS;
BENCHMARK(BM_Op<3, false>)->Name("op/additive/values") KS_JOINTS;
BENCHMARK(BM_Op<4, true>)->Name("op/inertialize/velocities") KS_JOINTS;
BENCHMARK(BM_Op<4, false>)->Name("op/inertialize/values") KS_JOINTS;
BENCHMARK(BM_Op<5, true>)->Name("op/dead_blending/velocities") KS_JOINTS;
BENCHMARK(BM_Op<5, false>)->Name("op/dead_blending/values") KS_JOINTS;
