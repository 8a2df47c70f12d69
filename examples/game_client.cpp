// A minimal game client on kinesync: connects, shows every character (here: prints), and at the
// end compares what it showed with the truth the server recorded.
// Usage: game_client [--host H] [--port N] [--seconds S] [--truth RECORDING]
// Runs for S seconds or until the server says goodbye. With --truth (the game server's --record
// file, complete once the server has said goodbye): per
// character, the mean and largest distance between the shown global joint positions and the
// truth's at the same server time, in cm.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <kinesync/client/stream_client.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/record/recording.h>

namespace {

struct Shown {
    double time;  // server seconds
    uint16_t epoch;
    std::vector<ks::vec3> global;
};

}  // namespace

int main(int argc, char** argv) {
    ks::StreamClientConfig cfg;
    double seconds = 5.0;
    std::string truth;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--host")) cfg.host = argv[i + 1];
        else if (!std::strcmp(argv[i], "--port")) cfg.port = uint16_t(std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--truth")) truth = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: game_client [--host H] [--port N] [--seconds S] [--truth RECORDING]\n");
            return 2;
        }
    }
    std::map<std::string, std::vector<Shown>> shown;  // by character name
    std::map<std::string, uint16_t> ids;
    try {
        ks::StreamClient client(cfg);
        client.connect();
        const auto start = std::chrono::steady_clock::now();
        bool connected = false, server_left = false;
        for (int frame = 1; frame <= int(seconds * 60) && !server_left; ++frame) {
            std::this_thread::sleep_until(start + std::chrono::microseconds(int64_t(frame * 1e6 / 60)));
            client.update();
            for (const ks::ClientEvent& e : client.take_events()) {
                std::printf("%.2f s: %s %u\n", frame / 60.0, ks::client_event_name(e.kind), unsigned(e.character));
                connected = connected || e.kind == ks::ClientEventKind::Connected;
                server_left = connected && e.kind == ks::ClientEventKind::Disconnected;  // the server said goodbye
            }
            for (const ks::RemoteCharacter* c : client.characters()) {
                if (!c->ready) continue;
                ids[c->name] = c->id;
                Shown s{client.render_time(), c->epoch, {}};
                for (int j = 0; j < c->global.size(); ++j) s.global.push_back(c->global.pos[size_t(j)] * c->metres_per_unit);
                shown[c->name].push_back(std::move(s));
            }
        }
        const ks::StreamClientStats st = client.stats();
        std::printf("received %llu snapshots, rtt %.1f ms, %s\n", (unsigned long long)st.session.snapshots_received, st.rtt_ms,
                    client.state_name());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "game_client: %s\n", e.what());
        return 1;
    }
    if (truth.empty()) return shown.empty() ? 1 : 0;

    // The truth: global joint positions per tick, interpolated linearly to the shown time.
    ks::RecordingReadResult rec;
    try {
        rec = ks::read_recording(truth);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "game_client: %s\n", e.what());
        return 1;
    }
    int worst = 0;
    for (const auto& ch : rec.header.characters) {
        const auto it = shown.find(ch.name);
        if (it == shown.end()) {
            std::printf("character %s: never shown\n", ch.name.c_str());
            worst = 1;
            continue;
        }
        const ks::Skeleton& sk = rec.header.skeletons[ch.skeleton];
        const float m = rec.header.metres_per_unit[ch.skeleton];
        struct Truth {
            uint16_t epoch;
            std::vector<ks::vec3> global;
        };
        std::map<uint32_t, Truth> by_tick;
        for (const ks::RecordedFrame& f : rec.frames)
            for (const ks::RecordedCharacter& rc : f.characters)
                if (rc.id == ch.id) {
                    ks::Pose g(sk.size());
                    ks::op_fk(g, rc.pose, sk.parents);
                    Truth& t = by_tick[f.tick];
                    t.epoch = rc.epoch;
                    for (int j = 0; j < sk.size(); ++j) t.global.push_back(g.pos[size_t(j)] * m);
                }
        double sum = 0, largest = 0;
        size_t n = 0, blackout = 0;
        for (const Shown& s : it->second) {
            const double tick = s.time * rec.header.tick_hz;
            const auto a = by_tick.find(uint32_t(std::floor(tick))), b = by_tick.find(uint32_t(std::floor(tick)) + 1);
            if (a == by_tick.end() || b == by_tick.end()) continue;
            // Across a teleport, until the news arrives, the client still shows the old epoch:
            // that is waiting, not error (docs/FIDELITY.md calls it blackout).
            if (a->second.epoch != s.epoch || b->second.epoch != s.epoch) {
                ++blackout;
                continue;
            }
            const float u = float(tick - std::floor(tick));
            double frame_err = 0;
            for (size_t j = 0; j < s.global.size(); ++j)
                frame_err += ks::length(s.global[j] - (a->second.global[j] * (1 - u) + b->second.global[j] * u));
            frame_err /= double(s.global.size());
            sum += frame_err;
            largest = std::max(largest, frame_err);
            ++n;
        }
        std::printf("character %s: %zu frames compared (%zu across an epoch change left out), error mean %.2f cm, max %.2f cm\n",
                    ch.name.c_str(), n, blackout, n ? 100.0 * sum / double(n) : 0.0, 100.0 * largest);
        if (n == 0) worst = 1;
    }
    return worst;
}
