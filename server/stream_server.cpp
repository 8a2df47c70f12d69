#include "server/stream_server.h"

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <thread>

#include "common/record/recording.h"

namespace ks {

namespace {

std::shared_ptr<spdlog::logger> server_log() {
    auto log = spdlog::get("server");
    if (!log) {
        log = std::make_shared<spdlog::logger>("server");  // no sinks: silent unless the program adds one
        spdlog::register_logger(log);
    }
    return log;
}

// One tick, handed from the game's thread to the I/O side.
struct Frame {
    uint32_t tick = 0;
    std::vector<std::pair<uint16_t, net::Roster::SkeletonEntry>> skeletons;
    std::vector<std::pair<uint16_t, net::Roster::CharacterEntry>> characters;
    std::vector<uint16_t> removed;
    std::vector<net::EventInfo> events;
    struct CharacterPose {
        uint16_t id, epoch;
        Pose pose;
    };
    std::vector<CharacterPose> poses;
};

}  // namespace

struct StreamServer::Impl {
    StreamServerConfig cfg;
    // ---- the game's side, under m ----
    mutable std::mutex m;
    struct Staged {
        uint16_t skeleton = 0;
        Pose pose;
        bool has_pose = false;
        uint16_t epoch = 0;
    };
    std::map<uint16_t, int> skeleton_joints;
    std::map<uint16_t, Staged> characters;
    uint16_t next_skeleton = 0, next_character = 0;
    uint32_t tick = 0;
    Frame pending;  // roster changes and events since the last end_tick
    bool closed = false;
    // ---- the I/O side: touched only by whoever runs io ----
    asio::io_context io;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
    net::Roster roster;
    std::unique_ptr<net::Server> server;
    std::unique_ptr<RecordingWriter> recorder;
    std::set<uint16_t> recorded;  // characters in the recording's header
    std::string record_error;
    std::thread thread;
    // ---- published by the I/O side, under report_m ----
    mutable std::mutex report_m;
    StreamServerStats report;
    std::vector<double> tick_times_us;

