#include "client/bot.h"

#include <chrono>

namespace ks {

Bot::Bot(asio::io_context& io, const BotConfig& cfg) : cfg_(cfg), socket_(io) {
    asio::ip::udp::resolver resolver(io);
    server_ = *resolver.resolve(asio::ip::udp::v4(), cfg.host, std::to_string(cfg.port)).begin();
    socket_.open(asio::ip::udp::v4());
    socket_.bind({asio::ip::address_v4::any(), 0});
    socket_.non_blocking(true);
    if (cfg.profile) link_ = std::make_unique<NetLink>(*cfg.profile, cfg.seed);
    ClientSessionConfig sc;
    sc.salt = cfg.seed * 0x9E3779B97F4A7C15ull + 17;
    session_ = ClientSession(sc);
}

void Bot::start(double now_s) {
    started_ = now_s;
    session_.connect(now_s);
}

const Pose* Bot::displayed(uint16_t character) const {
    const auto it = recon_.find(character);
    return it == recon_.end() || !it->second->ready() ? nullptr : &it->second->displayed();
}

Bot::~Bot() { stop(last_poll_); }

void Bot::stop(double now_s) {
    if (stopped_) return;
    stopped_ = true;
    if (session_.state() == ClientSession::State::Idle || session_.state() == ClientSession::State::Disconnected) return;
    session_.disconnect(now_s);
    for (auto& d : session_.take_outgoing()) {
        asio::error_code ec;
        socket_.send_to(asio::buffer(d), server_, 0, ec);
    }
}

void Bot::poll(double now_s) {
    if (stopped_) return;
    last_poll_ = now_s;
    // Outgoing: through the simulated uplink, or straight out.
    for (auto& d : session_.take_outgoing()) {
        if (link_) link_->up.send(now_s, std::move(d));
        else {
            asio::error_code ec;
            socket_.send_to(asio::buffer(d), server_, 0, ec);
        }
    }
    if (link_)
        for (auto& d : link_->up.receive(now_s)) {
            asio::error_code ec;
            socket_.send_to(asio::buffer(d), server_, 0, ec);
        }
    // Incoming: from the socket, through the simulated downlink.
    std::array<uint8_t, 2048> buf;
    for (;;) {
        asio::ip::udp::endpoint from;
        asio::error_code ec;
        const size_t n = socket_.receive_from(asio::buffer(buf), from, 0, ec);
        if (ec) break;
        std::vector<uint8_t> d(buf.begin(), buf.begin() + std::ptrdiff_t(n));
        if (link_) link_->down.send(now_s, std::move(d));
        else session_.on_datagram(d, now_s);
    }
    if (link_)
        for (auto& d : link_->down.receive(now_s)) session_.on_datagram(d, now_s);
    session_.update(now_s);
    on_state_change(now_s);

    // Decoded states into the reconstructors.
    for (const ReceivedCharacterState& r : session_.take_received()) {
        const int sk = session_.skeleton_of(r.id);
        if (sk < 0) continue;
        if (!skeletons_.count(r.id)) skeletons_[r.id] = session_.skeleton(uint16_t(sk))->skeleton;
        auto& rc = recon_[r.id];
        if (!rc) rc = std::make_unique<CharacterReconstructor>(skeletons_[r.id], cfg_.reconstruct,
                                                          session_.skeleton(uint16_t(sk))->metres_per_unit);
        Pose pose(skeletons_[r.id].size());
        dequantize_character(pose, *r.state, skeletons_[r.id], *session_.precision(uint16_t(sk)));
        const double t_snap = double(r.tick) / session_.tick_hz();
        rc->add_snapshot(t_snap, pose, r.state->epoch);
        // Sync error proxy: estimated server time at arrival minus the snapshot's time should be
        // the one-way delay, about half the round trip.
        const double est = session_.server_tick_at(now_s) / session_.tick_hz();
        sync_err_sum_ += std::fabs((est - t_snap) - 0.5 * session_.rtt_ms() / 1000.0) * 1000.0;
        ++sync_err_n_;
    }
    session_.take_events();
    // Render at render_hz.
    if (now_s - last_render_ >= 1.0 / cfg_.render_hz) {
        last_render_ = now_s;
        // Render on the slewing clock once ping/pong has given an estimate (the newest tick before).
        const double est = session_.clock_valid() ? render_clock_.at(now_s, session_.clock_offset_s())
                                                  : session_.server_tick_at(now_s) / session_.tick_hz();
        const double dt = last_est_ < -1e299 ? 1.0 / cfg_.render_hz : std::max(0.0, est - last_est_);
        last_est_ = est;
        const auto t0 = std::chrono::steady_clock::now();
        int n = 0;
        for (auto& [id, rc] : recon_)
            if (rc->ready()) {
                rc->render(est, dt);
                ++n;
            }
        if (n > 0) {
            recon_ns_ += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
            ++recon_n_;
        }
    }
}

void Bot::on_state_change(double now_s) {
    if (session_.state() != ClientSession::State::Disconnected) {
        disconnected_at_ = -1;
        return;
    }
    if (disconnected_at_ < 0) disconnected_at_ = now_s;
    if (now_s - disconnected_at_ >= cfg_.reconnect_after_s) {
        // The server went away (or restarted): start over with a fresh handshake and history.
        ++reconnects_;
        recon_.clear();
        skeletons_.clear();
        session_.connect(now_s);
        disconnected_at_ = -1;
    }
}

BotReport Bot::report(double now_s) const {
    BotReport r;
    const ClientSessionStats& st = session_.stats();
    r.snapshots_received = st.snapshots_received;
    r.snapshots_lost = st.snapshots_lost;
    r.bytes_per_s = double(st.bytes_in + 28 * st.datagrams_in) / std::max(1e-9, now_s - started_);
    r.rtt_ms = session_.rtt_ms();
    r.time_sync_err_ms = sync_err_n_ ? sync_err_sum_ / double(sync_err_n_) : 0.0;
    r.reconstruct_ns_per_character = recon_n_ ? recon_ns_ / double(recon_n_) : 0.0;
    r.reconnects = reconnects_;
    r.malformed = st.malformed;
    r.state = session_.state_name();
    return r;
}

}  // namespace ks
