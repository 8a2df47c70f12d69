// kinesync-bench bvh_load/<clip>: loading a BVH file (parse, channels to local transforms), the
// largest shared clip (cmu_94_01_indian_dance_maxskel, 2.6 MB, 3,602 frames) and the walk.
// Counters: frames_per_s. Skipped without ../shared/mocap (KS_MOCAP_DIR).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <kinesync/offline/bvh.h>

using namespace ks;

namespace {

void BM_BvhLoad(benchmark::State& state, const std::string& file) {
    const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
    const std::string path = dir + "/" + file;
    if (!std::filesystem::exists(path)) {
        state.SkipWithError("shared mocap clips not found (KS_MOCAP_DIR)");
        return;
    }
    int frames = 0;
    for (auto _ : state) {
        const BvhFile b = load_bvh(path);
        frames = b.clip.frames;
        benchmark::DoNotOptimize(b.clip.frames);
    }
    state.counters["frames_per_s"] = benchmark::Counter(double(frames) * double(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_BvhLoad, indian_dance_maxskel, std::string("cmu_94_01_indian_dance_maxskel.bvh"))->Name("bvh_load/indian_dance_maxskel")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BvhLoad, walk, std::string("cmu_02_01_walk.bvh"))->Name("bvh_load/walk")->Unit(benchmark::kMillisecond);
