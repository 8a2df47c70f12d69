#include <kinesync/client/stream_client.h>

#include <asio.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "client/src/reconstruct.h"
#include "client/src/render_clock.h"
#include "client/src/session.h"
#include "client/src/skeleton_cache.h"
#include "common/src/net/observed_address.h"
#include "common/src/platform/udp.h"
#include "common/src/netsim/netsim.h"
#include "common/src/util/refusal_text.h"
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/errors.h>

namespace ks {

const char* client_event_name(ClientEventKind k) {
    switch (k) {
        case ClientEventKind::Connected: return "connected";
        case ClientEventKind::Disconnected: return "disconnected";
        case ClientEventKind::CharacterAdded: return "character added";
        case ClientEventKind::CharacterRemoved: return "character removed";
        case ClientEventKind::Teleport: return "teleport";
        case ClientEventKind::Reset: return "reset";
    }
    return "?";
}

namespace {
// Sockets are only used synchronously (non-blocking), so every client can share one context
// that nobody runs: one file descriptor per client, not three.
asio::io_context& shared_io() {
    static asio::io_context io;
    return io;
}
}  // namespace

struct StreamClient::Impl {
    StreamClientConfig cfg;
    asio::ip::udp::socket socket{shared_io()};
    asio::ip::udp::endpoint server;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    // ---- network state, under m (the I/O thread and the game's thread) ----
    std::mutex m;
    ClientSession session;
    std::unique_ptr<NetLink> link;
    // ---- the game's side ----
    struct Entry {
        RemoteCharacter view;
        std::unique_ptr<CharacterReconstructor> recon;
        bool ahead = false;  // its snapshots carry the server's look-ahead: recon runs the strategy's "+ahead" form
    };
    std::map<uint16_t, std::unique_ptr<Entry>> chars;
    std::vector<ClientEvent> events;
    RenderClock clock;
    double last_est = -1e300;
    ClientSession::State last_state = ClientSession::State::Idle;
    bool user_disconnected = true;
    double disconnected_at = -1;
    uint64_t reconnects = 0;
    bool receive_timestamps = false;
    std::optional<SkeletonCache> cache;
    uint64_t cache_offered = 0, cache_refused = 0, cache_save_failures = 0;
    std::string cache_problem;
    double sync_err_sum = 0, render_ns_sum = 0;
    uint64_t sync_err_n = 0, render_n = 0;
    std::array<float, 1024> render_ns_recent{};  // per frame, a ring (render_n % size)
    // ---- the I/O thread ----
    std::thread thread;
    std::atomic<bool> stopping{false};

    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    void send_direct(const std::vector<uint8_t>& d) {
        asio::error_code ec;  // a datagram the socket refuses is lost, as on the network
        socket.send_to(asio::buffer(d), server, 0, ec);
    }
    void send_out(double t) {
        for (auto& d : session.take_outgoing()) {
            if (link) link->up.send(t, std::move(d));
            else send_direct(d);
        }
        if (link)
            for (auto& d : link->up.receive(t)) send_direct(d);
    }
    // Everything due now; caller holds m.
    void pump(double t) {
        send_out(t);
        std::array<uint8_t, 2048> buf;
        const uint32_t server_ip = server.address().to_v4().to_uint();
        TimedDatagram d;
        while (receive_timed(socket.native_handle(), buf.data(), buf.size(), d)) {
            if (d.from_ipv4() != server_ip || d.from_port() != server.port()) continue;  // only the server speaks to us
            const double arrived = std::min(t, now()) - d.age_s;  // when the kernel had it, not when we read it
            if (link) link->down.send(arrived, std::vector<uint8_t>(buf.begin(), buf.begin() + std::ptrdiff_t(d.size)));
            else session.on_datagram(std::span<const uint8_t>(buf.data(), d.size), arrived);
        }
        if (link)
            for (auto& d : link->down.receive(t)) session.on_datagram(d, t);
        session.update(t);
        send_out(t);
    }
    void forget_all() {
        for (const auto& [id, e] : chars) events.push_back({ClientEventKind::CharacterRemoved, id, 0, 0});
        chars.clear();
        last_est = -1e300;
    }
    void track_state(double t);
    void start_session(double t);
    void take_news(double t);
    void offer_cached_skeletons();
    void keep_skeletons();
    void save_skeletons();
    std::vector<KnownSkeleton> read_cache(const SkeletonCache& c);
    void remember(KnownSkeleton k);
    std::vector<KnownSkeleton> offer;  // what the next handshake offers (the game's thread only)
    std::vector<net::ReceivedSkeleton> to_save;  // the game's thread only
    std::vector<net::SkeletonHash> to_touch;
    void cache_problem_once(const std::string& what) {
        if (cache_problem.empty()) cache_problem = what;
    }
    void render(double t);
};

namespace {

void check_field(bool ok, const char* field, double value, const char* rule) {
    detail::check_config_field(ok, "StreamClient", field, value, rule);
}

void check_config(const StreamClientConfig& c) {
    check_field(c.io == IoMode::Pumped || c.io == IoMode::OwnThread, "io", int(c.io), "an IoMode");
    check_field(strategy_name(c.reconstruct.strategy)[0] != '?', "reconstruct.strategy", int(c.reconstruct.strategy), "a Strategy");
    check_field(c.port != 0 || !c.connect_token.empty(), "port", c.port, "1 to 65535 (0 is no server's; with a connect token it is not used)");
    check_field(c.timeout_s > 0 && c.timeout_s <= 3600, "timeout_s", c.timeout_s, "in (0, 3600] seconds");
    check_field(std::isfinite(c.reconnect_after_s), "reconnect_after_s", c.reconnect_after_s, "finite (< 0: never)");
    const ReconstructConfig& r = c.reconstruct;
    check_field(r.interp_delay_s >= 0 && r.interp_delay_s <= 5, "reconstruct.interp_delay_s", r.interp_delay_s, "in [0, 5] seconds");
    check_field(r.extrap_cap_s >= 0 && r.extrap_cap_s <= 5, "reconstruct.extrap_cap_s", r.extrap_cap_s, "in [0, 5] seconds");
    const std::pair<const char*, float> positive[] = {
        {"reconstruct.extrap_decay_halflife_s", r.extrap_decay_halflife_s}, {"reconstruct.deadblend_halflife_s", r.deadblend_halflife_s},
        {"reconstruct.deadblend_blend_s", r.deadblend_blend_s},             {"reconstruct.correction_sod.f", r.correction_sod.f},
        {"reconstruct.correction_accel_max", r.correction_accel_max},       {"reconstruct.root_correction_f", r.root_correction_f},
        {"reconstruct.root_accel_max", r.root_accel_max},                   {"reconstruct.predict_halflife_s", r.predict_halflife_s},
        {"reconstruct.predict_root_halflife_s", r.predict_root_halflife_s}, {"reconstruct.ahead_correction_f", r.ahead_correction_f},
        {"reconstruct.ahead_correction_accel_max", r.ahead_correction_accel_max}, {"reconstruct.ahead_root_accel_max", r.ahead_root_accel_max}};
    for (const auto& [field, v] : positive) check_field(v > 0 && std::isfinite(v), field, v, "finite and > 0");
    check_field(r.correction_sod.zeta >= 0 && std::isfinite(r.correction_sod.zeta), "reconstruct.correction_sod.zeta", r.correction_sod.zeta, "finite and >= 0");
    check_field(r.correction_min_ratio > 0 && r.correction_min_ratio <= 1, "reconstruct.correction_min_ratio", r.correction_min_ratio, "in (0, 1]");
    if (c.viewpoint)
        check_field(std::fabs(c.viewpoint->x) <= 1e6f && std::fabs(c.viewpoint->y) <= 1e6f && std::fabs(c.viewpoint->z) <= 1e6f, "viewpoint",
                    c.viewpoint->x, "finite and within 1e6 m");
    for (const auto& [profile, field] : {std::pair{&c.simulate, "config.simulate"}, std::pair{&c.simulate_up, "config.simulate_up"}}) {
        if (!*profile) continue;
        try {
            validate(**profile);
        } catch (const std::invalid_argument& e) {
            throw Error(Errc::InvalidConfig, std::string("StreamClient: ") + field + ": " + e.what(), field);
        }
    }
    if (c.simulate_up && !c.simulate)
        throw Error(Errc::InvalidConfig, "StreamClient: config.simulate_up is set without config.simulate", "config.simulate_up");
}

}  // namespace

namespace {
// The address and port the server would see this socket send from when no NAT is between: the
// interface the route to the server leaves by (found by connecting a second socket, which sends
// nothing), and the socket's port. Behind a NAT the server sees another and nothing matches.
std::vector<net::ObservedAddress> local_addresses(const asio::ip::udp::socket& socket, const asio::ip::udp::endpoint& server) {
    asio::error_code ec;
    asio::ip::udp::socket probe(shared_io());
    probe.open(server.protocol(), ec);
    if (!ec) probe.connect(server, ec);
    const asio::ip::udp::endpoint route = ec ? asio::ip::udp::endpoint() : probe.local_endpoint(ec);
    const asio::ip::udp::endpoint bound = socket.local_endpoint(ec);
    if (ec || route.address().is_unspecified()) return {};
    return {net::observed_address({route.address(), bound.port()})};
}
}  // namespace

StreamClient::StreamClient(const StreamClientConfig& cfg) : impl_(std::make_unique<Impl>()) {
    check_config(cfg);
    Impl& im = *impl_;
    im.cfg = cfg;
    ClientSessionConfig sc;
    sc.timeout_s = cfg.timeout_s;
    im.session = ClientSession(sc);
    std::string host = cfg.host, port = std::to_string(cfg.port);
    if (!cfg.connect_token.empty()) {
        std::string why;
        if (!im.session.set_connect_token(cfg.connect_token, &why)) throw Error(Errc::InvalidToken, "connect token: " + why, "config.connect_token");
        const std::string& first = im.session.connect_token()->servers.front();  // canonical "addr:port" / "[v6]:port"
        const size_t colon = first.rfind(':');
        host = first.substr(0, colon);
        if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
        port = first.substr(colon + 1);
    }
    asio::ip::udp::resolver resolver(shared_io());
    asio::error_code ec;
    const auto results = resolver.resolve(asio::ip::udp::v4(), host, port, ec);
    if (ec || results.empty())
        throw Error(Errc::Network, "cannot resolve " + host + ":" + port + ": " + (ec ? ec.message() : std::string("no IPv4 address")), "config.host");
    im.server = *results.begin();
    im.socket.open(asio::ip::udp::v4());
    im.socket.bind({asio::ip::address_v4::any(), 0});
    im.socket.non_blocking(true);
    im.session.set_local_addresses(local_addresses(im.socket, im.server));
    im.receive_timestamps = enable_receive_timestamps(im.socket.native_handle());
    if (cfg.simulate) im.link = std::make_unique<NetLink>(*cfg.simulate, cfg.simulate_up ? *cfg.simulate_up : *cfg.simulate, cfg.seed);
    if (!cfg.skeleton_cache_dir.empty()) {
        im.cache.emplace(cfg.skeleton_cache_dir);
        im.offer = im.read_cache(*im.cache);
    }

    if (cfg.viewpoint) im.session.set_viewpoint(*cfg.viewpoint);
    if (cfg.io == IoMode::OwnThread) {
        im.thread = std::thread([&im] {
            while (!im.stopping) {
                // Wake when a datagram arrives, or every 2 ms for timers and the simulated link.
                wait_readable(im.socket.native_handle(), 2);
                std::lock_guard<std::mutex> lock(im.m);
                im.pump(im.now());
            }
        });
    }
}

StreamClient::~StreamClient() {
    disconnect();
    impl_->stopping = true;
    if (impl_->thread.joinable()) impl_->thread.join();
}

void StreamClient::connect() {
    Impl& im = *impl_;
    std::lock_guard<std::mutex> lock(im.m);
    im.track_state(im.now());  // a disconnect no update() has seen yet: its characters go first
    im.user_disconnected = false;
    im.disconnected_at = -1;
    im.start_session(im.now());
}

void StreamClient::Impl::start_session(double t) {
    if (cfg.fetch_token) {
        std::string why;
        DisconnectCode code = DisconnectCode::TokenInvalid;
        try {
            if (!session.set_connect_token(cfg.fetch_token(), &why)) why = "connect token: " + why;
        } catch (const std::exception& e) {
            why = std::string("fetching a connect token: ") + e.what();
            code = DisconnectCode::NoToken;
        }
        if (!why.empty()) {
            session.fail(why, code);
            return;
        }
    }
    offer_cached_skeletons();
    session.connect(t);
    send_out(t);
}

// The cache is read once (here, when it is set) and kept in memory as it changes, so connecting
// never waits on the disk.
std::vector<KnownSkeleton> StreamClient::Impl::read_cache(const SkeletonCache& c) {
    std::vector<std::string> problems;
    std::vector<KnownSkeleton> known = c.load(net::kMaxKnownSkeletons, &problems);
    cache_refused += problems.size();
    if (!problems.empty()) cache_problem_once(problems.front());
    return known;
}

void StreamClient::Impl::offer_cached_skeletons() {
    cache_offered += offer.size();
    session.set_known_skeletons(offer);
}

// Most recently used first, at most what a handshake offers.
void StreamClient::Impl::remember(KnownSkeleton k) {
    std::erase_if(offer, [&](const KnownSkeleton& o) { return o.hash == k.hash; });
    offer.insert(offer.begin(), std::move(k));
    if (offer.size() > net::kMaxKnownSkeletons) offer.resize(net::kMaxKnownSkeletons);
}

// Files are written after update() lets go of the session (save_skeletons), so the I/O thread
// never waits on the disk; only the game's thread touches the cache.
void StreamClient::Impl::keep_skeletons() {
    for (net::ReceivedSkeleton& s : session.take_new_skeletons())
        if (cache) to_save.push_back(std::move(s));
    for (const net::SkeletonHash& h : session.take_used_skeletons())
        if (cache) to_touch.push_back(h);
}

void StreamClient::Impl::save_skeletons() {
    for (net::ReceivedSkeleton& s : std::exchange(to_save, {})) {
        std::string why;
        if (!cache) continue;
        const std::optional<net::SkeletonHash> hash = cache->save(s, &why);
        if (!hash) {
            ++cache_save_failures;
            cache_problem_once(why);
            continue;
        }
        remember({*hash, std::move(s.skeleton), s.metres_per_unit});
    }
    for (const net::SkeletonHash& h : std::exchange(to_touch, {})) {
        if (!cache) continue;
        cache->touch(h);
        const auto it = std::find_if(offer.begin(), offer.end(), [&](const KnownSkeleton& o) { return o.hash == h; });
        if (it != offer.end()) std::rotate(offer.begin(), it, it + 1);
    }
}

void StreamClient::connect(const std::vector<uint8_t>& token) {
    Impl& im = *impl_;
    {
        std::lock_guard<std::mutex> lock(im.m);
        std::string why;
        ClientSession probe;
        if (!probe.set_connect_token(token, &why)) throw Error(Errc::InvalidToken, "connect token: " + why, "token");
        const std::string here = net::canonical_address(im.server.address().to_string() + ":" + std::to_string(im.server.port()));
        const auto& servers = probe.connect_token()->servers;
        if (std::find(servers.begin(), servers.end(), here) == servers.end())
            throw Error(Errc::InvalidToken, "connect token does not name " + here + ", the server this client talks to", "token");
        im.session.set_connect_token(token);
    }
    connect();
}

DisconnectCode StreamClient::disconnect_code() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->session.disconnect_code();
}

