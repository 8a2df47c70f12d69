#include "programs/testbench/replay.h"

#include <set>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "client/src/character_assembly.h"
#include "client/src/resync_throttle.h"
#include "client/src/render_clock.h"
#include <kinesync/common/anim/ops_fk.h>
#include "common/src/codec/snapshot_codec.h"
#include "server/src/net/rate_control.h"
#include "server/src/net/relevance.h"
#include "server/src/net/snapshot_builder.h"
#include "common/src/net/clock_filter.h"
#include "common/src/net/protocol.h"

namespace ks {

using namespace ks::net;

namespace {

constexpr double kClientClockOffset = 1234.567;  // the client's clock = server clock + this (unknown to it)

// The recorded truth by tick.
class Truth {
public:
    virtual ~Truth() = default;
    // The frame recorded at `tick`, or nullptr when there is none.
    virtual const RecordedFrame* frame(uint32_t tick) = 0;
    // No tick before `tick` will be asked for again.
    virtual void forget_before(uint32_t tick) = 0;
    const RecordedCharacter* at(uint32_t tick, uint16_t id) {
        const RecordedFrame* f = frame(tick);
        if (!f) return nullptr;
        for (const RecordedCharacter& c : f->characters)
            if (c.id == id) return &c;
        return nullptr;
    }
};

// The whole recording in memory (a tick recorded twice: its last frame).
class WholeTruth final : public Truth {
public:
    explicit WholeTruth(const RecordingReadResult& r) : rec_(r) {
        for (size_t i = 0; i < r.frames.size(); ++i) index_[r.frames[i].tick] = i;
    }
    const RecordedFrame* frame(uint32_t tick) override {
        const auto it = index_.find(tick);
        return it == index_.end() ? nullptr : &rec_.frames[it->second];
    }
    void forget_before(uint32_t) override {}

private:
    const RecordingReadResult& rec_;
    std::map<uint32_t, size_t> index_;  // tick -> frame
};

// A window over the file: frames are read as their ticks are asked for and dropped once
// forgotten, so it holds the ticks between the oldest still wanted and the newest asked for (and
// the rest of the chunk being read). The ticks must increase frame after frame (scan_recording
// checked); none after `last_tick` is read.
class StreamTruth final : public Truth {
public:
    StreamTruth(const std::string& path, uint32_t last_tick) : stream_(path), last_tick_(last_tick) {}
    const RecordedFrame* frame(uint32_t tick) override {
        if (tick > last_tick_) return nullptr;  // also a time before 0 s, wrapped around
        if (tick < forgotten_)
            throw std::logic_error("replay: tick " + std::to_string(tick) + " asked for after the ticks before " +
                                   std::to_string(forgotten_) + " were dropped");
        while (!ended_ && (window_.empty() || window_.back().tick < tick)) {
            RecordedFrame f;
            if (!stream_.next(f)) {
                ended_ = true;
                break;
            }
            if (any_read_ && f.tick <= newest_read_)
                throw std::runtime_error(stream_.path() + ": frame " + std::to_string(stream_.frames_read() - 1) + ": tick " +
                                         std::to_string(f.tick) + " after tick " + std::to_string(newest_read_) +
                                         " (the file changed since it was scanned?)");
            any_read_ = true;
            newest_read_ = f.tick;
            window_.push_back(std::move(f));
            most_window_ = std::max(most_window_, window_.size());
            most_held_ = std::max(most_held_, window_.size() + stream_.buffered_frames());
        }
        const auto it = std::lower_bound(window_.begin(), window_.end(), tick,
                                         [](const RecordedFrame& f, uint32_t t) { return f.tick < t; });
        return it != window_.end() && it->tick == tick ? &*it : nullptr;
    }
    void forget_before(uint32_t tick) override {
        forgotten_ = std::max(forgotten_, tick);
        while (!window_.empty() && window_.front().tick < forgotten_) window_.pop_front();
    }
    ReplayStreamStats stats() const { return {stream_.frames_read(), most_window_, most_held_}; }

private:
    RecordingStream stream_;
    uint32_t last_tick_;
    std::deque<RecordedFrame> window_;  // ascending ticks
    uint32_t forgotten_ = 0;            // ticks before this are never asked for again
    uint32_t newest_read_ = 0;
    bool any_read_ = false, ended_ = false;
    size_t most_window_ = 0, most_held_ = 0;
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

// The recording as both ends know it: the truth by tick, each skeleton's precision and which
// character uses which skeleton.
struct Scene {
    const RecordingHeader& h;
    double tick_hz;
    Truth& truth;
    std::vector<SkeletonPrecision> precs;
    std::map<uint16_t, uint16_t> skeleton_of;
    PrecisionLookup lookup;
    // Crowd mode: the viewpoint and the characters nearest to it.
    std::optional<vec3> viewpoint;
    std::set<uint16_t> near;
    int near_count = 8;
    int far_hold_depth = -1;
    bool only_near = false;
    // Look-ahead: the server sends each character's look-ahead instead of its present pose (the
    // "+ahead" strategies' run), its entries carrying the horizon and plan.
    bool send_ahead = false;

