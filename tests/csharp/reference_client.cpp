// The C++ side of the C# binding's tests (tests/csharp_test.sh): a StreamClient with the snap
// strategy that writes, each time a character's newest snapshot changes, its tick and its global
// joint positions in metres, one line per character and tick:
//   tick character x0 y0 z0 x1 y1 z1 ...
// usage: kinesync-csharp-reference HOST PORT SECONDS OUT
// Exit 0 when it connected and saw a character, 1 otherwise (with the reason on stderr).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include <kinesync/client/stream_client.h>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: kinesync-csharp-reference HOST PORT SECONDS OUT\n");
        return 2;
    }
    ks::StreamClientConfig cfg;
    cfg.host = argv[1];
    cfg.port = uint16_t(std::atoi(argv[2]));
    cfg.reconstruct.strategy = ks::Strategy::Snap;
    const double seconds = std::atof(argv[3]);
    std::FILE* out = std::fopen(argv[4], "w");
    if (!out) {
        std::fprintf(stderr, "cannot write %s\n", argv[4]);
        return 1;
    }
    ks::StreamClient client(cfg);
    client.connect();
    std::map<uint16_t, uint32_t> written;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        client.update();
        client.take_events();
        for (const ks::RemoteCharacter* c : client.characters()) {
            if (!c->ready || written[c->id] == c->newest_tick) continue;
            written[c->id] = c->newest_tick;
            std::fprintf(out, "%u %u", c->newest_tick, unsigned(c->id));
            for (const ks::vec3& p : c->global.pos)
                std::fprintf(out, " %.6f %.6f %.6f", double(p.x * c->metres_per_unit), double(p.y * c->metres_per_unit),
                             double(p.z * c->metres_per_unit));
            std::fprintf(out, "\n");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
    std::fclose(out);
    if (written.empty()) {
        std::fprintf(stderr, "kinesync-csharp-reference: no character seen (%s)\n", client.disconnect_reason().c_str());
        return 1;
    }
    for (const ks::RemoteCharacter* c : client.characters())
        std::printf("character %u %s joints %d\n", unsigned(c->id), c->name.c_str(), c->skeleton.size());
    return 0;
}
