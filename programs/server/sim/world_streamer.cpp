#include "programs/server/sim/world_streamer.h"

#include <stdexcept>
#include <string>

namespace ks {

WorldStreamer::WorldStreamer(World& world, StreamServer& server, int workers) : world_(world), server_(server), pool_(workers) {
    const ClipLibrary& lib = world.library();
    for (size_t s = 0; s < lib.skeletons.size(); ++s)
        if (server.add_skeleton(lib.skeleton_names[s], lib.skeletons[s], lib.metres_per_unit[s]) != s)
            throw std::logic_error("WorldStreamer needs a server with no skeletons of its own");
    for (size_t c = 0; c < world.characters().size(); ++c) {
        const Character& ch = world.characters()[c];
        if (server.add_character(uint16_t(ch.skeleton()), "character " + std::to_string(c)) != c)
            throw std::logic_error("WorldStreamer needs a server with no characters of its own");
        server.set_pose(uint16_t(c), ch.pose());
    }
}

uint32_t WorldStreamer::step() {
    world_.step(&pool_);
    for (size_t c = 0; c < world_.characters().size(); ++c) {
        const Character& ch = world_.characters()[c];
        const uint16_t id = uint16_t(c);
        for (const CharacterEvent& e : ch.events()) {
            if (e.kind == CharacterEvent::Kind::Teleport) server_.teleport(id);
            else server_.reset(id);
        }
        server_.set_pose(id, ch.pose());
    }
    const uint32_t tick = server_.end_tick();
    if (tick != world_.tick()) throw std::logic_error("WorldStreamer: the server's tick is not the world's");
    return tick;
}

}  // namespace ks