    void apply(Frame& f);
    void record(const Frame& f);
    // A new epoch for the character from the tick being built; returns it.
    uint16_t open_epoch(uint16_t character, kinesync::wire::EventKind kind, const char* fn);
};

void StreamServer::Impl::record(const Frame& f) {
    if (cfg.record_path.empty() || !record_error.empty()) return;
    try {
        if (!recorder) {
            RecordingHeader h;
            h.tick_hz = cfg.tick_hz;
            h.snapshot_hz = cfg.snapshot_hz;
            h.scenario = cfg.record_scenario;
            h.seed = cfg.record_seed;
            // Skeleton ids are handed out from 0 and never removed: they index these vectors.
            for (const auto& [id, sk] : roster.skeletons) {
                h.skeletons.push_back(sk.skeleton);
                h.skeleton_names.push_back(sk.name);
                h.metres_per_unit.push_back(sk.metres_per_unit);
            }
            for (const auto& [id, c] : roster.characters) {
                h.characters.push_back({id, c.skeleton, c.name});
                recorded.insert(id);
            }
            recorder = std::make_unique<RecordingWriter>(cfg.record_path, h);
        }
        RecordedFrame rf;
        rf.tick = f.tick;
        for (const Frame::CharacterPose& c : f.poses)
            if (recorded.count(c.id)) rf.characters.push_back({c.id, c.epoch, c.pose});
        for (const net::EventInfo& e : f.events)
            if (recorded.count(e.character_id) && e.kind != kinesync::wire::EventKind::Removed)
                rf.events.push_back({e.character_id, e.epoch, uint8_t(e.kind), e.tick});
        recorder->write(rf);
    } catch (const std::exception& e) {
        // The stream goes on; the recording stops here (complete chunks stay readable) and close()
        // reports why.
        record_error = e.what();
        server_log()->error("recording stopped: {}", record_error);
    }
}

void StreamServer::Impl::apply(Frame& f) {
    const auto t0 = std::chrono::steady_clock::now();
    net::TickFrame tf;
    tf.tick = f.tick;
    for (auto& [id, sk] : f.skeletons) {
        roster.skeletons[id] = std::move(sk);
        tf.added_skeletons.push_back(id);
    }
    for (auto& [id, c] : f.characters) {
        roster.characters[id] = std::move(c);
        tf.added_characters.push_back(id);
    }
    for (uint16_t id : f.removed) roster.characters.erase(id);
    tf.removed_characters = f.removed;
    tf.events = f.events;
    for (const Frame::CharacterPose& c : f.poses) tf.characters.push_back({c.id, c.epoch, &c.pose});
    if (server) server->publish(tf);
    record(f);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(report_m);
    if (server) {
        report.net = server->stats();
        report.clients = server->clients();
    }
    report.tick = f.tick;
    report.characters = roster.characters.size();
    if (tick_times_us.size() < 1000000) tick_times_us.push_back(us);
}

StreamServer::StreamServer(const StreamServerConfig& cfg) : impl_(std::make_unique<Impl>()) {
    // Both travel as whole numbers (uint16) on the wire, and snapshots go out every n-th tick.
    if (!(cfg.tick_hz >= 1 && cfg.tick_hz <= 1000) || cfg.tick_hz != std::floor(cfg.tick_hz) || !(cfg.snapshot_hz >= 1) ||
        cfg.snapshot_hz != std::floor(cfg.snapshot_hz) || std::fmod(cfg.tick_hz, cfg.snapshot_hz) != 0.0f)
        throw std::invalid_argument("StreamServer: tick_hz (1..1000) and snapshot_hz must be whole numbers, snapshot_hz dividing tick_hz");
    impl_->cfg = cfg;
    server_log();
    if (!cfg.record_path.empty()) {
        // Fail now, on the caller's thread, rather than at the first tick.
        std::ofstream probe(cfg.record_path, std::ios::binary | std::ios::trunc);
        if (!probe) throw std::runtime_error("cannot record to " + cfg.record_path + ": cannot create the file");
    }
    if (cfg.network) {
        net::ServerConfig sc;
        sc.bind = cfg.bind;
        sc.port = cfg.port;
        sc.tick_hz = cfg.tick_hz;
        sc.snapshot_hz = cfg.snapshot_hz;
        sc.bandwidth_bps = cfg.bandwidth_bps;
        sc.max_clients = cfg.max_clients;
        sc.timeout_s = cfg.timeout_s;
        sc.secret_seed = cfg.secret_seed;
        sc.worker_threads = cfg.worker_threads;
        sc.relevance = cfg.relevance;
        sc.reliable_timeout_s = cfg.reliable_timeout_s;
        sc.max_sessions_per_address = cfg.max_sessions_per_address;
        sc.private_key = cfg.private_key;
        sc.insecure_dev = cfg.insecure_dev;
        sc.public_address = cfg.public_address;
        sc.receive_buffer_bytes = cfg.receive_buffer_bytes;
        impl_->server = std::make_unique<net::Server>(impl_->io, sc, impl_->roster);
        port_ = impl_->server->port();
        impl_->server->start();
    }
    if (cfg.io == IoMode::OwnThread) {
        impl_->guard.emplace(impl_->io.get_executor());
        impl_->thread = std::thread([impl = impl_.get()] {
            for (;;) {
                try {
                    impl->io.run();
                    return;
                } catch (const std::exception& e) {
                    server_log()->error("I/O thread: {}", e.what());  // and keep serving
                }
            }
        });
    }
}

StreamServer::~StreamServer() {
    try {
        close();
    } catch (...) {
    }
}

uint16_t StreamServer::add_skeleton(const std::string& name, const Skeleton& skeleton, float metres_per_unit) {
    if (const std::string why = skeleton.validate(); !why.empty())
        throw std::invalid_argument("add_skeleton(\"" + name + "\"): " + why);
    if (skeleton.size() > net::kMaxJoints)
        throw std::invalid_argument("add_skeleton(\"" + name + "\"): " + std::to_string(skeleton.size()) + " joints, at most " +
                                    std::to_string(net::kMaxJoints));
    if (name.size() > net::kMaxNameBytes) throw std::invalid_argument("add_skeleton: name longer than 64 bytes");
    for (const std::string& n : skeleton.names)
        if (n.size() > net::kMaxNameBytes) throw std::invalid_argument("add_skeleton(\"" + name + "\"): joint name longer than 64 bytes: " + n);
    if (!(metres_per_unit > 0)) throw std::invalid_argument("add_skeleton(\"" + name + "\"): metres_per_unit must be > 0");
    net::Roster::SkeletonEntry e{name, skeleton, metres_per_unit, plan_precision(skeleton, metres_per_unit)};
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->next_skeleton == UINT16_MAX) throw std::invalid_argument("add_skeleton: too many skeletons");
    const uint16_t id = impl_->next_skeleton++;
    impl_->skeleton_joints[id] = skeleton.size();
    impl_->pending.skeletons.emplace_back(id, std::move(e));
    return id;
}

uint16_t StreamServer::add_character(uint16_t skeleton, const std::string& name) {
    if (name.size() > net::kMaxNameBytes) throw std::invalid_argument("add_character: name longer than 64 bytes");
    std::lock_guard<std::mutex> lock(impl_->m);
    if (!impl_->skeleton_joints.count(skeleton)) throw std::invalid_argument("add_character: unknown skeleton " + std::to_string(skeleton));
    if (impl_->next_character == UINT16_MAX) throw std::invalid_argument("add_character: too many characters");
    const uint16_t id = impl_->next_character++;
    Impl::Staged& s = impl_->characters[id];
    s.skeleton = skeleton;
    impl_->pending.characters.emplace_back(id, net::Roster::CharacterEntry{skeleton, name});
    return id;
}

