// kinesync-bench Capacity/<characters>/<clients>: the real server loop in-process, without sockets
// (InProcessRig: N characters of built-in motion, M clients 17-100 ms away each way). Timed per tick:
// what the server's thread does in a tick (world step, the frame, publish: quantization, every
// client's snapshot, resends); the clients' work is not. Counters: tick_p50_ms, tick_p90_ms, tick_p99_ms, tick_max_ms and
// missed_ticks (ticks that took longer than the 16.7 ms a 60 Hz tick has), over 5 s of ticks after
// a 1 s warm-up (handshakes); kbytes_per_client_per_s (wire bytes sent to each client, IPv4 and UDP
// headers included); all_shown_max_s, the tick the slowest client first showed every character
// whole, in seconds from the start (-1: some client never did; clients_not_showing_all says how
// many); server_history_mb, the states the server keeps for baselines (SnapshotHistory);
// client_us_per_tick, one client's work per tick (its datagrams, decoding, assembling poses).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <spdlog/spdlog.h>

#include "programs/bench/bench_smoke.h"
#include "programs/server/sim/clip_library.h"
#include "programs/server/sim/in_process_rig.h"

using namespace ks;

namespace {

// The 31-joint CMU skeleton's shared clips (walk, run, jumps, leaps), or null without ../shared.
std::unique_ptr<ClipLibrary> load_mocap(const std::string& rig) {
    const std::string dir = std::getenv("KS_MOCAP_DIR") ? std::getenv("KS_MOCAP_DIR") : KS_DEFAULT_MOCAP_DIR;
    std::vector<std::string> files;
    for (const char* f : {"cmu_02_01_walk.bvh", "cmu_35_24_run_jog.bvh", "cmu_01_01_jumps_turn_around.bvh", "cmu_05_20_dance_leaps.bvh"})
        files.push_back(dir + "/" + f);
    if (!std::filesystem::exists(files[0])) return nullptr;
    ClipLoadOptions opts;
    opts.rig = rig;
    return std::make_unique<ClipLibrary>(load_clip_library(files, opts));
}

const ClipLibrary* mocap_library() {
    static const std::unique_ptr<ClipLibrary> lib = load_mocap("");
    return lib.get();
}

// The shared clips grown into a test rig (kinesync/offline/game_rig.h), or the built-in motion grown
// into it without ../shared.
const ClipLibrary& rig_library(const std::string& rig) {
    static std::map<std::string, std::unique_ptr<ClipLibrary>> libs;
    std::unique_ptr<ClipLibrary>& lib = libs[rig];
    if (!lib) lib = load_mocap(rig);
    if (!lib) lib = std::make_unique<ClipLibrary>(builtin_clip_library(rig));
    return *lib;
}

void report(benchmark::State& state, const InProcessRig& rig, int clients, std::vector<double> tick_ms, double seconds) {
    std::sort(tick_ms.begin(), tick_ms.end());
    state.counters["tick_p50_ms"] = tick_ms[tick_ms.size() / 2];
    state.counters["tick_p90_ms"] = tick_ms[std::min(tick_ms.size() - 1, size_t(0.90 * double(tick_ms.size())))];
    state.counters["tick_p99_ms"] = tick_ms[std::min(tick_ms.size() - 1, size_t(0.99 * double(tick_ms.size())))];
    state.counters["tick_max_ms"] = tick_ms.back();
    state.counters["missed_ticks"] = double(std::count_if(tick_ms.begin(), tick_ms.end(), [](double ms) { return ms > 1000.0 / 60.0; }));
    state.counters["clients_connected"] = double(rig.server().clients().size());
    const auto& cache = rig.server().encode_cache();
    const double lookups = double(cache.hits() + cache.misses());
    state.counters["shared_encoding_ratio"] = lookups > 0 ? double(cache.hits()) / lookups : 0.0;
    uint64_t received = 0;
    size_t held = 0;
    for (const auto& s : rig.sessions()) {
        received += s->stats().characters_decoded;
        held += s->decoder().held_bytes();
    }
    state.counters["client_history_mb_per_client"] = double(held) / double(clients) / 1e6;
    state.counters["server_history_mb"] = double(rig.server().history().held_bytes()) / 1e6;
    state.counters["characters_per_client_per_s"] = double(received) / double(clients) / seconds;
    size_t wire = 0;
    for (int c = 0; c < clients; ++c)
        for (const InProcessRig::Sent& s : rig.sent_to(c)) wire += s.wire_bytes;
    state.counters["kbytes_per_client_per_s"] = double(wire) / double(clients) / seconds / 1000.0;
}

void run_capacity(benchmark::State& state, bool share, int workers = -1, const ClipLibrary* library = nullptr, int seconds = 5,
                  bool clients_hold_skeletons = false) {
    const int characters = int(state.range(0)), clients = int(state.range(1));
    if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server"));  // silent
    static const ClipLibrary builtin = builtin_clip_library();
    const ClipLibrary& lib = library ? *library : builtin;
    for (auto _ : state) {
        InProcessRigConfig rc;
        rc.characters = characters;
        rc.clients = clients;
        rc.share_encodings = share;
        rc.worker_threads = workers;
        rc.clients_hold_skeletons = clients_hold_skeletons;
        InProcessRig rig(lib, rc);
        std::vector<double> tick_ms;
        double clients_ms = 0.0;  // the in-process clients' work, untimed in tick_ms
        const int warmup = bench_smoke() ? 6 : 60, measured = bench_smoke() ? 6 : 60 * seconds;
        std::vector<int> shown(size_t(clients), 0);  // the tick each client first showed every character
        std::vector<int> skeletons(size_t(clients), 0);  // and first held every skeleton
        std::vector<int> connected(size_t(clients), 0);  // and was accepted
        for (int n = 1; n <= warmup + measured; ++n) {
            const double ms = rig.tick(n);
            if (n > warmup) tick_ms.push_back(ms);
            if (n > warmup) clients_ms += rig.clients_ms();
            for (int c = 0; c < clients; ++c) {
                const ClientSession& cs = *rig.sessions()[size_t(c)];
                if (connected[size_t(c)] == 0 && cs.state() == ClientSession::State::Connected) connected[size_t(c)] = n;
                if (skeletons[size_t(c)] == 0 && cs.skeletons_ready()) skeletons[size_t(c)] = n;
                if (shown[size_t(c)] == 0 && rig.sessions()[size_t(c)]->skeletons_ready() && rig.sessions()[size_t(c)]->arriving().empty())
                    shown[size_t(c)] = n;
            }
        }
        report(state, rig, clients, std::move(tick_ms), (warmup + measured) / 60.0);
        state.counters["client_us_per_tick"] = clients_ms * 1000.0 / double(measured) / double(clients);
        // Time to first pose: the slowest client's, and how many never showed every character.
        const int never = int(std::count(shown.begin(), shown.end(), 0));
        state.counters["clients_not_showing_all"] = double(never);
        state.counters["all_shown_max_s"] = never ? -1.0 : double(*std::max_element(shown.begin(), shown.end())) / 60.0;
        const bool all_skeletons = std::count(skeletons.begin(), skeletons.end(), 0) == 0;
        state.counters["skeletons_max_s"] = all_skeletons ? double(*std::max_element(skeletons.begin(), skeletons.end())) / 60.0 : -1.0;
        // The same from each client's own acceptance (the clients share one address, whose
        // handshakes the server admits at 10 a second: from the start, the later ones wait).
        int after = 0;
        for (int c = 0; c < clients; ++c) after = std::max(after, shown[size_t(c)] - connected[size_t(c)]);
        state.counters["shown_after_accept_max_s"] = never ? -1.0 : double(after) / 60.0;
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

// Game-scale characters: the shared clips grown into the 250-joint game rig and the 1,000-joint
// stress rig (issue targets: 64 game rigs and 16 stress rigs to 64 clients with no missed tick).
// They run 20 s of ticks: long enough for every client to show every character (all_shown_max_s).
void BM_CapacityGameRig(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("game"), 20); }
void BM_CapacityStressRig(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("stress"), 20); }

// Joining: 8 game rigs or 8 stress rigs, 4 clients at the default 256 kbit/s; the figure is
// shown_after_accept_max_s (issue targets: 0.5 s for game rigs, 2 s for stress rigs).
void BM_JoinGameRig(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("game"), 10); }
void BM_JoinStressRig(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("stress"), 10); }
// The same for clients that hold the skeletons already (their skeleton cache, from an earlier
// session): the server sends references, and only the characters' first states are waited for.
void BM_JoinGameRigCached(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("game"), 10, true); }
void BM_JoinStressRigCached(benchmark::State& state) { run_capacity(state, true, -1, &rig_library("stress"), 10, true); }

BENCHMARK(BM_Capacity)->Name("Capacity")->Args({64, 16})->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityUnshared)->Name("CapacityUnshared")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityOneCore)->Name("CapacityOneCore")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityMocap)->Name("CapacityMocap31")->Args({256, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityGameRig)->Name("CapacityGameRig250")->Args({64, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CapacityStressRig)->Name("CapacityStressRig1000")->Args({16, 64})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JoinGameRig)->Name("JoinGameRig250")->Args({8, 4})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JoinStressRig)->Name("JoinStressRig1000")->Args({8, 4})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JoinGameRigCached)->Name("JoinGameRig250Cached")->Args({8, 4})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JoinStressRigCached)->Name("JoinStressRig1000Cached")->Args({8, 4})->Iterations(1)->Unit(benchmark::kMillisecond);