    Scene(const RecordingHeader& header, Truth& t) : h(header), tick_hz(header.tick_hz), truth(t) {
        for (size_t s = 0; s < h.skeletons.size(); ++s) precs.push_back(plan_precision(h.skeletons[s], h.metres_per_unit[s]));
        for (const auto& c : h.characters) skeleton_of[c.id] = c.skeleton;
        lookup = [this](uint16_t s) { return s < precs.size() ? &precs[s] : nullptr; };
    }
    Scene(const Scene&) = delete;
    Scene& operator=(const Scene&) = delete;
};

// The server's end of the connection: the client's snapshot builder, packet sequence numbers and
// acks, and what each sent datagram carried (the builder learns what was delivered).
struct Server {
    SnapshotBuilder builder;
    SnapshotHistory history{256};
    SentPacketLog sent;
    AckTracker received;
    uint16_t seq = 0;
    std::vector<std::pair<uint32_t, std::vector<UnitKey>>> meta =
        std::vector<std::pair<uint32_t, std::vector<UnitKey>>>(SentPacketLog::kWindow);
    uint32_t next_tick = 0;   // the next tick to simulate
    double bytes_down = 0;    // every datagram sent to the client, with its IP/UDP header
    uint64_t snapshot_datagrams = 0;
    double envelope_bytes = 0;  // datagram bytes around the snapshot payloads
    RateControl rate;
    bool adapt = true;
    double rate_sum = 0;
    uint64_t rate_n = 0;
    std::vector<std::pair<double, double>> rate_series;

    // The rate as the live server sets it up (its default floor).
    Server(const BuilderConfig& bc, bool adapt_rate)
        : builder(bc), rate(session_rate_config(bc.bandwidth_bps, RateControlConfig{}.floor_bps, adapt_rate)), adapt(adapt_rate) {}
    // A datagram down the link, counted as the live server counts it.
    void send(NetLink& link, double ts, std::vector<uint8_t> bytes, uint16_t sequence, bool snapshot) {
        const size_t wire = bytes.size() + kNetSimHeaderBytes;
        bytes_down += double(wire);
        rate.on_sent(sequence, ts, wire, snapshot);
        if (!snapshot) builder.charge(wire);
        link.down.send(ts, std::move(bytes));
    }
};

// The client's end: the decoder, acks, and the server clock estimated from ping/pong.
struct Client {
    SnapshotDecoder decoder;
    SnapshotAssembler poses;
    ResyncThrottle throttle;
    std::vector<ResyncRequest> resyncs;  // full updates to ask for (sent with the next ack)
    AckTracker received;
    uint16_t seq = 0;
    double last_ack = -1e9, last_ping = -1e9;
    ClockOffsetFilter clock_offset;
    bool any_snapshot = false;
    RenderClock clock;
    uint32_t newest_tick = 0;

