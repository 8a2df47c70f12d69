// kinesync-bench Capacity/<characters>/<clients>: the real server loop in-process, without sockets.
// A simulated world of N characters (built-in motion) is stepped at 60 Hz and published to a
// net::Server whose datagrams go to M ClientSessions (handshake, skeletons, snapshots decoded,
// acks, pings) and whose replies come back through Server::inject, each client 1-6 ticks away
// (17-100 ms each way). Timed per tick:
// what the server's thread does in a tick (world step, the frame, publish: quantization, every
// client's snapshot, resends); the clients' work is not. Counters: tick_p50_ms, tick_p99_ms and
// missed_ticks (ticks that took longer than the 16.7 ms a 60 Hz tick has), over 5 s of ticks after
// a 1 s warm-up (handshakes).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <spdlog/spdlog.h>

#include "client/src/session.h"
#include "server/src/net/server.h"
#include "programs/server/sim/clip_library.h"
#include "programs/server/sim/world.h"

using namespace ks;

namespace {

// The 31-joint CMU skeleton's shared clips (walk, run, jumps, leaps), or null without ../shared.
const ClipLibrary* mocap_library() {
    static const std::unique_ptr<ClipLibrary> lib = []() -> std::unique_ptr<ClipLibrary> {
        const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
        std::vector<std::string> files;
        for (const char* f : {"cmu_02_01_walk.bvh", "cmu_35_24_run_jog.bvh", "cmu_01_01_jumps_turn_around.bvh", "cmu_05_20_dance_leaps.bvh"})
            files.push_back(dir + "/" + f);
        if (!std::filesystem::exists(files[0])) return nullptr;
        return std::make_unique<ClipLibrary>(load_clip_library(files));
    }();
    return lib.get();
}

// One run: the world, the server and its clients, with the datagrams in flight both ways.
class CapacityRig {
public:
    CapacityRig(const ClipLibrary& lib, int characters, int clients, bool share, int workers)
        : world_(lib, world_config(characters)), pool_(workers), workers_(workers), clients_(clients) {
        net::Roster& roster = roster_;
        for (size_t s = 0; s < lib.skeletons.size(); ++s)
            roster.skeletons[uint16_t(s)] = {lib.skeleton_names[s], lib.skeletons[s], lib.metres_per_unit[s],
                                             plan_precision(lib.skeletons[s], lib.metres_per_unit[s])};
        for (int c = 0; c < characters; ++c) roster.characters[uint16_t(c)] = {uint16_t(world_.characters()[size_t(c)].skeleton()), ""};
        net::ServerConfig sc;
        sc.max_clients = clients;
        sc.share_encodings = share;
        sc.worker_threads = workers;
        sc.transport = [this](const asio::ip::udp::endpoint& to, std::span<const uint8_t> bytes) {
            to_client_[to.port()].push_back({tick_now_ + delay(to.port() - 20000), std::vector<uint8_t>(bytes.begin(), bytes.end())});
        };
        server_ = std::make_unique<net::Server>(io_, sc, roster);
        for (int i = 0; i < clients; ++i) sessions_.push_back(std::make_unique<ClientSession>(ClientSessionConfig{}));
        for (auto& s : sessions_) s->connect(0.0);
    }

    // Tick n: the clients read what has arrived and answer (not timed), then the server's tick
    // (timed, in ms).
    double tick(int n) {
        const double now = n / 60.0;
        tick_now_ = n;
        exchange(now);
        const auto t0 = std::chrono::steady_clock::now();
        world_.step(workers_ != 0 ? &pool_ : nullptr);
        server_->publish(frame());
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }

    void report(benchmark::State& state, std::vector<double> tick_ms, double seconds) const {
        std::sort(tick_ms.begin(), tick_ms.end());
        state.counters["tick_p50_ms"] = tick_ms[tick_ms.size() / 2];
        state.counters["tick_p99_ms"] = tick_ms[std::min(tick_ms.size() - 1, size_t(0.99 * double(tick_ms.size())))];
        state.counters["missed_ticks"] = double(std::count_if(tick_ms.begin(), tick_ms.end(), [](double ms) { return ms > 1000.0 / 60.0; }));
        state.counters["clients_connected"] = double(server_->clients().size());
        const double lookups = double(server_->encode_cache().hits() + server_->encode_cache().misses());
        state.counters["shared_encoding_ratio"] = lookups > 0 ? double(server_->encode_cache().hits()) / lookups : 0.0;
        uint64_t received = 0;
        for (const auto& s : sessions_) received += s->stats().characters_decoded;
        state.counters["characters_per_client_per_s"] = double(received) / double(clients_) / seconds;
    }

private:
    struct InFlight {
        int due;
        std::vector<uint8_t> bytes;
    };
    struct Reply {
        int due;
        uint16_t port;
        std::vector<uint8_t> bytes;
    };