std::string StreamClient::disconnect_reason() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->session.disconnect_reason();
}

void StreamClient::disconnect() {
    Impl& im = *impl_;
    std::lock_guard<std::mutex> lock(im.m);
    im.user_disconnected = true;
    const ClientSession::State s = im.session.state();
    if (s == ClientSession::State::Idle || s == ClientSession::State::Disconnected) return;
    im.session.disconnect(im.now());
    // Straight to the server, not through a simulated link: the goodbye is the last thing we send.
    for (auto& d : im.session.take_outgoing()) im.send_direct(d);
}

void StreamClient::set_viewpoint(vec3 metres) {
    if (!(std::fabs(metres.x) <= 1e6f && std::fabs(metres.y) <= 1e6f && std::fabs(metres.z) <= 1e6f))
        throw Error(Errc::InvalidArgument, "set_viewpoint: (" + std::to_string(metres.x) + ", " + std::to_string(metres.y) + ", " +
                                               std::to_string(metres.z) + ") must be finite and within 1e6 m", "metres");
    std::lock_guard<std::mutex> lock(impl_->m);
    impl_->session.set_viewpoint(metres);
}

void StreamClient::set_skeleton_cache(const std::string& dir) {
    std::optional<SkeletonCache> cache;
    if (!dir.empty()) cache.emplace(dir);  // throws before anything changes
    std::vector<KnownSkeleton> offer = cache ? impl_->read_cache(*cache) : std::vector<KnownSkeleton>{};
    std::lock_guard<std::mutex> lock(impl_->m);
    impl_->cache = std::move(cache);
    impl_->offer = std::move(offer);
    impl_->cfg.skeleton_cache_dir = dir;
}

