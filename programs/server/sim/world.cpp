#include "programs/server/sim/world.h"

#include <cmath>

namespace ks {

World::World(const ClipLibrary& lib, const WorldConfig& cfg) : lib_(lib), cfg_(cfg) {
    const int side = std::max(1, int(std::ceil(std::sqrt(double(cfg.characters)))));
    for (int i = 0; i < cfg.characters; ++i) {
        const int skeleton = i % int(lib.skeletons.size());
        const float m = lib.metres_per_unit[size_t(skeleton)];
        const vec3 start = vec3{float(i % side), 0.0f, float(i / side)} * (cfg.spacing_m / m);
        // Each character its own stream of random choices, derived from the seed.
        const uint64_t seed = cfg.seed * 0x9E3779B97F4A7C15ull + uint64_t(i) * 0xBF58476D1CE4E5B9ull + 1;
        chars_.emplace_back(lib, skeleton, seed, start, float(i) * 0.7f, cfg.controller);
    }
}

void World::step(WorkerPool* pool) {
    ++tick_;
    const double dt = 1.0 / double(cfg_.tick_hz);
    if (pool) pool->parallel_for(chars_.size(), [&](size_t i) { chars_[i].step(dt, tick_); });
    else for (Character& c : chars_) c.step(dt, tick_);
}

}  // namespace ks
