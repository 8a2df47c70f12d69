#pragma once
// The simulated world: N characters over a clip library, stepped at a fixed tick. Everything is
// derived from the seed, so the same options give the same motion, tick for tick.

#include <cstdint>
#include <vector>

#include "common/src/util/worker_pool.h"
#include "programs/server/sim/character.h"

namespace ks {

struct WorldConfig {
    int characters = 8;
    float tick_hz = 60.0f;
    uint64_t seed = 1;
    float spacing_m = 3.0f;  // characters start on a grid this far apart
    ControllerConfig controller;
};

class World {
public:
    World(const ClipLibrary& lib, const WorldConfig& cfg);
    // Advances one tick (characters in parallel on the pool's threads when given one: each
    // character's controller touches only its own state).
    void step(WorkerPool* pool = nullptr);
    uint32_t tick() const { return tick_; }
    const WorldConfig& config() const { return cfg_; }
    const ClipLibrary& library() const { return lib_; }
    std::vector<Character>& characters() { return chars_; }
    const std::vector<Character>& characters() const { return chars_; }

private:
    const ClipLibrary& lib_;
    WorldConfig cfg_;
    std::vector<Character> chars_;
    uint32_t tick_ = 0;
};

}  // namespace ks
