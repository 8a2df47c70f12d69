// kinesync-bench: server costs. Animation per character per tick (sampling, transitions, root
// motion, look-at, all with velocities), and per client per snapshot (the builder's baseline
// choice, delta coding and packing; quantization is shared by all clients and timed apart).
#include <benchmark/benchmark.h>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include "common/src/codec/snapshot_codec.h"
#include "common/src/net/protocol.h"
#include "server/src/net/snapshot_builder.h"
#include "programs/server/sim/world.h"

using namespace ks;

namespace {

const ClipLibrary& library() {
    static const ClipLibrary lib = builtin_clip_library();
    return lib;
}

WorldConfig bench_world(const benchmark::State& state) {
    WorldConfig cfg;
    cfg.characters = int(state.range(0));
    cfg.controller.teleport_every_s = 5.0f;
    cfg.controller.reset_every_s = 7.0f;
    return cfg;
}

void count_characters(benchmark::State& state, int characters) {
    state.counters["characters"] = double(characters);
    state.counters["per_character"] =
        benchmark::Counter(double(characters), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_WorldTick(benchmark::State& state) {
    World w(library(), bench_world(state));
    for (auto _ : state) w.step();
    count_characters(state, int(state.range(0)));
}

// The same world with each character's look-ahead (0.25 s) computed on every second tick, as the
// demo server does at 60 Hz ticks and 30 Hz snapshots: the animation cost of the look-ahead mode,
// to set beside BM_WorldTick.
void BM_WorldTickLookAhead(benchmark::State& state) {
    World w(library(), bench_world(state));
    std::vector<Character> ahead(w.characters());
    const double dt = 1.0 / double(w.config().tick_hz);
    for (auto _ : state) {
        w.step();
        if (w.tick() % 2 == 0)
            for (size_t c = 0; c < w.characters().size(); ++c) w.characters()[c].look_ahead(15, dt, ahead[c]);
    }
    count_characters(state, int(state.range(0)));
}

struct SnapshotFixture {
    World world;
    std::vector<SkeletonPrecision> precs;
    SnapshotHistory history;
    explicit SnapshotFixture(int characters) : world(library(), [&] {
        WorldConfig c;
        c.characters = characters;
        return c;
    }()) {
        for (size_t s = 0; s < library().skeletons.size(); ++s) precs.push_back(plan_precision(library().skeletons[s], library().metres_per_unit[s]));
    }
    std::vector<CharacterSnapshot> quantize() {
        std::vector<CharacterSnapshot> now;
        for (size_t c = 0; c < world.characters().size(); ++c) {
            const Character& ch = world.characters()[c];
            now.push_back({uint16_t(c), uint16_t(ch.skeleton()), quantize_character(ch.pose(), library().skeletons[size_t(ch.skeleton())], precs[size_t(ch.skeleton())], ch.epoch())});
        }
        return now;
    }
};

void BM_QuantizeShared(benchmark::State& state) {
    SnapshotFixture fx(int(state.range(0)));
    fx.world.step();
    for (auto _ : state) benchmark::DoNotOptimize(fx.quantize());
    state.counters["per_character"] = benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate |
                                                                                     benchmark::Counter::kInvert);
}

// One client's snapshot (delta against a baseline acked 6 ticks earlier), for N characters.
void BM_SnapshotPerClient(benchmark::State& state) {
    const int n = int(state.range(0));
    SnapshotFixture fx(n);
    BuilderConfig bc;
    bc.bandwidth_bps = 1e9f;  // measure coding, not the budget
    SnapshotBuilder builder(bc);
    const PrecisionLookup lookup = [&](uint16_t s) { return &fx.precs[s]; };
    std::vector<std::pair<uint32_t, std::vector<UnitKey>>> pending;
    size_t bytes = 0, snapshots = 0;
    for (auto _ : state) {
        state.PauseTiming();
        fx.world.step();
        fx.world.step();
        const uint32_t tick = fx.world.tick();
        const std::vector<CharacterSnapshot> now = fx.quantize();
        fx.history.add(tick, now);
        for (auto it = pending.begin(); it != pending.end();) {
            if (it->first + 6 <= tick) {
                builder.on_delivered(it->first, it->second);
                it = pending.erase(it);
            } else {
                ++it;
            }
        }
        state.ResumeTiming();
        for (const SnapshotPart& p : builder.build(tick, now, fx.history, lookup)) {
            bytes += p.data.size();
            pending.push_back({tick, p.units});
        }
        ++snapshots;
    }
    state.counters["characters"] = n;
    state.counters["bytes_per_snapshot"] = double(bytes) / double(std::max<size_t>(1, snapshots));
    state.counters["per_character"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate |
                                                                        benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_WorldTick)->Arg(1)->Arg(16)->Arg(64);
BENCHMARK(BM_WorldTickLookAhead)->Arg(1)->Arg(16)->Arg(64);
BENCHMARK(BM_QuantizeShared)->Arg(16)->Arg(64);
BENCHMARK(BM_SnapshotPerClient)->Arg(16)->Arg(64);

namespace {

// Planning the SkeletonDefs messages of four rig skeletons (grown from the built-in body, offsets
// varied so no two are alike; the joints coded as they are planned) and building each message
// once, as Server::queue_definitions and the first sends do for the first client to join while the
// roster stands still (the clients after it reuse the plan), on the tick's thread.
void BM_JoinDefinitions(benchmark::State& state, const char* rig) {
    std::vector<Skeleton> skeletons(4, make_rig(rig, builtin_clip("walk")).skeleton);
    for (size_t k = 0; k < skeletons.size(); ++k)
        for (vec3& o : skeletons[k].offsets) o = o * (1.0f + 0.01f * float(k));
    std::vector<net::SkeletonDefInput> defs;
    for (size_t k = 0; k < skeletons.size(); ++k) defs.push_back({uint16_t(k), "rig", &skeletons[k], 0.01f, 0, -1});
    std::vector<net::CharacterInfoInput> chars;
    for (uint16_t c = 0; c < 8; ++c) chars.push_back({c, uint16_t(c % 4), "character"});
    size_t bytes = 0, messages = 0;
    for (auto _ : state) {
        bytes = messages = 0;
        for (const auto& plan : net::plan_skeleton_defs(defs, chars, net::kMaxDatagram)) {
            bytes += net::build_skeleton_defs({}, 1, plan).size();
            ++messages;
        }
    }
    state.counters["bytes"] = double(bytes);
    state.counters["messages"] = double(messages);
    state.counters["joints"] = double(skeletons[0].size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_JoinDefinitions, game_rig_250, "game")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_JoinDefinitions, stress_rig_1000, "stress")->Unit(benchmark::kMicrosecond);

namespace {

// What one SkeletonDefs datagram costs the client that receives it (decode_packet's checks, then
// the assembler's decoding of each part): a game rig's part as the server plans it, and the most a
// hostile datagram can ask within kMaxJointsPerPacket and kMaxNewNameBytesPerPacket (names that
// spell out all the new bytes allowed, then joints that repeat the one before, nearly free to code).
void BM_DecodeSkeletonDefs(benchmark::State& state, bool hostile) {
    Skeleton s;
    if (hostile) {
        for (int j = 0; j < net::kMaxJointsPerPacket; ++j) {
            const bool fresh = size_t(j) < net::kMaxNewNameBytesPerPacket / 64;
            s.names.push_back(std::string(64, fresh && j % 2 ? 'b' : 'a'));
            s.parents.push_back(j - 1);
            s.offsets.push_back({0, 1, 0});
        }
    } else {
        s = make_rig("game", builtin_clip("walk")).skeleton;
    }
    const net::SkeletonDefInput def{1, "s", &s, 1.0f};
    const std::vector<uint8_t> datagram = net::build_skeleton_defs({}, 1, net::plan_skeleton_defs({&def, 1}, {}).front());
    size_t joints = 0;
    for (auto _ : state) {
        const auto d = net::decode_packet(datagram);
        if (!d) state.SkipWithError("refused");
        net::SkeletonAssembler a;
        joints = 0;
        for (const auto* part : *d->message<net::wire::SkeletonDefs>()->defs()) {
            a.add(*part);
            joints += part->part_joints();
        }
        benchmark::DoNotOptimize(a);
    }
    state.counters["bytes"] = double(datagram.size());
    state.counters["joints"] = double(joints);
}

}  // namespace

BENCHMARK_CAPTURE(BM_DecodeSkeletonDefs, game_rig_part, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodeSkeletonDefs, hostile_limits, true)->Unit(benchmark::kMicrosecond);
