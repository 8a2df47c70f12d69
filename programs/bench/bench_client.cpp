// kinesync-bench: client reconstruction cost per character per render frame, for each strategy
// (compare with BM_WorldTick's per-character animation cost on the server).
#include <benchmark/benchmark.h>

#include "client/src/reconstruct.h"
#include <kinesync/offline/builtin_motion.h>
#include <kinesync/common/anim/ops_sample.h>

using namespace ks;

namespace {

void BM_Reconstruct(benchmark::State& state, Strategy strategy) {
    const Clip clip = builtin_clip("run");
    ReconstructConfig cfg;
    cfg.strategy = strategy;
    CharacterReconstructor r(clip.skeleton, cfg);
    Pose p(clip.joints());
    double now = 0.0;
    int frame = 0;
    for (auto _ : state) {
        // A snapshot every other render frame (30 Hz), 80 ms late.
        if (frame % 2 == 0) {
            state.PauseTiming();
            op_sample_cubic(p, clip, now - 0.08, Wrap::Loop);
            r.add_snapshot(now - 0.08, p, 0);
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(r.render(now, 1.0 / 60.0).pos.data());
        now += 1.0 / 60.0;
        ++frame;
    }
    state.counters["joints"] = clip.joints();
}

}  // namespace

BENCHMARK_CAPTURE(BM_Reconstruct, snap, Strategy::Snap);
BENCHMARK_CAPTURE(BM_Reconstruct, interp, Strategy::Interp);
BENCHMARK_CAPTURE(BM_Reconstruct, hermite, Strategy::Hermite);
BENCHMARK_CAPTURE(BM_Reconstruct, extrap, Strategy::Extrap);
BENCHMARK_CAPTURE(BM_Reconstruct, deadblend, Strategy::DeadBlend);
BENCHMARK_CAPTURE(BM_Reconstruct, deadblend_sod, Strategy::DeadBlendSod);
