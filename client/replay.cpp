#include "client/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "client/render_clock.h"
#include "common/anim/ops_fk.h"
#include "common/codec/snapshot_codec.h"
#include "common/net/protocol.h"

namespace ks {

using namespace ks::net;

namespace {

constexpr double kClientClockOffset = 1234.567;  // the client's clock = server clock + this (unknown to it)

struct Truth {
    const RecordingReadResult& rec;
    std::map<uint32_t, size_t> index;  // tick -> frame
    explicit Truth(const RecordingReadResult& r) : rec(r) {
        for (size_t i = 0; i < r.frames.size(); ++i) index[r.frames[i].tick] = i;
    }
    const RecordedCharacter* at(uint32_t tick, uint16_t id) const {
        const auto it = index.find(tick);
        if (it == index.end()) return nullptr;
        for (const RecordedCharacter& c : rec.frames[it->second].characters)
            if (c.id == id) return &c;
        return nullptr;
    }
};

// Global positions (metres) and rotations of a local pose.
void globals(const Skeleton& s, float metres, const Pose& local, Pose& g, std::vector<vec3>& pos_m, std::vector<quat>& rot) {
    op_fk_static(g, local, s.parents);
    pos_m.resize(size_t(s.size()));
    rot.resize(size_t(s.size()));
    for (size_t j = 0; j < size_t(s.size()); ++j) {
        pos_m[j] = g.pos[j] * metres;
        rot[j] = g.rot[j];
    }
}

}  // namespace

ReplayResult run_replay(const RecordingReadResult& rec, const ReplayConfig& cfg) {
    ReplayResult out;
    if (rec.frames.empty()) return out;
    const RecordingHeader& h = rec.header;
    const double tick_hz = h.tick_hz;
    const Truth truth(rec);
    std::vector<SkeletonPrecision> precs;
    for (size_t s = 0; s < h.skeletons.size(); ++s) precs.push_back(plan_precision(h.skeletons[s], h.metres_per_unit[s]));
    std::map<uint16_t, uint16_t> skeleton_of;
    for (const auto& c : h.characters) skeleton_of[c.id] = c.skeleton;
    const PrecisionLookup lookup = [&](uint16_t s) { return s < precs.size() ? &precs[s] : nullptr; };

    NetLink link(cfg.profile, cfg.seed);
    // --- the server side ---
    BuilderConfig bc;
    bc.tick_hz = float(tick_hz);
    bc.snapshot_hz = cfg.snapshot_hz;
    bc.bandwidth_bps = cfg.bandwidth_bps;
    bc.max_payload_bytes = std::min<size_t>(1100, max_snapshot_data_bytes());
    SnapshotBuilder builder(bc);
    SnapshotHistory history(256);
    SentPacketLog server_sent;
    AckTracker server_received;
    uint16_t server_seq = 0;
    std::vector<std::pair<uint32_t, std::vector<uint16_t>>> meta(SentPacketLog::kWindow);
    // --- the client side ---
    SnapshotDecoder decoder{float(tick_hz)};
    AckTracker client_received;
    uint16_t client_seq = 0;
    double last_ack = -1e9, last_ping = -1e9, offset_est = 0, rtt = 0;
    bool offset_valid = false, any_snapshot = false;
    RenderClock clock;
    uint32_t newest_tick = 0;

    // One reconstructor per variant (a strategy with its settings) and character, and one metrics
    // accumulator per variant.
    std::vector<ReconstructConfig> variants = cfg.variants;
    if (variants.empty())
        for (Strategy st : cfg.strategies) {
            variants.push_back(cfg.reconstruct);
            variants.back().strategy = st;
        }
    std::vector<std::map<uint16_t, std::unique_ptr<CharacterReconstructor>>> recon(variants.size());
    std::vector<FidelityAccumulator> acc;
    FidelityConfig fc;
    fc.render_hz = cfg.render_hz;
    for (size_t k = 0; k < variants.size(); ++k) acc.emplace_back(fc);
    for (size_t k = 0; k < variants.size(); ++k) {
        const ReconstructConfig& rc = variants[k];
        for (const auto& c : h.characters) recon[k][c.id] = std::make_unique<CharacterReconstructor>(h.skeletons[c.skeleton], rc, h.metres_per_unit[c.skeleton]);
    }
    // Epoch changes (teleports and resets): the truth jumps at T; blackout until the news arrives.
    for (size_t i = 1; i < rec.frames.size(); ++i)
        for (const RecordedEvent& e : rec.frames[i].events) {
            if (e.kind > 1) continue;
            const RecordedCharacter* before = truth.at(rec.frames[i - 1].tick, e.character);
            const RecordedCharacter* after = truth.at(rec.frames[i].tick, e.character);
            if (!before || !after) continue;
            const float m = h.metres_per_unit[skeleton_of[e.character]];
            const EpochMark mark{double(e.tick) / tick_hz, before->pose.pos[0] * m, after->pose.pos[0] * m,
                                 e.kind == 0 ? EpochKind::Teleport : EpochKind::Reset};
            for (auto& a : acc) a.add_epoch_change(e.character, mark);
        }

    const uint32_t first_tick = rec.frames.front().tick, last_tick = rec.frames.back().tick;
    const int every = std::max(1, int(std::lround(tick_hz / cfg.snapshot_hz)));
    double bytes_down = 0;
    double clock_err_sum = 0;
    uint64_t clock_err_n = 0;
    Pose g;
    std::vector<vec3> truth_pos, truth_delayed, shown_pos;
    std::vector<quat> truth_rot, shown_rot;
    const double render_dt = 1.0 / cfg.render_hz;
    const double t_begin = double(first_tick) / tick_hz, t_end = double(last_tick) / tick_hz;
    uint32_t next_server_tick = first_tick;
    double last_render_est = -1e300;
    int frame_index = 0;
    for (double t = t_begin; t <= t_end + 1e-9; t = t_begin + (++frame_index) * render_dt) {
        const double t_client = t + kClientClockOffset;
        // Server: every tick up to now.
        for (; next_server_tick <= last_tick && double(next_server_tick) / tick_hz <= t + 1e-9; ++next_server_tick) {
            const double ts = double(next_server_tick) / tick_hz;
            // Client datagrams that reached the server by now: acks and pings.
            for (const auto& d : link.up.receive(ts)) {
                const auto p = decode_packet(d);
                if (!p) continue;
                server_received.on_received(p->sequence);
                std::vector<SentPacketLog::Acked> acked;
                server_sent.on_ack(p->ack, p->ack_bits, acked);
                for (const auto& a : acked) builder.on_delivered(meta[a.sequence % meta.size()].first, meta[a.sequence % meta.size()].second);
                if (p->type == MessageType::Ping) {
                    const auto* m = p->message<wire::Ping>();
                    const uint16_t seq = server_seq++;
                    server_sent.on_sent(seq, 0);
                    meta[seq % meta.size()] = {0, {}};
                    auto bytes = build_pong(server_received.header(seq), m->client_time_us(), m->ping_id(), uint64_t(ts * 1e6), next_server_tick);
                    bytes_down += double(bytes.size() + kNetSimHeaderBytes);
                    link.down.send(ts, std::move(bytes));
                }
            }
            if (next_server_tick % uint32_t(every) != 0) continue;
            const auto fit = truth.index.find(next_server_tick);
            if (fit == truth.index.end()) continue;
            std::vector<CharacterSnapshot> now;
            for (const RecordedCharacter& c : rec.frames[fit->second].characters) {
                const uint16_t sk = skeleton_of[c.id];
                now.push_back({c.id, sk, quantize_character(c.pose, h.skeletons[sk], precs[sk], c.epoch)});
            }
            history.add(next_server_tick, now);
            const std::vector<SnapshotPart> parts = builder.build(next_server_tick, now, history, lookup);
            for (size_t i = 0; i < parts.size(); ++i) {
                const uint16_t seq = server_seq++;
                server_sent.on_sent(seq, 1);
                meta[seq % meta.size()] = {parts[i].tick, parts[i].characters};
                auto bytes = build_snapshot(server_received.header(seq), parts[i].tick, uint8_t(i), uint8_t(parts.size()), parts[i].data);
                bytes_down += double(bytes.size() + kNetSimHeaderBytes);
                ++out.snapshot_datagrams;
                link.down.send(ts, std::move(bytes));
            }
        }
        // Client: what arrived by now.
        bool got_snapshot = false;
        std::vector<double> arrival;
        const auto delivered = link.down.receive(t, &arrival);
        for (size_t di = 0; di < delivered.size(); ++di) {
            const auto p = decode_packet(delivered[di]);
            if (!p) continue;
            if (p->type == MessageType::Pong) {
                client_received.on_received(p->sequence);
                const auto* m = p->message<wire::Pong>();
                const double sent = double(m->client_time_us()) * 1e-6;
                const double r = t_client - sent;
                rtt = rtt == 0 ? r : 0.8 * rtt + 0.2 * r;
                const double off = double(m->server_time_us()) * 1e-6 - (sent + 0.5 * r);
                if (!offset_valid || r <= rtt * 1.1) {
                    offset_est = offset_valid ? 0.7 * offset_est + 0.3 * off : off;
                    offset_valid = true;
                }
                continue;
            }
            if (p->type != MessageType::Snapshot) continue;
            const auto* m = p->message<wire::Snapshot>();
            std::vector<DecodedCharacter> decoded;
            const SnapshotError e = decoder.decode(
                m->tick(), std::span<const uint8_t>(m->data()->data(), m->data()->size()),
                [&](uint16_t id) { const auto it = skeleton_of.find(id); return it == skeleton_of.end() ? -1 : int(it->second); },
                lookup, decoded);
            if (e != SnapshotError::None) continue;  // not acknowledged either
            client_received.on_received(p->sequence);
            got_snapshot = true;
            for (const DecodedCharacter& dc : decoded) {
                const uint16_t sk = skeleton_of[dc.id];
                Pose pose(h.skeletons[sk].size());
                dequantize_character(pose, *dc.state, h.skeletons[sk], precs[sk]);
                for (size_t k = 0; k < variants.size(); ++k) {
                    recon[k][dc.id]->add_snapshot(double(m->tick()) / tick_hz, pose, dc.state->epoch);
                    acc[k].news_arrived(dc.id, double(m->tick()) / tick_hz, arrival[di]);
                }
            }
            if (!any_snapshot || m->tick() > newest_tick) {
                newest_tick = m->tick();
                any_snapshot = true;
            }
        }
        // Client: acks (every snapshot datagram, at most 60 Hz) and pings (4 Hz), up the link.
        if ((got_snapshot && t_client - last_ack >= 1.0 / 60.0 - 1e-9) || t_client - last_ack > 0.1) {
            last_ack = t_client;
            link.up.send(t, build_ack(client_received.header(client_seq++), newest_tick, {}));
        }
        if (t_client - last_ping >= 0.25) {
            last_ping = t_client;
            link.up.send(t, build_ping(client_received.header(client_seq++), uint64_t(t_client * 1e6), uint32_t(frame_index)));
        }
        // Render every strategy at the client's estimate of server time, measure against the truth at t.
        if (!any_snapshot || !offset_valid) continue;  // a client renders once its clock is synchronised
        const double est = clock.at(t_client, offset_est);
        const double dt = last_render_est < -1e299 ? render_dt : std::max(0.0, est - last_render_est);
        last_render_est = est;
        clock_err_sum += std::fabs(est - t) * 1000.0;
        ++clock_err_n;
        const double truth_tick = t * tick_hz;
        const uint32_t tick_now = uint32_t(std::lround(truth_tick));
        for (const auto& c : h.characters) {
            const RecordedCharacter* tc = truth.at(tick_now, c.id);
            if (!tc) continue;
            const Skeleton& sk = h.skeletons[c.skeleton];
            const float m = h.metres_per_unit[c.skeleton];
            g.resize(sk.size());
            globals(sk, m, tc->pose, g, truth_pos, truth_rot);
            for (size_t k = 0; k < variants.size(); ++k) {
                CharacterReconstructor& r = *recon[k][c.id];
                if (!r.ready()) continue;
                const Pose& shown = r.render(est, dt);
                const double d = r.display_delay();
                const RecordedCharacter* td = truth.at(uint32_t(std::lround((t - d) * tick_hz)), c.id);
                std::vector<quat> unused;
                if (td) globals(sk, m, td->pose, g, truth_delayed, unused);
                else truth_delayed = truth_pos;
                globals(sk, m, shown, g, shown_pos, shown_rot);
                acc[k].add_frame(c.id, {t, truth_pos, truth_delayed, shown_pos, truth_rot, shown_rot, d, int(r.shown_epoch())});
            }
        }
        if (cfg.progress && frame_index % 600 == 0) cfg.progress((t - t_begin) / std::max(1e-9, t_end - t_begin));
    }
    const double seconds = std::max(1e-9, t_end - t_begin);
    out.bytes_per_s = bytes_down / seconds;
    const BuilderStats& st = builder.stats();
    out.bits_per_joint = st.joints ? double(st.joint_bits) / double(st.joints) : 0.0;
    out.clock_error_ms = clock_err_n ? clock_err_sum / double(clock_err_n) : 0.0;
    out.datagrams_lost = link.down.stats().lost;
    for (size_t k = 0; k < variants.size(); ++k) {
        acc[k].add_bytes(bytes_down, seconds);
        acc[k].add_joint_bits(double(st.joint_bits), double(st.joints));
        out.strategies.push_back({variants[k].strategy, variants[k], acc[k].result(), acc[k].error_series(), acc[k].pop_times()});
    }
    if (!acc.empty()) {
        out.epoch_times_s = acc[0].epoch_times();
        out.blackout_spans_s = acc[0].blackout_spans();
    }
    if (cfg.progress) cfg.progress(1.0);
    return out;
}

}  // namespace ks
