// kinesync-codec-stream OUT [--seconds S] [--clips FILE.bvh ...]: records what a client would
// receive from the real snapshot builder over a lossy, reordering link (3 % of datagrams lost,
// delivery 50-150 ms so later snapshots overtake earlier ones, 1 % of acks lost), 4 characters at
// 30 Hz snapshots of 60 Hz ticks; clips from BVH files or, without any, the built-in motion. The
// acks come from this program's own decoder, so baselines follow what actually arrived.
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/offline/reference_frame.h>
#include "common/src/codec/precision.h"
#include <kinesync/offline/bvh.h>
#include "server/src/net/snapshot_builder.h"
#include "tests/codec_check/stream_file.h"

using namespace ks;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: kinesync-codec-stream OUT [--seconds S] [--clips FILE.bvh ...]\n");
        return 2;
    }
    const std::string out = argv[1];
    double seconds = 120.0;
    std::vector<Clip> clips;
    try {
        for (int i = 2; i < argc; ++i) {
            if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
            else if (!std::strcmp(argv[i], "--clips"))
                while (i + 1 < argc && argv[i + 1][0] != '-') {
                    Clip c = load_bvh(argv[++i]).clip;
                    clips.push_back(leading_frame_is_reference(c) ? drop_first_frame(c) : c);
                }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-codec-stream: %s\n", e.what());
        return 1;
    }
    if (clips.empty()) clips = builtin_clips(60.0f);
    while (clips.size() < 4) clips.push_back(clips[clips.size() % clips.size()]);
    clips.resize(4);

    codec_check::StreamFile file;
    std::vector<SkeletonPrecision> precs;
    for (size_t k = 0; k < clips.size(); ++k) {
        file.skeletons.push_back(clips[k].skeleton);
        file.metres_per_unit.push_back(clips[k].metres_per_unit);
        file.character_skeleton.push_back(uint16_t(k));
        precs.push_back(plan_precision(clips[k].skeleton, clips[k].metres_per_unit));
    }
    const PrecisionLookup lookup = [&](uint16_t s) { return s < precs.size() ? &precs[s] : nullptr; };
    BuilderConfig cfg;
    cfg.tick_hz = 60.0f;
    cfg.snapshot_hz = 30.0f;
    SnapshotHistory history;
    SnapshotBuilder builder(cfg);
    SnapshotDecoder decoder(60.0f);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    std::multimap<uint32_t, SnapshotPart> in_flight;                              // arrival tick -> datagram
    std::multimap<uint32_t, std::pair<uint32_t, std::vector<UnitKey>>> acks;      // arrival tick -> (tick, ids)
    uint64_t refused = 0;
    const uint32_t ticks = uint32_t(seconds * 60.0);
    for (uint32_t tick = 1; tick <= ticks + 20; ++tick) {
        for (auto it = acks.begin(); it != acks.end() && it->first <= tick; it = acks.erase(it))
            builder.on_delivered(it->second.first, it->second.second);
        for (auto it = in_flight.begin(); it != in_flight.end() && it->first <= tick; it = in_flight.erase(it)) {
            const SnapshotPart& part = it->second;
            std::vector<DecodedCharacter> got;
            if (decoder.decode(part.tick, part.data, [](uint16_t id) { return int(id); }, lookup, got) != SnapshotError::None) {
                ++refused;
                continue;
            }
            file.records.push_back({part.tick, part.data});
            if (u(rng) >= 0.01f) acks.insert({tick + 3, {part.tick, part.units}});
        }
        if (tick > ticks || tick % 2 != 0) continue;
        std::vector<CharacterSnapshot> now;
        for (size_t k = 0; k < clips.size(); ++k) {
            Pose p(clips[k].joints());
            op_sample_cubic(p, clips[k], double(tick) / 60.0 + 0.37 * double(k), Wrap::Loop);
            now.push_back({uint16_t(k), uint16_t(k), quantize_character(p, clips[k].skeleton, precs[k], uint16_t(tick / 600))});
        }
        history.add(tick, now);
        for (SnapshotPart& part : builder.build(tick, now, history, lookup)) {
            if (u(rng) < 0.03f) continue;
            in_flight.insert({tick + 3 + uint32_t(rng() % 7), std::move(part)});
        }
    }
    try {
        codec_check::write_stream(out, file);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-codec-stream: %s\n", e.what());
        return 1;
    }
    std::printf("%zu payloads in arrival order (%llu refused by this build's decoder)\n", file.records.size(), (unsigned long long)refused);
    return refused == 0 ? 0 : 1;
}