void StreamClient::poll() {
    if (impl_->cfg.io != IoMode::Pumped) return;
    std::lock_guard<std::mutex> lock(impl_->m);
    impl_->pump(impl_->now());
}

void StreamClient::Impl::track_state(double t) {
    const ClientSession::State s = session.state();
    if (s != last_state) {
        if (s == ClientSession::State::Connected) events.push_back({ClientEventKind::Connected, 0, 0, 0});
        if (s == ClientSession::State::Disconnected || s == ClientSession::State::Idle) {
            forget_all();
            events.push_back({ClientEventKind::Disconnected, 0, 0, 0});
            disconnected_at = t;
        }
        last_state = s;
    }
    if (s == ClientSession::State::Disconnected && !user_disconnected && cfg.reconnect_after_s >= 0 &&
        t - disconnected_at >= cfg.reconnect_after_s) {
        // The server went away (or restarted): start over with a fresh handshake and history.
        ++reconnects;
        disconnected_at = t;  // a failed attempt waits as long again
        start_session(t);
        last_state = session.state();
    }
}

void StreamClient::Impl::take_news(double t) {
    for (const net::EventInfo& e : session.take_events()) {
        const auto it = chars.find(e.character_id);
        if (it == chars.end()) continue;  // never shown (or already gone)
        if (e.kind == kinesync::wire::EventKind::Removed) {
            chars.erase(it);
            events.push_back({ClientEventKind::CharacterRemoved, e.character_id, e.epoch, e.tick});
        } else {
            events.push_back({e.kind == kinesync::wire::EventKind::Teleport ? ClientEventKind::Teleport : ClientEventKind::Reset,
                              e.character_id, e.epoch, e.tick});
        }
    }
    for (uint16_t id : session.state() == ClientSession::State::Connected ? session.characters() : std::vector<uint16_t>{}) {
        const int sk = session.skeleton_of(id);
        if (sk < 0 || chars.count(id)) continue;
        const net::ReceivedSkeleton& rs = *session.skeleton(uint16_t(sk));
        auto e = std::make_unique<Entry>();
        e->view.id = id;
        e->view.name = session.character_name(id);
        e->view.skeleton_id = uint16_t(sk);
        e->view.skeleton_name = rs.name;
        e->view.skeleton = rs.skeleton;
        e->view.metres_per_unit = rs.metres_per_unit;
        e->view.local.resize(rs.skeleton.size());
        e->view.global.resize(rs.skeleton.size());
        // The reconstructor keeps a reference to the skeleton: the entry owns both, never moved.
        e->recon = std::make_unique<CharacterReconstructor>(e->view.skeleton, cfg.reconstruct, rs.metres_per_unit);
        e->view.strategy = cfg.reconstruct.strategy;
        chars[id] = std::move(e);
        events.push_back({ClientEventKind::CharacterAdded, id, 0, 0});
    }
    keep_skeletons();
    session.take_received();  // the entries; their whole poses come assembled below
    std::vector<SnapshotAssembler::Ready> ready = session.take_poses();
    for (SnapshotAssembler::Ready& r : ready) {
        const auto it = chars.find(r.id);
        if (it == chars.end()) continue;
        Entry& e = *it->second;
        if (r.pose.size() != int(e.view.skeleton.size())) continue;  // from a skeleton since replaced
        const double t_snap = double(r.tick) / session.tick_hz();
        if (r.ahead && !e.ahead) {
            // The server supplies a look-ahead: the strategy's "+ahead" form, when it has one.
            ReconstructConfig rc = cfg.reconstruct;
            rc.strategy = ahead_form(rc.strategy);
            e.recon = std::make_unique<CharacterReconstructor>(e.view.skeleton, rc, e.view.metres_per_unit);
            e.ahead = true;
            e.view.strategy = rc.strategy;
            e.view.look_ahead = true;
        }
        e.recon->add_snapshot(t_snap + double(r.ahead_ticks) / session.tick_hz(), r.pose, r.epoch, r.plan, t_snap);
        ++e.view.snapshots;
        e.view.newest_tick = std::max(e.view.newest_tick, r.tick);
        // Clock check: estimated server time at arrival minus the snapshot's time should be the
        // one-way delay, about half the round trip.
        const double est = session.server_tick_at(t) / session.tick_hz();
        sync_err_sum += std::fabs((est - t_snap) - 0.5 * session.rtt_ms() / 1000.0) * 1000.0;
        ++sync_err_n;
    }
    session.recycle_poses(std::move(ready));
}