    static WorldConfig world_config(int characters) {
        WorldConfig wc;
        wc.characters = characters;
        wc.controller.teleport_every_s = 10.0f;
        return wc;
    }
    // Client i is 1 + i % 6 ticks away (17-100 ms each way): clients acknowledge different ticks,
    // as real ones do, so they do not all share one baseline.
    static int delay(int client) { return 1 + client % 6; }

    void exchange(double now) {
        for (int i = 0; i < clients_; ++i) {
            ClientSession& s = *sessions_[size_t(i)];
            const uint16_t port = uint16_t(20000 + i);
            std::vector<InFlight>& q = to_client_[port];
            for (const InFlight& d : q)
                if (d.due <= tick_now_) s.on_datagram(d.bytes, now);
            q.erase(std::remove_if(q.begin(), q.end(), [&](const InFlight& d) { return d.due <= tick_now_; }), q.end());
            s.update(now);
            s.take_received();
            s.take_events();
            // Replies take the same time back: held here, injected when due.
            for (auto& d : s.take_outgoing()) replies_.push_back({tick_now_ + delay(i), port, std::move(d)});
        }
        const asio::ip::address loop = asio::ip::make_address("127.0.0.1");
        for (auto it = replies_.begin(); it != replies_.end();) {
            if (it->due > tick_now_) {
                ++it;
                continue;
            }
            server_->inject({loop, it->port}, it->bytes);
            it = replies_.erase(it);
        }
    }

    net::TickFrame frame() const {
        net::TickFrame f;
        f.tick = world_.tick();
        for (size_t c = 0; c < world_.characters().size(); ++c) {
            const Character& ch = world_.characters()[c];
            f.characters.push_back({uint16_t(c), ch.epoch(), &ch.pose()});
            for (const CharacterEvent& e : ch.events())
                f.events.push_back({uint16_t(c), e.epoch,
                                    e.kind == CharacterEvent::Kind::Teleport ? kinesync::wire::EventKind::Teleport : kinesync::wire::EventKind::Reset,
                                    e.tick});
        }
        return f;
    }

    World world_;
    WorkerPool pool_;  // the demo's animation on every core too
    int workers_, clients_;
    asio::io_context io_;
    net::Roster roster_;  // the server keeps a reference
    std::unique_ptr<net::Server> server_;
    std::vector<std::unique_ptr<ClientSession>> sessions_;
    std::map<uint16_t, std::vector<InFlight>> to_client_;  // by client port
    std::vector<Reply> replies_;
    int tick_now_ = 0;
};

void run_capacity(benchmark::State& state, bool share, int workers = -1, const ClipLibrary* library = nullptr) {
    const int characters = int(state.range(0)), clients = int(state.range(1));
    if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server"));  // silent
    static const ClipLibrary builtin = builtin_clip_library();
    const ClipLibrary& lib = library ? *library : builtin;
    for (auto _ : state) {
        CapacityRig rig(lib, characters, clients, share, workers);
        std::vector<double> tick_ms;
        const int warmup = 60, measured = 300;
        for (int n = 1; n <= warmup + measured; ++n) {
            const double ms = rig.tick(n);
            if (n > warmup) tick_ms.push_back(ms);
        }
        rig.report(state, std::move(tick_ms), (warmup + measured) / 60.0);
    }
}

}  // namespace

void BM_Capacity(benchmark::State& state) { run_capacity(state, true); }
// The same without sharing encodings between clients (each client's snapshot coded on its own).
void BM_CapacityUnshared(benchmark::State& state) { run_capacity(state, false); }
// The same on one core (no worker thread).
void BM_CapacityOneCore(benchmark::State& state) { run_capacity(state, true, 0); }

// The same with the 31-joint shared clips.
void BM_CapacityMocap(benchmark::State& state) {
    if (const ClipLibrary* lib = mocap_library()) run_capacity(state, true, -1, lib);
    else state.SkipWithError("shared mocap clips not found (KS_MOCAP_DIR)");
}

BENCHMARK(BM_Capacity)->Name("Capacity")->Args({64, 16})->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityUnshared)->Name("CapacityUnshared")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityOneCore)->Name("CapacityOneCore")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityMocap)->Name("CapacityMocap31")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
