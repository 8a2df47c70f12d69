#pragma once
// A client over a lossy, delayed link driven by the real snapshot builder and decoder: used by the
// codec tests and by kinesync-bench for the bits-per-joint and bytes-per-second figures.

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "common/src/codec/snapshot_codec.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"
#include "server/src/net/snapshot_builder.h"
#include "tests/support/sample_pose.h"

namespace ks::test {

// FK position errors (cm) of the decoded pose against the original, appended to `errs`.
inline void fk_errors(const Clip& c, const Pose& original, const QCharacter& q, const SkeletonPrecision& prec, std::vector<double>& errs) {
    Pose d(c.joints()), g1(c.joints()), g2(c.joints());
    dequantize_character(d, q, c.skeleton, prec);
    op_fk_static(g1, original, c.skeleton.parents);
    op_fk_static(g2, d, c.skeleton.parents);
    for (int j = 0; j < c.joints(); ++j) errs.push_back(100.0 * length(g1.pos[size_t(j)] - g2.pos[size_t(j)]) * c.metres_per_unit);
}


// A client over a lossy link with delay, driven by the real builder and decoder. Datagrams are
// lost at `loss`; acknowledgements travel back after `rtt` and may be lost, duplicated or
// reordered (independently).
struct LinkSim {
    float loss = 0.01f, ack_loss = 0.01f, ack_dup = 0.0f;
    int rtt_ticks = 6;          // 100 ms at 60 Hz
    int ack_jitter_ticks = 0;   // acks reordered by up to this
    unsigned seed = 7;
};

struct SimResult {
    uint64_t decoded = 0, errors = 0, mismatches = 0;
    uint64_t snapshots = 0, payload_bytes = 0;  // snapshot payloads as sent (every datagram, before loss)
    uint64_t datagrams = 0;
    double payload_bits_per_joint = 0;          // payload bits / (joints of every character x snapshots)
    double delta_category_bits_per_joint[CodingCost::kCount] = {};  // flags, angular, rotation, position
    double delta_bits_per_joint = 0, full_bits_per_joint = 0, all_bits_per_joint = 0;
    double delta_rotang_bits_per_joint = 0;  // rotation + angular velocity + per-joint flags
    double bytes_per_s = 0;  // on a sealed session's wire: IPv4/UDP, the seal, the snapshot header, the payload
    size_t max_datagram = 0;
    std::vector<double> fk_err_cm;
};

// Clip k is sampled at start_s + 0.37 k s at tick 0 (start_s 0: clip 0 on the capture's own frames).
inline SimResult simulate(const std::vector<const Clip*>& clips, double seconds, float snapshot_hz, const LinkSim& link,
                   BuilderConfig cfg = {}, const CodecSettings& settings = {}, double start_s = 0.0) {
    SimResult r;
    std::mt19937 rng(link.seed);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<SkeletonPrecision> precs;
    for (const Clip* c : clips) precs.push_back(plan_precision(c->skeleton, c->metres_per_unit, settings));
    const PrecisionLookup lookup = [&](uint16_t s) { return s < precs.size() ? &precs[s] : nullptr; };
    cfg.snapshot_hz = snapshot_hz;
    SnapshotHistory history;
    SnapshotBuilder builder(cfg);
    SnapshotDecoder decoder(cfg.tick_hz);
    std::multimap<uint32_t, std::pair<uint32_t, std::vector<UnitKey>>> acks;  // arrival tick -> (tick, ids)
    const int step = int(std::lround(cfg.tick_hz / snapshot_hz));
    const uint32_t ticks = uint32_t(seconds * cfg.tick_hz);
    uint64_t bytes = 0;
    // What a game ships (connect tokens) seals every datagram: its prefix, counter bytes and tag are
    // on the wire too. Sealed for real, so the counter's length grows as a session's would.
    net::PacketSealer sealer(net::Key{});
    for (uint32_t tick = 1; tick <= ticks; ++tick) {
        // Acks arriving now.
        for (auto it = acks.begin(); it != acks.end() && it->first <= tick;) {
            builder.on_delivered(it->second.first, it->second.second);
            it = acks.erase(it);
        }
        if (tick % uint32_t(step) != 0) continue;
        std::vector<CharacterSnapshot> now;
        std::vector<Pose> originals;
        for (size_t k = 0; k < clips.size(); ++k) {
            const Clip& c = *clips[k];
            // Clips are looped (in place) and played continuously, as the server plays them.
            Pose p(c.joints());
            op_sample_cubic(p, c, start_s + double(tick) / cfg.tick_hz + 0.37 * double(k), Wrap::Loop);
            originals.push_back(p);
            now.push_back({uint16_t(k), uint16_t(k), quantize_character(originals.back(), c.skeleton, precs[k], 0)});
        }
        history.add(tick, now);
        ++r.snapshots;
        for (const SnapshotPart& part : builder.build(tick, now, history, lookup)) {
            r.max_datagram = std::max(r.max_datagram, part.data.size());
            r.payload_bytes += part.data.size();
            ++r.datagrams;
            const std::vector<uint8_t> datagram(net::kSnapshotHeaderBytes + part.data.size());
            bytes += sealer.seal(datagram).size() + net::kIpUdpHeaderBytes;
            if (u(rng) < link.loss) continue;
            std::vector<DecodedCharacter> out;
            const SnapshotError e = decoder.decode(tick, part.data, [](uint16_t id) { return int(id); }, lookup, out);
            if (e != SnapshotError::None) {
                ++r.errors;
                continue;
            }
            for (const DecodedCharacter& d : out) {
                ++r.decoded;
                const auto& got = d.state->joints;
                const auto& want = now[d.id].state.joints;
                if (!std::equal(got.begin() + d.joints.first, got.begin() + d.joints.end(), want.begin() + d.joints.first)) ++r.mismatches;
                // FK needs every joint: measured once the tick's last part is in.
                if (d.joints.end() == got.size() && decoder.find(d.id, tick, all_joints(precs[d.id])))
                    fk_errors(*clips[d.id], originals[d.id], *d.state, precs[d.id], r.fk_err_cm);
            }
            if (u(rng) < link.ack_loss) continue;
            const int copies = u(rng) < link.ack_dup ? 2 : 1;
            for (int k = 0; k < copies; ++k) {
                const int jitter = link.ack_jitter_ticks ? int(rng() % unsigned(link.ack_jitter_ticks + 1)) : 0;
                acks.insert({tick + uint32_t(link.rtt_ticks + jitter), {tick, part.units}});
            }
        }
    }
    const BuilderStats& st = builder.stats();
    r.delta_bits_per_joint = st.delta_joints ? double(st.delta_joint_bits) / double(st.delta_joints) : 0;
    r.full_bits_per_joint = st.full_joints ? double(st.full_joint_bits) / double(st.full_joints) : 0;
    r.all_bits_per_joint = st.joints ? double(st.joint_bits) / double(st.joints) : 0;
    if (st.delta_joints)
        r.delta_rotang_bits_per_joint = (st.delta_cost.bits(CodingCost::kFlags) + st.delta_cost.bits(CodingCost::kAngular) +
                                         st.delta_cost.bits(CodingCost::kRotation)) / double(st.delta_joints);
    for (int k = 0; k < CodingCost::kCount; ++k)
        r.delta_category_bits_per_joint[k] = st.delta_joints ? st.delta_cost.bits(k) / double(st.delta_joints) : 0.0;
    r.bytes_per_s = double(bytes) / seconds;
    size_t joints = 0;
    for (const Clip* c : clips) joints += size_t(c->joints());
    r.payload_bits_per_joint = 8.0 * double(r.payload_bytes) / double(std::max<uint64_t>(1, r.snapshots * joints));
    return r;
}


}  // namespace ks::test