void StreamClient::Impl::render(double t) {
    // The slewing clock once ping/pong has given an estimate (the newest tick before).
    const double est = session.clock_valid() ? clock.at(t, session.clock_offset_s()) : session.server_tick_at(t) / session.tick_hz();
    const double dt = last_est < -1e299 ? 0.0 : std::max(0.0, est - last_est);
    last_est = est;
    const auto c0 = std::chrono::steady_clock::now();
    int n = 0;
    for (auto& [id, e] : chars) {
        if (!e->recon->ready()) continue;
        e->view.local = e->recon->render(est, dt);
        op_fk(e->view.global, e->view.local, e->view.skeleton.parents);
        e->view.epoch = e->recon->shown_epoch();
        e->view.ready = true;
        ++n;
    }
    if (n > 0) {
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - c0).count() / n;
        render_ns_sum += ns;
        render_ns_recent[render_n % render_ns_recent.size()] = float(ns);
        ++render_n;
    }
}

void StreamClient::update() {
    Impl& im = *impl_;
    {
        std::lock_guard<std::mutex> lock(im.m);
        const double t = im.now();
        if (im.cfg.io == IoMode::Pumped) im.pump(t);
        im.track_state(t);
        im.take_news(t);
        im.render(t);
        render_time_ = im.last_est < -1e299 ? 0.0 : im.last_est;
        list_.clear();
        for (const auto& [id, e] : im.chars) list_.push_back(&e->view);
    }
    im.save_skeletons();
}

