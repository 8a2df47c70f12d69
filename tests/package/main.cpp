// The smallest use of all three libraries: a server-side world plays the built-in motion; its
// character's snapshots feed a client-side reconstructor; the shown pose is run through FK.
#include <cmath>
#include <cstdio>

#include "client/reconstruct.h"
#include "common/anim/ops_fk.h"
#include "server/sim/world.h"

int main() {
    const ks::ClipLibrary lib = ks::builtin_clip_library();
    ks::WorldConfig wc;
    wc.characters = 1;
    ks::World world(lib, wc);
    const ks::Skeleton& skeleton = lib.skeletons[0];
    ks::CharacterReconstructor recon(skeleton, ks::ReconstructConfig{});
    ks::Pose global(skeleton.size());
    const double dt = 1.0 / 60.0;
    float travelled = 0.0f;
    ks::vec3 first{};
    for (int tick = 1; tick <= 120; ++tick) {
        world.step();
        const ks::Character& c = world.characters()[0];
        if (tick % 2 == 0) recon.add_snapshot(tick * dt, c.pose(), c.epoch());
        if (!recon.ready()) continue;
        const ks::Pose& shown = recon.render(tick * dt, dt);
        ks::op_fk_static(global, shown, skeleton.parents);
        if (tick == 2) first = global.pos[0];
        travelled = ks::length(global.pos[0] - first);
    }
    const bool ok = std::isfinite(travelled);
    std::printf("consumer: %d joints, root moved %.2f units in 2 s: %s\n", skeleton.size(), travelled, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