    explicit Client(double tick_hz) : decoder{float(tick_hz)}, poses{float(tick_hz)} {}
};

// What is measured: one reconstructor per variant (a strategy with its settings) and character,
// one metrics accumulator per variant, and the scratch poses of the render frames.
struct Evaluation {
    std::vector<ReconstructConfig> variants;
    std::vector<std::map<uint16_t, std::unique_ptr<CharacterReconstructor>>> recon;
    std::vector<FidelityAccumulator> acc, acc_near, acc_rest;  // near/rest: crowd mode only
    std::map<uint16_t, double> newest_snapshot_s;  // per character: the server time of the newest snapshot received
    double last_render_est = -1e300;
    double clock_err_sum = 0;
    uint64_t clock_err_n = 0;
    Pose g;
    std::vector<vec3> truth_pos, truth_delayed, shown_pos;
    std::vector<quat> truth_rot, shown_rot;
    ViewCapture* view = nullptr;
    size_t view_base = 0;
};

// The characters nearest to the viewpoint by their root's mean distance over the recording, its
// frames fed in file order.
class NearestCharacters {
public:
    NearestCharacters(const Scene& scene, vec3 viewpoint) : scene_(scene), viewpoint_(viewpoint) {}
    void add(const RecordedFrame& f) {
        for (const RecordedCharacter& c : f.characters) {
            const float m = scene_.h.metres_per_unit[scene_.skeleton_of.at(c.id)];
            auto& [d, n] = sum_[c.id];
            d += double(length(c.pose.pos[0] * m - viewpoint_));
            ++n;
        }
    }
    // The `count` nearest.
    std::set<uint16_t> nearest(int count) const {
        std::vector<std::pair<double, uint16_t>> by_distance;
        for (const auto& [id, dn] : sum_) by_distance.push_back({dn.first / dn.second, id});
        std::sort(by_distance.begin(), by_distance.end());
        std::set<uint16_t> out;
        for (size_t i = 0; i < by_distance.size() && int(i) < count; ++i) out.insert(by_distance[i].second);
        return out;
    }

private:
    const Scene& scene_;
    vec3 viewpoint_;
    std::map<uint16_t, std::pair<double, int>> sum_;  // id -> (distance sum, frames)
};

BuilderConfig builder_config(const ReplayConfig& cfg, double tick_hz) {
    BuilderConfig bc;
    bc.tick_hz = float(tick_hz);
    bc.snapshot_hz = cfg.snapshot_hz;
    bc.bandwidth_bps = cfg.bandwidth_bps;
    if (cfg.hold_error_m) bc.hold_error_m = *cfg.hold_error_m;
    if (cfg.hold_ahead_error_m) bc.hold_ahead_error_m = *cfg.hold_ahead_error_m;
    bc.max_payload_bytes = std::min<size_t>(1100, max_snapshot_data_bytes());
    bc.datagram_overhead_bytes = kSnapshotHeaderBytes + kIpUdpHeaderBytes;  // as the server counts them (unsealed)
    return bc;
}

void setup_evaluation(Evaluation& ev, const ReplayConfig& cfg, const RecordingHeader& h) {
    ev.variants = cfg.variants;
    if (ev.variants.empty())
        for (Strategy st : cfg.strategies) {
            ev.variants.push_back(cfg.reconstruct);
            ev.variants.back().strategy = st;
        }
    ev.recon.resize(ev.variants.size());
    ev.view = cfg.view;
    ev.view_base = cfg.view_stream_base;
    FidelityConfig fc;
    fc.render_hz = cfg.render_hz;
    for (size_t k = 0; k < ev.variants.size(); ++k) ev.acc.emplace_back(fc);
    if (cfg.viewpoint_m)
        for (size_t k = 0; k < ev.variants.size(); ++k) ev.acc_near.emplace_back(fc), ev.acc_rest.emplace_back(fc);
    for (size_t k = 0; k < ev.variants.size(); ++k) {
        const ReconstructConfig& rc = ev.variants[k];
        for (const auto& c : h.characters) ev.recon[k][c.id] = std::make_unique<CharacterReconstructor>(h.skeletons[c.skeleton], rc, h.metres_per_unit[c.skeleton]);
    }
}

// Epoch changes (teleports and resets): the truth jumps at T; blackout until the news arrives.
std::vector<std::pair<uint16_t, EpochMark>> epoch_changes(const RecordingReadResult& rec, Scene& scene) {
    const RecordingHeader& h = scene.h;
    std::vector<std::pair<uint16_t, EpochMark>> out;
    for (size_t i = 1; i < rec.frames.size(); ++i)
        for (const RecordedEvent& e : rec.frames[i].events) {
            if (e.kind > 1) continue;
            const RecordedCharacter* before = scene.truth.at(rec.frames[i - 1].tick, e.character);
            const RecordedCharacter* after = scene.truth.at(rec.frames[i].tick, e.character);
            if (!before || !after) continue;
            const float m = h.metres_per_unit[scene.skeleton_of[e.character]];
            out.push_back({e.character, EpochMark{double(e.tick) / scene.tick_hz, before->pose.pos[0] * m, after->pose.pos[0] * m,
                                                  e.kind == 0 ? EpochKind::Teleport : EpochKind::Reset, int(after->epoch)}});
        }
    return out;
}

void mark_epoch_changes(Evaluation& ev, const Scene& scene, const std::vector<std::pair<uint16_t, EpochMark>>& changes) {
    for (const auto& [character, mark] : changes) {
        for (auto& a : ev.acc) a.add_epoch_change(character, mark);
        for (auto& a : scene.near.count(character) ? ev.acc_near : ev.acc_rest) a.add_epoch_change(character, mark);
    }
}

// Server: the client datagrams that reached it by `ts` (acks and pings); pings are answered.
void server_receive(Server& s, NetLink& link, double ts) {
    std::vector<double> arrived;  // each datagram's arrival (the live server has the kernel's timestamps)
    const auto datagrams = link.up.receive(ts, &arrived);
    for (size_t i = 0; i < datagrams.size(); ++i) {
        const auto& d = datagrams[i];
        const auto p = decode_packet(d);
        if (!p) continue;
        s.received.on_received(p->sequence);
        std::vector<SentPacketLog::Acked> acked;
        s.sent.on_ack(p->ack, p->ack_bits, acked);
        for (const auto& a : acked) {
            s.builder.on_delivered(s.meta[a.sequence % s.meta.size()].first, s.meta[a.sequence % s.meta.size()].second);
            s.rate.on_acked(a.sequence, arrived[i], a.sequence == p->ack);
        }
        if (p->type == MessageType::Resync) {
            const auto* m = p->message<wire::Resync>();
            if (m->tick() <= s.next_tick) s.builder.resync(m->character_id(), m->first_joint(), m->tick());
        }
        if (p->type == MessageType::Ping) {
            const auto* m = p->message<wire::Ping>();
            const uint16_t seq = s.seq++;
            s.sent.on_sent(seq, 0);
            s.meta[seq % s.meta.size()] = {0, {}};
            s.send(link, ts, build_pong(s.received.header(seq), m->client_time_us(), m->ping_id(), uint64_t(ts * 1e6), s.next_tick), seq, false);
        }
    }
}

// Server: the snapshot of tick s.next_tick (when it was recorded), as datagrams down the link.
void server_send_snapshot(Server& s, Scene& scene, NetLink& link, double ts) {
    const RecordingHeader& h = scene.h;
    const RecordedFrame* frame = scene.truth.frame(s.next_tick);
    if (!frame) return;
    std::vector<CharacterSnapshot> now;
    std::vector<vec3> roots_m;
    for (const RecordedCharacter& c : frame->characters) {
        if (scene.only_near && !scene.near.count(c.id)) continue;
        const uint16_t sk = scene.skeleton_of[c.id];
        const bool ahead = scene.send_ahead && c.ahead_s > 0.0f;
        now.push_back({c.id, sk, quantize_character(ahead ? c.ahead : c.pose, h.skeletons[sk], scene.precs[sk], c.epoch)});
        QCharacter& q = now.back().state;
        q.ahead = scene.send_ahead;
        q.ahead_ticks = ahead ? uint16_t(std::lround(double(c.ahead_s) * scene.tick_hz)) : 0;
        q.plan = scene.send_ahead ? c.ahead_plan : 0;
        roots_m.push_back(c.pose.pos[0] * h.metres_per_unit[sk]);
    }
    s.history.add(s.next_tick, now);
    std::function<float(uint16_t)> relevance;
    std::map<uint16_t, float> priority;
    if (scene.viewpoint) {
        RelevanceConfig rc;
        rc.near_count = scene.near_count;
        std::vector<bool> near(now.size());
        for (size_t i = 0; i < now.size(); ++i) near[i] = scene.near.count(now[i].id) > 0;
        const std::vector<float> p = relevance_priorities(roots_m, *scene.viewpoint, rc, &near);
        for (size_t i = 0; i < now.size(); ++i) priority[now[i].id] = p[i];
        relevance = [&priority](uint16_t id) { return priority[id]; };
    }
    std::function<int(uint16_t)> hold;
    if (scene.viewpoint && scene.far_hold_depth >= 0)
        hold = [&scene](uint16_t id) { return scene.near.count(id) ? -1 : scene.far_hold_depth; };
    const std::vector<SnapshotPart> parts = s.builder.build(s.next_tick, now, s.history, scene.lookup, relevance, nullptr, hold);
    for (size_t i = 0; i < parts.size(); ++i) {
        const uint16_t seq = s.seq++;
        s.sent.on_sent(seq, 1);
        s.meta[seq % s.meta.size()] = {parts[i].tick, parts[i].units};
        auto bytes = build_snapshot(s.received.header(seq), parts[i].tick, uint8_t(i), uint8_t(parts.size()), parts[i].data);
        s.envelope_bytes += double(bytes.size() - parts[i].data.size());
        ++s.snapshot_datagrams;
        s.send(link, ts, std::move(bytes), seq, true);
    }
}

// Server: every tick up to `t` (a snapshot every `every` ticks).
void run_server_until(Server& s, Scene& scene, NetLink& link, double t, int every, uint32_t last_tick) {
    for (; s.next_tick <= last_tick && double(s.next_tick) / scene.tick_hz <= t + 1e-9; ++s.next_tick) {
        const double ts = double(s.next_tick) / scene.tick_hz;
        server_receive(s, link, ts);
        if (s.adapt) {
            s.rate.update(ts);
            s.builder.set_bandwidth(float(s.rate.rate_bps()));
        }
        if (s.rate_series.empty() || ts - s.rate_series.back().first >= 0.1 - 1e-9) s.rate_series.push_back({ts, s.rate.rate_bps()});
        s.rate_sum += s.rate.rate_bps();
        ++s.rate_n;
        if (s.next_tick % uint32_t(every) != 0) continue;
        server_send_snapshot(s, scene, link, ts);
    }
}

// Client: a pong updates the round-trip time and the server clock offset estimate.
void client_on_pong(Client& c, const DecodedPacket& p, double t_client) {
    c.received.on_received(p.sequence);
    const auto* m = p.message<wire::Pong>();
    const double sent = double(m->client_time_us()) * 1e-6;
    const double r = t_client - sent;
    c.clock_offset.add(t_client, r, double(m->server_time_us()) * 1e-6 - (sent + 0.5 * r));
}

// Client: a snapshot datagram that arrived at `arrival`; its characters go to every variant's
// reconstructor. Returns false when it does not decode (it is not acknowledged either).
bool client_on_snapshot(Client& c, Scene& scene, Evaluation& ev, const DecodedPacket& p, double arrival) {
    const RecordingHeader& h = scene.h;
    const DecodedPacket::SnapshotView m = p.snapshot();
    std::vector<DecodedCharacter> decoded;
    std::vector<RefusedCharacter> refused;
    const SnapshotError e = c.decoder.decode(
        m.tick, m.data,
        [&](uint16_t id) { const auto it = scene.skeleton_of.find(id); return it == scene.skeleton_of.end() ? -1 : int(it->second); },
        scene.lookup, decoded, &refused);
    if (is_framing_error(e)) return false;
    c.received.on_received(p.sequence);
    for (const ResyncRequest& r : c.throttle.requests(refused, m.tick, arrival)) c.resyncs.push_back(r);
    if (ev.view && ev.view_base == 0) ev.view->add_snapshot(double(m.tick) / scene.tick_hz, arrival);
    c.poses.begin_datagram(m.tick, m.part, m.part_count);
    for (const DecodedCharacter& dc : decoded) {
        const uint16_t sk = scene.skeleton_of[dc.id];
        c.poses.add(dc.id, m.tick, *dc.state, dc.joints, h.skeletons[sk], scene.precs[sk]);
    }
    c.poses.end_datagram(m.tick);
    for (SnapshotAssembler::Ready& r : c.poses.take_ready()) {
        const double t_tick = double(r.tick) / scene.tick_hz;
        const auto [newest, fresh] = ev.newest_snapshot_s.emplace(r.id, t_tick);
        if (!fresh) newest->second = std::max(newest->second, t_tick);
        for (size_t k = 0; k < ev.variants.size(); ++k) {
            ev.recon[k][r.id]->add_snapshot(t_tick + double(r.ahead_ticks) / scene.tick_hz, r.pose, r.epoch, r.plan, t_tick);
            ev.acc[k].news_arrived(r.id, double(r.tick) / scene.tick_hz, arrival);
        }
    }
    if (!c.any_snapshot || m.tick > c.newest_tick) {
        c.newest_tick = m.tick;
        c.any_snapshot = true;
    }
    return true;
}

// Client: what arrived by `t`. Returns whether a snapshot datagram was among it.
bool client_receive(Client& c, Scene& scene, Evaluation& ev, NetLink& link, double t, double t_client) {
    bool got_snapshot = false;
    std::vector<double> arrival;
    const auto delivered = link.down.receive(t, &arrival);
    for (size_t di = 0; di < delivered.size(); ++di) {
        const auto p = decode_packet(delivered[di]);
        if (!p) continue;
        if (p->type == MessageType::Pong) {
            client_on_pong(c, *p, t_client);
            continue;
        }
        if (p->type != MessageType::Snapshot) continue;
        if (client_on_snapshot(c, scene, ev, *p, arrival[di])) got_snapshot = true;
    }
    return got_snapshot;
}

// Client: acks (every snapshot datagram, at most 60 Hz) and pings (4 Hz), up the link.
void client_send(Client& c, NetLink& link, double t, double t_client, bool got_snapshot, int frame_index) {
    if ((got_snapshot && t_client - c.last_ack >= 1.0 / 60.0 - 1e-9) || t_client - c.last_ack > 0.1) {
        c.last_ack = t_client;
        link.up.send(t, build_ack(c.received.header(c.seq++), c.newest_tick, {}));
    }
    for (const ResyncRequest& r : c.resyncs) link.up.send(t, build_resync(c.received.header(c.seq++), r.character, r.first_joint, r.tick));
    c.resyncs.clear();
    if (t_client - c.last_ping >= 0.25) {
        c.last_ping = t_client;
        link.up.send(t, build_ping(c.received.header(c.seq++), uint64_t(t_client * 1e6), uint32_t(frame_index)));
    }
}

// Render every variant at the client's estimate of server time, measure against the truth at t.
void render_and_measure(Evaluation& ev, Client& c, Scene& scene, double t, double t_client, double render_dt) {
    const RecordingHeader& h = scene.h;
    const double tick_hz = scene.tick_hz;
    const double est = c.clock.at(t_client, c.clock_offset.offset_s());
    const double dt = ev.last_render_est < -1e299 ? render_dt : std::max(0.0, est - ev.last_render_est);
    ev.last_render_est = est;
    ev.clock_err_sum += std::fabs(est - t) * 1000.0;
    ++ev.clock_err_n;
    const double truth_tick = t * tick_hz;
    const uint32_t tick_now = uint32_t(std::lround(truth_tick));
    const bool view = ev.view && ev.view->begin_frame(t);
    for (size_t ci = 0; ci < h.characters.size(); ++ci) {
        const auto& ch = h.characters[ci];
        const RecordedCharacter* tc = scene.truth.at(tick_now, ch.id);
        if (!tc) continue;
        const Skeleton& sk = h.skeletons[ch.skeleton];
        const float m = h.metres_per_unit[ch.skeleton];
        ev.g.resize(sk.size());
        globals(sk, m, tc->pose, ev.g, ev.truth_pos, ev.truth_rot);
        if (view && ev.view_base == 0) ev.view->add(0, ci, ev.truth_pos, ev.truth_rot, 0.0f);
        for (size_t k = 0; k < ev.variants.size(); ++k) {
            CharacterReconstructor& r = *ev.recon[k][ch.id];
            if (!r.ready()) continue;
            const Pose& shown = r.render(est, dt);
            const double d = r.display_delay();
            const RecordedCharacter* td = scene.truth.at(uint32_t(std::lround((t - d) * tick_hz)), ch.id);
            std::vector<quat> unused;
            if (td) globals(sk, m, td->pose, ev.g, ev.truth_delayed, unused);
            else ev.truth_delayed = ev.truth_pos;
            globals(sk, m, shown, ev.g, ev.shown_pos, ev.shown_rot);
            if (view) {
                double sum = 0;
                for (size_t j = 0; j < ev.shown_pos.size(); ++j) sum += double(length(ev.shown_pos[j] - ev.truth_pos[j]));
                ev.view->add(ev.view_base + k + 1, ci, ev.shown_pos, ev.shown_rot, float(100.0 * sum / double(std::max<size_t>(1, ev.shown_pos.size()))));
            }
            const FidelityFrame frame{t, ev.truth_pos, ev.truth_delayed, ev.shown_pos, ev.truth_rot, ev.shown_rot, d, int(r.shown_epoch()),
                                      t - ev.newest_snapshot_s[ch.id]};
            ev.acc[k].add_frame(ch.id, frame);
            if (!ev.acc_near.empty()) (scene.near.count(ch.id) ? ev.acc_near : ev.acc_rest)[k].add_frame(ch.id, frame);
        }
    }
}

// The totals over `seconds` of recording, and every variant's metrics.
void collect_results(ReplayResult& out, Evaluation& ev, const Server& s, const NetLink& link, double seconds,
                     const std::set<uint16_t>& near) {
    out.snapshot_datagrams = s.snapshot_datagrams;
    out.bytes_per_s = s.bytes_down / seconds;
    const BuilderStats& st = s.builder.stats();
    out.bits_per_joint = st.joints ? double(st.joint_bits) / double(st.joints) : 0.0;
    out.payload_bytes_per_character = st.characters_sent ? double(st.payload_bytes) / double(st.characters_sent) : 0.0;
    out.envelope_bytes_per_datagram = s.snapshot_datagrams ? s.envelope_bytes / double(s.snapshot_datagrams) : 0.0;
    out.clock_error_ms = ev.clock_err_n ? ev.clock_err_sum / double(ev.clock_err_n) : 0.0;
    const NetworkSimulator::Stats& down = link.down.stats();
    out.datagrams_lost = down.lost;
    PathReport& path = out.path;
    path.queue_dropped = down.queue_dropped;
    path.delivered_bytes_per_s = double(down.bytes_delivered) / seconds;
    path.delay_mean_ms = down.delay.mean_ms();
    path.delay_p95_ms = down.delay.percentile_ms(95);
    path.queue_wait_mean_ms = down.queue_wait.mean_ms();
    path.queue_wait_p95_ms = down.queue_wait.percentile_ms(95);
    path.rate_mean_bps = s.rate_n ? s.rate_sum / double(s.rate_n) : 0.0;
    path.rate_last_bps = s.rate.rate_bps();
    const auto& ch = s.rate.changes();
    path.rate_lowered_delay = ch[size_t(RateChange::Delay)];
    path.rate_lowered_loss = ch[size_t(RateChange::Loss)];
    path.rate_silences = ch[size_t(RateChange::Silence)];
    path.rate_recovered = ch[size_t(RateChange::Recovered)];
    path.rate_series = s.rate_series;
    for (size_t k = 0; k < ev.variants.size(); ++k) {
        ev.acc[k].add_bytes(s.bytes_down, seconds);
        ev.acc[k].add_joint_bits(double(st.joint_bits), double(st.joints));
        out.strategies.push_back({ev.variants[k].strategy, ev.variants[k], ev.acc[k].result(), ev.acc[k].error_series(), ev.acc[k].pop_times(),
                                  ev.acc[k].pop_characters(), {}});
        if (!ev.acc_near.empty())
            out.strategies.back().crowd = CrowdResult{std::vector<uint16_t>(near.begin(), near.end()), ev.acc_near[k].result(), ev.acc_rest[k].result()};
    }
    if (!ev.acc.empty()) {
        out.epoch_times_s = ev.acc[0].epoch_times();
        out.blackout_spans_s = ev.acc[0].blackout_spans();
    }
}

// The replay of the recording `scene.truth` holds, its ticks from first_tick to last_tick.
ReplayResult replay(Scene& scene, uint32_t first_tick, uint32_t last_tick,
                    const std::vector<std::pair<uint16_t, EpochMark>>& changes, const ReplayConfig& cfg) {
    ReplayResult out;
    NetLink link(cfg.profile, cfg.up_profile ? *cfg.up_profile : cfg.profile, cfg.seed);
    Server server(builder_config(cfg, scene.tick_hz), cfg.adapt_rate);
    Client client(scene.tick_hz);
    Evaluation ev;
    setup_evaluation(ev, cfg, scene.h);
    mark_epoch_changes(ev, scene, changes);
    // A render frame at t asks for the truth at t and at t less each display delay, the server
    // for its next tick: the ticks before all of those are dropped as t goes on (none when a delay
    // is not finite).
    double look_back = 0;
    for (const auto& by_id : ev.recon)
        for (const auto& [id, r] : by_id) {
            const double d = r->display_delay();
            look_back = std::isfinite(d) ? std::max(look_back, d) : std::numeric_limits<double>::infinity();
        }

    const int every = std::max(1, int(std::lround(scene.tick_hz / cfg.snapshot_hz)));
    const double render_dt = 1.0 / cfg.render_hz;
    const double t_begin = double(first_tick) / scene.tick_hz, t_end = double(last_tick) / scene.tick_hz;
    server.next_tick = first_tick;
    int frame_index = 0;
    for (double t = t_begin; t <= t_end + 1e-9; t = t_begin + (++frame_index) * render_dt) {
        if (std::isfinite(look_back)) {
            const double oldest = std::floor((t - look_back) * scene.tick_hz) - 1.0;  // below any lround() of the lookups
            scene.truth.forget_before(oldest <= 0 ? 0 : uint32_t(std::min(oldest, double(server.next_tick))));
        }
        const double t_client = t + kClientClockOffset;
        run_server_until(server, scene, link, t, every, last_tick);
        const bool got_snapshot = client_receive(client, scene, ev, link, t, t_client);
        client_send(client, link, t, t_client, got_snapshot, frame_index);
        if (!client.any_snapshot || !client.clock_offset.valid()) continue;  // a client renders once its clock is synchronised
        render_and_measure(ev, client, scene, t, t_client, render_dt);
        if (cfg.progress && frame_index % 600 == 0) cfg.progress((t - t_begin) / std::max(1e-9, t_end - t_begin));
    }
    collect_results(out, ev, server, link, std::max(1e-9, t_end - t_begin), scene.near);
    if (cfg.progress) cfg.progress(1.0);
    return out;
}

// The variants of cfg (its strategies when it lists none) that do, or do not, use a look-ahead.
ReplayConfig with_variants(const ReplayConfig& cfg, bool ahead) {
    ReplayConfig out = cfg;
    out.variants.clear();
    std::vector<ReconstructConfig> all = cfg.variants;
    if (all.empty())
        for (Strategy st : cfg.strategies) {
            all.push_back(cfg.reconstruct);
            all.back().strategy = st;
        }
    for (const ReconstructConfig& v : all)
        if (uses_look_ahead(v.strategy) == ahead) out.variants.push_back(v);
    return out;
}

// Runs the present strategies on one network run and the "+ahead" ones on another (their server
// sends the look-ahead), with the same network seed; `run(cfg, ahead)` makes one run.
ReplayResult replay_both(const ReplayConfig& cfg, const std::function<ReplayResult(const ReplayConfig&, bool)>& run) {
    const ReplayConfig present = with_variants(cfg, false), ahead = with_variants(cfg, true);
    if (ahead.variants.empty()) return run(present, false);
    if (present.variants.empty()) {
        ReplayResult r = run(ahead, true);
        r.ahead_bytes_per_s = r.bytes_per_s;
        r.ahead_path = r.path;
        return r;
    }
    ReplayResult out = run(present, false);
    ReplayConfig second = ahead;
    if (second.view) {  // the same frames again, into the streams after the present ones
        second.view->begin_second_pass();
        second.view_stream_base = present.variants.size();
    }
    ReplayResult r = run(second, true);
    out.ahead_bytes_per_s = r.bytes_per_s;
    out.ahead_path = r.path;
    out.strategies.insert(out.strategies.end(), r.strategies.begin(), r.strategies.end());
    return out;
}

void setup_crowd(Scene& scene, const ReplayConfig& cfg) {
    scene.viewpoint = cfg.viewpoint_m;
    scene.only_near = cfg.only_near;
    scene.near_count = cfg.crowd_near;
    scene.far_hold_depth = cfg.far_hold_depth;
}

}  // namespace

ReplayResult run_replay(const RecordingReadResult& rec, const ReplayConfig& cfg) {
    if (rec.frames.empty()) return {};
    return replay_both(cfg, [&](const ReplayConfig& c, bool ahead) {
        WholeTruth truth(rec);
        Scene scene(rec.header, truth);
        scene.send_ahead = ahead;
        if (c.viewpoint_m) {
            setup_crowd(scene, c);
            NearestCharacters nearest(scene, *c.viewpoint_m);
            for (const RecordedFrame& f : rec.frames) nearest.add(f);
            scene.near = nearest.nearest(c.crowd_near);
        }
        return replay(scene, rec.frames.front().tick, rec.frames.back().tick, epoch_changes(rec, scene), c);
    });
}

RecordingScan scan_recording(const std::string& path) {
    RecordingStream stream(path);
    RecordingScan scan;
    scan.path = path;
    scan.header = stream.header();
    const RecordingHeader& h = scan.header;
    std::map<uint16_t, uint16_t> skeleton_of;
    for (const auto& c : h.characters) skeleton_of[c.id] = c.skeleton;
    auto character_in = [](const RecordedFrame& f, uint16_t id) -> const RecordedCharacter* {
        for (const RecordedCharacter& c : f.characters)
            if (c.id == id) return &c;
        return nullptr;
    };
    // Each epoch change as run_replay(read_recording(path)) finds it: the character's root in the
    // frame before the event's and in the event's (ticks that increase: the frames of those ticks).
    RecordedFrame prev, f;
    while (stream.next(f)) {
        if (f.dropped_before) scan.holes.push_back({f.tick, f.dropped_before});
        for (const RecordedCharacter& c : f.characters) scan.has_look_ahead |= c.ahead_s > 0.0f;
        if (scan.frames == 0) scan.first_tick = f.tick;
        else if (f.tick <= scan.last_tick) scan.ticks_increase = false;
        if (scan.frames > 0)
            for (const RecordedEvent& e : f.events) {
                if (e.kind > 1) continue;
                const RecordedCharacter* before = character_in(prev, e.character);
                const RecordedCharacter* after = character_in(f, e.character);
                if (!before || !after) continue;
                const float m = h.metres_per_unit[skeleton_of[e.character]];
                scan.epoch_changes.push_back({e.character, EpochMark{double(e.tick) / double(h.tick_hz), before->pose.pos[0] * m,
                                                                     after->pose.pos[0] * m,
                                                                     e.kind == 0 ? EpochKind::Teleport : EpochKind::Reset, int(after->epoch)}});
            }
        scan.last_tick = f.tick;
        ++scan.frames;
        std::swap(prev, f);
    }
    scan.chunks = stream.chunks();
    scan.truncated = stream.truncated();
    scan.warning = stream.warning();
    return scan;
}

ReplayResult run_replay(const RecordingScan& scan, const ReplayConfig& cfg, ReplayStreamStats* stats) {
    if (stats) *stats = {};
    if (!scan.ticks_increase) return run_replay(read_recording(scan.path), cfg);
    if (scan.frames == 0) return {};
    return replay_both(cfg, [&](const ReplayConfig& c, bool ahead) {
        StreamTruth truth(scan.path, scan.last_tick);
        Scene scene(scan.header, truth);
        scene.send_ahead = ahead;
        if (c.viewpoint_m) {
            setup_crowd(scene, c);
            NearestCharacters nearest(scene, *c.viewpoint_m);
            RecordingStream stream(scan.path);
            RecordedFrame f;
            for (size_t i = 0; i < scan.frames && stream.next(f); ++i) nearest.add(f);
            scene.near = nearest.nearest(c.crowd_near);
        }
        ReplayResult out = replay(scene, scan.first_tick, scan.last_tick, scan.epoch_changes, c);
        if (stats && !ahead) *stats = truth.stats();
        return out;
    });
}

}  // namespace ks
