// A game's smallest use of the installed C++ libraries, public headers only, as C++17: a
// 3-joint arm streamed by a StreamServer and shown by a StreamClient over loopback, both pumped on
// this thread. Exits 0 when the client shows the arm where the server put it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <kinesync/client/stream_client.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/errors.h>
#include <kinesync/server/stream_server.h>

int main() {
    ks::Skeleton arm;
    arm.names = {"shoulder", "elbow", "wrist"};
    arm.parents = {-1, 0, 1};
    arm.offsets = {{0, 1.5f, 0}, {0.3f, 0, 0}, {0.25f, 0, 0}};

    ks::StreamServerConfig sc;
    sc.port = 0;
    sc.io = ks::IoMode::Pumped;
    ks::StreamServer server(sc);
    const uint16_t character = server.add_character(server.add_skeleton("arm", arm), "arm 1");

    ks::StreamClientConfig cc;
    cc.port = server.port();
    ks::StreamClient client(cc);
    client.connect();

    ks::Pose pose(arm);  // the rest pose
    const float omega = 2.0f;
    float shown_error = -1.0f;
    for (int tick = 1; tick <= 180 && shown_error < 0; ++tick) {
        const float t = float(tick) / 60.0f;
        pose.rot[1] = ks::quat_from_angle_axis(0.5f * std::sin(omega * t), ks::vec3{0, 0, 1});
        pose.ang[1] = ks::vec3{0, 0, 0.5f * omega * std::cos(omega * t)};
        server.set_pose(character, pose);
        server.end_tick();
        server.poll();
        client.update();
        std::this_thread::sleep_for(std::chrono::microseconds(16667));  // a 60 Hz game
        if (const ks::RemoteCharacter* c = client.character(character); c && c->ready && tick > 60) {
            ks::Pose truth(arm.size());
            ks::op_fk(truth, pose, arm.parents);
            shown_error = ks::length(c->global.pos[2] - truth.pos[2]);
        }
    }
    // A NaN pose is refused with a typed error naming the joint.
    bool refused = false;
    pose.pos[2].x = std::nanf("");
    try {
        server.set_pose(character, pose);
    } catch (const ks::Error& e) {
        refused = e.code() == ks::Errc::InvalidPose && e.joint() == 2;
    }
    const bool ok = shown_error >= 0 && shown_error < 0.05f && refused;
    std::printf("consumer: wrist shown %.4f m from the truth, NaN pose refused: %s: %s\n", shown_error, refused ? "yes" : "no",
                ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
