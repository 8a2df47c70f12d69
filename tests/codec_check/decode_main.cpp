// kinesync-codec-decode STREAM [STATES]: decodes a recorded snapshot stream
// (tests/codec_check/stream_file.h) in arrival order with the SnapshotDecoder and prints how many
// states it decoded, how many payloads it refused, and a 64-bit hash of every decoded state; with
// STATES, also one line per decoded state ("tick character hash") for comparing two builds state
// by state. Built with only the codec's own sources, so the cross-build test can compile it with
// another compiler and other flags.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "common/src/codec/precision.h"
#include "common/src/codec/snapshot_codec.h"
#include "tests/codec_check/stream_file.h"

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: kinesync-codec-decode STREAM [STATES]\n");
        return 2;
    }
    try {
        const ks::codec_check::StreamFile s = ks::codec_check::read_stream(argv[1]);
        std::vector<ks::SkeletonPrecision> precs;
        for (size_t k = 0; k < s.skeletons.size(); ++k) precs.push_back(ks::plan_precision(s.skeletons[k], s.metres_per_unit[k]));
        ks::SnapshotDecoder decoder(60.0f);
        uint64_t h = 1469598103934665603ull, states = 0, refused = 0, one = 0, run = 0, longest_run = 0;
        auto mix = [&h, &one](int64_t v) {
            for (int b = 0; b < 8; ++b) {
                h ^= uint64_t(v) >> (8 * b) & 0xFF;
                h *= 1099511628211ull;
                one ^= uint64_t(v) >> (8 * b) & 0xFF;
                one *= 1099511628211ull;
            }
        };
        std::ofstream per_state;
        if (argc == 3) per_state.open(argv[2]);
        for (const auto& r : s.records) {
            std::vector<ks::DecodedCharacter> out;
            const ks::SnapshotError e = decoder.decode(
                r.tick, r.payload,
                [&](uint16_t id) { return id < s.character_skeleton.size() ? int(s.character_skeleton[id]) : -1; },
                [&](uint16_t sk) { return sk < precs.size() ? &precs[sk] : nullptr; }, out);
            run = e != ks::SnapshotError::None ? run + 1 : 0;  // payloads refused in a row
            longest_run = std::max(longest_run, run);
            if (e != ks::SnapshotError::None) {
                ++refused;
                mix(-1 - int64_t(e));
                continue;
            }
            for (const ks::DecodedCharacter& d : out) {
                ++states;
                one = 1469598103934665603ull;
                mix(d.id), mix(r.tick), mix(d.state->epoch);
                for (const ks::QJoint& q : d.state->joints) {
                    mix(q.largest), mix(q.moved), mix(q.scaled);
                    for (int k = 0; k < 3; ++k) mix(q.rot[k]), mix(q.ang[k]), mix(q.pos[k]), mix(q.vel[k]), mix(q.lscl[k]), mix(q.svl[k]);
                }
                if (per_state.is_open()) per_state << r.tick << ' ' << d.id << ' ' << std::hex << one << std::dec << '\n';
            }
        }
        std::printf("records %zu states %" PRIu64 " refused %" PRIu64 " (at most %" PRIu64 " in a row) hash %016" PRIx64 "\n", s.records.size(),
                    states, refused, longest_run, h);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-codec-decode: %s\n", e.what());
        return 1;
    }
    return 0;
}