std::vector<ClientEvent> StreamClient::take_events() { return std::exchange(impl_->events, {}); }

const RemoteCharacter* StreamClient::character(uint16_t id) const {
    const auto it = impl_->chars.find(id);
    return it == impl_->chars.end() ? nullptr : &it->second->view;
}

ClientSession::State StreamClient::state() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->session.state();
}

const char* StreamClient::state_name() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->session.state_name();
}

std::vector<ArrivingCharacter> StreamClient::arriving() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    std::vector<ArrivingCharacter> out;
    for (const ClientSession::Arriving& a : impl_->session.arriving()) out.push_back({a.character, a.skeleton, a.parts_received, a.parts});
    return out;
}

StreamClientStats StreamClient::stats() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    StreamClientStats s;
    s.session = impl_->session.stats();
    s.rtt_ms = impl_->session.rtt_ms();
    s.time_sync_error_ms = impl_->sync_err_n ? impl_->sync_err_sum / double(impl_->sync_err_n) : 0.0;
    s.render_ns_per_character = impl_->render_n ? impl_->render_ns_sum / double(impl_->render_n) : 0.0;
    if (impl_->render_n) {
        std::vector<float> recent(impl_->render_ns_recent.begin(),
                                  impl_->render_ns_recent.begin() + std::min<size_t>(impl_->render_n, impl_->render_ns_recent.size()));
        std::nth_element(recent.begin(), recent.begin() + recent.size() / 2, recent.end());
        s.render_ns_per_character_median = recent[recent.size() / 2];
    }
    s.reconnects = impl_->reconnects;
    s.receive_timestamps = impl_->receive_timestamps;
    s.skeleton_cache_offered = impl_->cache_offered;
    s.skeleton_cache_refused = impl_->cache_refused;
    s.skeleton_cache_save_failures = impl_->cache_save_failures;
    s.skeleton_cache_problem = impl_->cache_problem;
    s.skeleton_error = impl_->session.first_skeleton_error();
    return s;
}

}  // namespace ks
