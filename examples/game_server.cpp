// A minimal game server on kinesync: two characters of its own, streamed at 60 Hz ticks.
//   walker  a motion-capture walk from a BVH file, looping; each loop teleports it back to the
//           start (a new epoch: clients snap instead of sliding 10 m back)
//   tail    a procedurally animated 4-joint chain whose rotations and angular velocities come from
//           the same formula (velocities exact, not differenced)
// Usage: game_server [--bvh FILE] [--port N] [--seconds S] [--record FILE]
// Prints "port N" once listening (N is the bound port: --port 0 picks a free one).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/offline/reference_frame.h>
#include <kinesync/offline/bvh.h>
#include <kinesync/server/stream_server.h>

namespace {

ks::Skeleton tail_skeleton() {
    ks::Skeleton s;
    s.names = {"base", "t1", "t2", "t3"};
    s.parents = {-1, 0, 1, 2};
    s.offsets = {{0, 0, 0}, {0, 0.3f, 0}, {0, 0.3f, 0}, {0, 0.3f, 0}};
    return s;
}

// Each joint swings about z with a phase lag down the chain; base drifts in a circle.
void tail_pose(ks::Pose& p, double t) {
    const ks::Skeleton s = tail_skeleton();
    const float w = 3.0f, r = 2.0f, orbit = 0.5f;
    p.pos[0] = {5.0f + r * std::cos(orbit * float(t)), 1.0f, r * std::sin(orbit * float(t))};
    p.vel[0] = {-r * orbit * std::sin(orbit * float(t)), 0.0f, r * orbit * std::cos(orbit * float(t))};
    for (int j = 1; j < 4; ++j) {
        const float phase = w * float(t) - 0.8f * float(j);
        p.pos[size_t(j)] = s.offsets[size_t(j)];
        p.rot[size_t(j)] = ks::quat_from_angle_axis(0.5f * std::sin(phase), {0, 0, 1});
        p.ang[size_t(j)] = {0, 0, 0.5f * w * std::cos(phase)};
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string bvh, record;
    int port = 40000;
    double seconds = 10.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--bvh")) bvh = argv[i + 1];
        else if (!std::strcmp(argv[i], "--port")) port = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--record")) record = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: game_server [--bvh FILE] [--port N] [--seconds S] [--record FILE]\n");
            return 2;
        }
    }
    // The walk: a BVH from disk, or kinesync's built-in procedural walk without one.
    ks::Clip walk;
    try {
        if (bvh.empty()) walk = ks::builtin_clip("walk");
        else {
            walk = ks::load_bvh(bvh).clip;
            if (ks::leading_frame_is_reference(walk)) walk = ks::drop_first_frame(walk);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "game_server: %s\n", e.what());
        return 1;
    }

    ks::StreamServerConfig cfg;
    cfg.bind = "127.0.0.1";
    cfg.port = uint16_t(port);
    cfg.tick_hz = 60.0f;
    cfg.record_path = record;  // the truth, for the example client to compare against
    try {
        ks::StreamServer server(cfg);
        const uint16_t walk_skeleton = server.add_skeleton("walk skeleton", walk.skeleton, walk.metres_per_unit);
        const uint16_t tail_sk = server.add_skeleton("tail", tail_skeleton(), 1.0f);
        const uint16_t walker = server.add_character(walk_skeleton, "walker");
        const uint16_t tail = server.add_character(tail_sk, "tail");
        std::printf("port %u\n", unsigned(server.port()));
        std::fflush(stdout);

        ks::Pose walk_pose(walk.joints()), tail_p(4);
        const double dt = 1.0 / cfg.tick_hz;
        const auto start = std::chrono::steady_clock::now();
        int loops = 0;
        for (int n = 1; n <= int(seconds * cfg.tick_hz); ++n) {
            std::this_thread::sleep_until(start + std::chrono::microseconds(int64_t(n * 1e6 * dt)));
            const double t = n * dt;
            // Sampled with velocities (cubic, clamped inside one pass of the clip).
            const int loop = int(t / walk.duration());
            if (loop != loops) {
                loops = loop;
                server.teleport(walker);  // back to the clip's start: a jump the clients must not smooth
            }
            ks::op_sample_cubic(walk_pose, walk, t - loop * double(walk.duration()), ks::Wrap::Clamp);
            server.set_pose(walker, walk_pose);
            tail_pose(tail_p, t);
            server.set_pose(tail, tail_p);
            server.end_tick();
        }
        const ks::StreamServerStats st = server.stats();
        server.close();
        std::printf("streamed %u ticks to %zu client(s) at the end; %llu datagrams out, %llu malformed in; %d loop teleport(s)\n",
                    st.tick, st.clients.size(), (unsigned long long)st.net.datagrams_out, (unsigned long long)st.net.malformed, loops);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "game_server: %s\n", e.what());
        return 1;
    }
    return 0;
}
