#pragma once
// The demo's driver of a StreamServer: registers a simulated World's skeletons and characters
// (ids equal to their indexes in the world) and, per tick, steps the world and hands the server
// every character's pose and teleports/resets. kinesync-server is this plus a clock.

#include <cstdint>

#include "programs/server/sim/world.h"
#include <kinesync/server/stream_server.h>

namespace ks {

class WorldStreamer {
public:
    // Registers everything now (before the first tick, so a recording holds every character).
    // Characters step on `workers` extra threads (-1: one per other core).
    WorldStreamer(World& world, StreamServer& server, int workers = -1);
    // One tick: world.step(), poses and events to the server, server.end_tick(). Returns the tick.
    uint32_t step();

private:
    World& world_;
    StreamServer& server_;
    WorkerPool pool_;
};

}  // namespace ks
