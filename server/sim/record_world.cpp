#include "server/sim/record_world.h"

namespace ks {

RecordingHeader make_recording_header(const World& world, float snapshot_hz, const std::string& scenario) {
    RecordingHeader h;
    h.tick_hz = world.config().tick_hz;
    h.snapshot_hz = snapshot_hz;
    h.scenario = scenario;
    h.seed = world.config().seed;
    const ClipLibrary& lib = world.library();
    h.skeletons = lib.skeletons;
    h.skeleton_names = lib.skeleton_names;
    h.metres_per_unit = lib.metres_per_unit;
    for (size_t c = 0; c < world.characters().size(); ++c)
        h.characters.push_back({uint16_t(c), uint16_t(world.characters()[c].skeleton()), "character " + std::to_string(c)});
    return h;
}

RecordedFrame capture_frame(const World& world) {
    RecordedFrame f;
    f.tick = world.tick();
    for (size_t c = 0; c < world.characters().size(); ++c) {
        const Character& ch = world.characters()[c];
        f.characters.push_back({uint16_t(c), ch.epoch(), ch.pose()});
        for (const CharacterEvent& e : ch.events())
            f.events.push_back({uint16_t(c), e.epoch, uint8_t(e.kind == CharacterEvent::Kind::Teleport ? 0 : 1), e.tick});
    }
    return f;
}

}  // namespace ks
