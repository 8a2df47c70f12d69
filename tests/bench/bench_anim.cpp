// kinesync-bench: the per-character animation chain, with and without velocities.
// Chain: two sample_cubic + blend (moving weight) + fk. Skeletons: the 31-joint CMU skeleton
// (cmu_02_01_walk and cmu_35_24_run_jog when ../shared/mocap is present, otherwise a synthetic
// 31-joint clip) and a 66-joint synthetic skeleton. Run with --benchmark_format=json for JSON.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "common/anim/ops_blend.h"
#include "common/anim/ops_fk.h"
#include "common/anim/ops_sample.h"
#include "common/io/bvh.h"
#include "tests/support/synthetic.h"

using namespace ks;

namespace {

struct ClipPair {
    Clip a, b;
};

const ClipPair& clips_for(int joints) {
    static ClipPair cmu, synth66;
    if (joints == 31) {
        if (cmu.a.frames == 0) {
            const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
            if (std::filesystem::exists(dir + "/cmu_02_01_walk.bvh")) {
                cmu.a = load_bvh(dir + "/cmu_02_01_walk.bvh").clip;
                cmu.b = load_bvh(dir + "/cmu_35_24_run_jog.bvh").clip;
            } else {
                cmu.a = test::synthetic_clip(31, 343, 120.0f, 1);
                cmu.b = cmu.a;
                cmu.b.name = "synthetic-b";
            }
        }
        return cmu;
    }
    if (synth66.a.frames == 0) {
        synth66.a = test::synthetic_clip(66, 240, 60.0f, 2);
        synth66.b = test::synthetic_clip(66, 240, 60.0f, 3);
        synth66.b.skeleton = synth66.a.skeleton;
    }
    return synth66;
}

template <bool kVelocities>
void BM_SampleBlendFk(benchmark::State& state) {
    const int joints = int(state.range(0));
    const ClipPair& c = clips_for(joints);
    Pose a(joints), b(joints), blended(joints), global(joints);
    double t = 0.0;
    const double step = 1.0 / 60.0;
    for (auto _ : state) {
        const double ta = std::fmod(t, double(c.a.duration())), tb = std::fmod(t * 1.3, double(c.b.duration()));
        const float alpha = 0.5f + 0.4f * float(std::sin(t));
        if constexpr (kVelocities) {
            op_sample_cubic(a, c.a, ta);
            op_sample_cubic(b, c.b, tb);
            op_blend(blended, a, b, alpha, 0.4f * float(std::cos(t)));
            op_fk(global, blended, c.a.skeleton.parents);
        } else {
            op_sample_cubic_values(a, c.a, ta);
            op_sample_cubic_values(b, c.b, tb);
            op_blend_values(blended, a, b, alpha);
            op_fk_static(global, blended, c.a.skeleton.parents);
        }
        benchmark::DoNotOptimize(global.pos.data());
        benchmark::ClobberMemory();
        t += step;
    }
    state.counters["joints"] = double(joints);
    // Seconds per joint (shown as e.g. "25n" = 25 ns per joint).
    state.counters["per_joint"] = benchmark::Counter(double(joints), benchmark::Counter::kIsIterationInvariantRate |
                                                                         benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_SampleBlendFk<true>)->Name("chain_with_velocities")->Arg(31)->Arg(66);
BENCHMARK(BM_SampleBlendFk<false>)->Name("chain_without_velocities")->Arg(31)->Arg(66);