namespace {
template <class Map>
auto& find_character(Map& m, uint16_t id, const char* what) {
    const auto it = m.find(id);
    if (it == m.end()) throw std::invalid_argument(std::string(what) + ": unknown character " + std::to_string(id));
    return it->second;
}
}  // namespace

uint16_t StreamServer::Impl::open_epoch(uint16_t character, kinesync::wire::EventKind kind, const char* fn) {
    std::lock_guard<std::mutex> lock(m);
    Staged& s = find_character(characters, character, fn);
    ++s.epoch;
    pending.events.push_back({character, s.epoch, kind, tick + 1});
    return s.epoch;
}

void StreamServer::remove_character(uint16_t character) {
    std::lock_guard<std::mutex> lock(impl_->m);
    find_character(impl_->characters, character, "remove_character");
    impl_->characters.erase(character);
    auto& added = impl_->pending.characters;
    const auto it = std::find_if(added.begin(), added.end(), [&](const auto& a) { return a.first == character; });
    if (it != added.end()) added.erase(it);  // added and removed within one tick: nobody heard of it
    else impl_->pending.removed.push_back(character);
}

void StreamServer::set_pose(uint16_t character, const Pose& pose) {
    std::lock_guard<std::mutex> lock(impl_->m);
    Impl::Staged& s = find_character(impl_->characters, character, "set_pose");
    const int joints = impl_->skeleton_joints.at(s.skeleton);
    if (pose.size() != joints)
        throw std::invalid_argument("set_pose: character " + std::to_string(character) + " has " + std::to_string(joints) +
                                    " joints, the pose " + std::to_string(pose.size()));
    s.pose = pose;
    s.has_pose = true;
}

uint16_t StreamServer::teleport(uint16_t character) { return impl_->open_epoch(character, kinesync::wire::EventKind::Teleport, "teleport"); }
uint16_t StreamServer::reset(uint16_t character) { return impl_->open_epoch(character, kinesync::wire::EventKind::Reset, "reset"); }

uint16_t StreamServer::epoch(uint16_t character) const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return find_character(impl_->characters, character, "epoch").epoch;
}

uint32_t StreamServer::end_tick() {
    auto frame = std::make_shared<Frame>();
    uint32_t tick = 0;
    {
        std::lock_guard<std::mutex> lock(impl_->m);
        if (impl_->closed) throw std::logic_error("end_tick after close()");
        tick = ++impl_->tick;
        *frame = std::move(impl_->pending);
        impl_->pending = Frame{};
        frame->tick = tick;
        for (auto& e : frame->events) e.tick = tick;
        for (const auto& [id, s] : impl_->characters)
            if (s.has_pose) frame->poses.push_back({id, s.epoch, s.pose});
    }
    if (impl_->cfg.io == IoMode::OwnThread) {
        asio::post(impl_->io, [impl = impl_.get(), frame] { impl->apply(*frame); });
    } else {
        impl_->apply(*frame);
        poll();
    }
    return tick;
}

void StreamServer::poll() {
    if (impl_->cfg.io != IoMode::Pumped) return;
    if (impl_->io.stopped()) impl_->io.restart();
    try {
        impl_->io.poll();
    } catch (const std::exception& e) {
        server_log()->error("network: {}", e.what());  // never into the game
    }
}

void StreamServer::close() {
    {
        std::lock_guard<std::mutex> lock(impl_->m);
        if (impl_->closed) return;
        impl_->closed = true;
    }
    auto finish = [impl = impl_.get()] {
        // The recording is complete before any client hears goodbye (a client may read it then).
        if (impl->recorder) {
            try {
                impl->recorder->close();
            } catch (const std::exception& e) {
                if (impl->record_error.empty()) impl->record_error = e.what();
            }
        }
        if (impl->server) {
            impl->server->stop();
            std::lock_guard<std::mutex> lock(impl->report_m);
            impl->report.net = impl->server->stats();
            impl->report.clients.clear();
        }
        impl->guard.reset();
    };
    if (impl_->thread.joinable()) {
        asio::post(impl_->io, finish);
        impl_->thread.join();
    } else {
        finish();
        poll();
    }
    if (!impl_->record_error.empty()) throw std::runtime_error("recording " + impl_->cfg.record_path + ": " + impl_->record_error);
}

uint32_t StreamServer::tick() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->tick;
}

StreamServerStats StreamServer::stats() const {
    std::lock_guard<std::mutex> lock(impl_->report_m);
    return impl_->report;
}

void StreamServer::take_tick_times(double& p50_us, double& p99_us) {
    std::vector<double> t;
    {
        std::lock_guard<std::mutex> lock(impl_->report_m);
        t.swap(impl_->tick_times_us);
    }
    if (t.empty()) {
        p50_us = p99_us = 0;
        return;
    }
    std::sort(t.begin(), t.end());
    p50_us = t[t.size() / 2];
    p99_us = t[std::min(t.size() - 1, size_t(0.99 * double(t.size())))];
}

}  // namespace ks
