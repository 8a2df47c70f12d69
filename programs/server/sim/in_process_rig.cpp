#include "programs/server/sim/in_process_rig.h"

#include <algorithm>
#include <chrono>

#include "common/src/net/protocol.h"

namespace ks {

namespace {

WorldConfig world_config(int characters) {
    WorldConfig wc;
    wc.characters = characters;
    wc.controller.teleport_every_s = 10.0f;
    return wc;
}

}  // namespace

InProcessRig::InProcessRig(const ClipLibrary& lib, const InProcessRigConfig& cfg)
    : world_(lib, world_config(cfg.characters)), pool_(cfg.worker_threads), cfg_(cfg) {
    for (size_t s = 0; s < lib.skeletons.size(); ++s)
        roster_.skeletons[uint16_t(s)] = {lib.skeleton_names[s], lib.skeletons[s], lib.metres_per_unit[s],
                                          plan_precision(lib.skeletons[s], lib.metres_per_unit[s])};
    for (int c = 0; c < cfg.characters; ++c)
        roster_.characters[uint16_t(c)] = {uint16_t(world_.characters()[size_t(c)].skeleton()), ""};
    net::ServerConfig sc;
    sc.max_clients = cfg.clients;
    sc.share_encodings = cfg.share_encodings;
    sc.worker_threads = cfg.worker_threads;
    sc.bandwidth_bps = cfg.bandwidth_bps;
    sc.snapshot_hz = cfg.snapshot_hz;
    sc.clock = [this] { return tick_now_ / 60.0; };  // the clients' time: the run is the same however fast it goes
    sc.transport = [this](const asio::ip::udp::endpoint& to, std::span<const uint8_t> bytes) {
        const auto decoded = net::decode_packet(bytes);
        sent_[to.port()].push_back({tick_now_, bytes.size() + net::kIpUdpHeaderBytes, decoded ? decoded->type : net::MessageType::NONE});
        if (cfg_.drop_to_client && decoded && cfg_.drop_to_client(to.port() - 20000, *decoded)) return;
        to_client_[to.port()].push_back({tick_now_ + delay(to.port() - 20000), std::vector<uint8_t>(bytes.begin(), bytes.end())});
    };
    server_ = std::make_unique<net::Server>(io_, sc, roster_);
    std::vector<KnownSkeleton> known;
    if (cfg.clients_hold_skeletons)
        for (size_t s = 0; s < lib.skeletons.size(); ++s)
            known.push_back({net::skeleton_hash(lib.skeletons[s], lib.metres_per_unit[s]), lib.skeletons[s], lib.metres_per_unit[s]});
    for (int i = 0; i < cfg.clients; ++i) {
        sessions_.push_back(std::make_unique<ClientSession>(ClientSessionConfig{}));
        sessions_.back()->set_known_skeletons(known);
    }
    for (auto& s : sessions_) s->connect(0.0);
}

double InProcessRig::tick(int n) {
    const double now = n / 60.0;
    tick_now_ = n;
    exchange(now);
    const auto t0 = std::chrono::steady_clock::now();
    world_.step(cfg_.worker_threads != 0 ? &pool_ : nullptr);
    server_->publish(frame());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const std::vector<InProcessRig::Sent>& InProcessRig::sent_to(int client) const {
    static const std::vector<Sent> none;
    const auto it = sent_.find(uint16_t(20000 + client));
    return it == sent_.end() ? none : it->second;
}

void InProcessRig::exchange(double now) {
    const auto c0 = std::chrono::steady_clock::now();
    for (int i = 0; i < cfg_.clients; ++i) {
        ClientSession& s = *sessions_[size_t(i)];
        const uint16_t port = uint16_t(20000 + i);
        std::vector<InFlight>& q = to_client_[port];
        for (const InFlight& d : q)
            if (d.due <= tick_now_) s.on_datagram(d.bytes, now);
        q.erase(std::remove_if(q.begin(), q.end(), [&](const InFlight& d) { return d.due <= tick_now_; }), q.end());
        s.update(now);
        s.take_received();
        s.recycle_poses(s.take_poses());
        s.take_events();
        // Replies take the same time back: held here, injected when due.
        for (auto& d : s.take_outgoing()) replies_.push_back({tick_now_ + delay(i), port, std::move(d)});
    }
    clients_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
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

net::TickFrame InProcessRig::frame() const {
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

}  // namespace ks
