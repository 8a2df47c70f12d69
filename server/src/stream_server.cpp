#include <kinesync/server/stream_server.h>

#include "server/src/net/server.h"
#include "common/src/util/refusal_text.h"
#include <kinesync/common/errors.h>

#include <algorithm>
#include <atomic>
#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <sstream>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <thread>

#include <kinesync/common/record/recording.h>
#include "server/src/recording_queue.h"

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
        float ahead_s = 0.0f;  // the look-ahead, when > 0
        Pose ahead;
        uint16_t ahead_plan = 0;
        bool planned = false;  // the character has had a look-ahead: its entries carry the plan
    };
    std::vector<CharacterPose> poses;
};

}  // namespace

// Ticks handed to the network thread and not yet published, at most.
constexpr int kMaxQueuedTicks = 32;

struct StreamServer::Impl {
    StreamServerConfig cfg;
    // ---- the game's side, under m ----
    mutable std::mutex m;
    struct Staged {
        uint16_t skeleton = 0;
        Pose pose;
        bool has_pose = false;
        Pose ahead;
        float ahead_s = 0.0f;  // 0: no look-ahead this tick
        uint16_t ahead_plan = 0;
        bool planned = false;
        uint16_t epoch = 0;
    };
    std::map<uint16_t, Skeleton> skeletons;  // by id, as added (set_pose checks poses against them)
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
    std::unique_ptr<RecordingQueue> recorder;
    std::set<uint16_t> recorded;  // characters in the recording's header
    std::string record_error;
    std::thread thread;
    // ---- published by the I/O side, under report_m ----
    mutable std::mutex report_m;
    StreamServerStats report;
    std::vector<double> tick_times_us;

    std::atomic<int> queued_ticks{0};  // handed to the network thread, not yet applied
    std::atomic<uint64_t> ticks_not_published{0};
    bool skipping = false;  // under m: the previous tick was skipped too
    void skip_tick(uint32_t tick);  // under m

    void apply(Frame& f);
    void record(const Frame& f);
    void report_recording();  // under report_m
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
            recorder = std::make_unique<RecordingQueue>(cfg.record_path, std::move(h), cfg.record_queue_bytes, !cfg.network);
        }
        RecordedFrame rf;
        rf.tick = f.tick;
        for (const Frame::CharacterPose& c : f.poses)
            if (recorded.count(c.id)) rf.characters.push_back({c.id, c.epoch, c.pose, c.ahead_s, c.ahead, c.ahead_plan});
        for (const net::EventInfo& e : f.events)
            if (recorded.count(e.character_id) && e.kind != kinesync::wire::EventKind::Removed)
                rf.events.push_back({e.character_id, e.epoch, uint8_t(e.kind), e.tick});
        recorder->push(std::move(rf));
    } catch (const std::exception& e) {
        // The stream goes on; the recording stops here (complete chunks stay readable) and close()
        // reports why.
        record_error = e.what();
        server_log()->error("recording stopped: {}", record_error);
    }
}

void StreamServer::Impl::skip_tick(uint32_t tick) {
    ++ticks_not_published;
    if (!skipping)
        server_log()->warn("the network thread is {} ticks behind: tick {} and those after it until it catches up are not "
                           "published ({} so far)", kMaxQueuedTicks, tick, ticks_not_published.load());
    skipping = true;
}

void StreamServer::Impl::report_recording() {
    const RecordingQueue::Stats r = recorder->stats();
    report.recording_frames_dropped = r.frames_dropped;
    report.recording_queue_bytes = r.queued_bytes;
    report.recording_queue_peak_bytes = r.peak_bytes;
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
    for (const Frame::CharacterPose& c : f.poses)
        tf.characters.push_back({c.id, c.epoch, &c.pose, c.ahead_s > 0.0f ? &c.ahead : nullptr, c.ahead_s, c.planned, c.ahead_plan});
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
    if (recorder) report_recording();
    if (tick_times_us.size() < 1000000) tick_times_us.push_back(us);
}

namespace {

void bad_config(const char* field, double value, const char* rule) { detail::check_config_field(false, "StreamServer", field, value, rule); }

void check_config(const StreamServerConfig& c) {
    // Both rates travel as whole numbers (uint16) on the wire, and snapshots go out every n-th tick.
    if (!(c.tick_hz >= 1 && c.tick_hz <= 1000) || c.tick_hz != std::floor(c.tick_hz)) bad_config("tick_hz", c.tick_hz, "a whole number in 1..1000");
    if (!(c.snapshot_hz >= 1) || c.snapshot_hz != std::floor(c.snapshot_hz) || std::fmod(c.tick_hz, c.snapshot_hz) != 0.0f)
        bad_config("snapshot_hz", c.snapshot_hz, "a whole number dividing tick_hz");
    if (c.io != IoMode::Pumped && c.io != IoMode::OwnThread) bad_config("io", int(c.io), "an IoMode");
    if (!(c.bandwidth_bps >= 8000 && std::isfinite(c.bandwidth_bps))) bad_config("bandwidth_bps", c.bandwidth_bps, "finite and at least 8000");
    if (!(c.min_bandwidth_bps >= 8000 && std::isfinite(c.min_bandwidth_bps))) bad_config("min_bandwidth_bps", c.min_bandwidth_bps, "finite and at least 8000");
    if (c.max_clients < 1 || c.max_clients > 4096) bad_config("max_clients", c.max_clients, "1..4096");
    if (!(c.timeout_s > 0 && c.timeout_s <= 3600)) bad_config("timeout_s", c.timeout_s, "in (0, 3600] seconds");
    if (!(c.reliable_timeout_s > 0 && c.reliable_timeout_s <= 3600)) bad_config("reliable_timeout_s", c.reliable_timeout_s, "in (0, 3600] seconds");
    if (c.max_sessions_per_address < -1 || c.max_sessions_per_address == 0)
        bad_config("max_sessions_per_address", c.max_sessions_per_address, "-1 (automatic) or at least 1");
    if (c.record_queue_bytes < (size_t(1) << 20)) bad_config("record_queue_bytes", double(c.record_queue_bytes), "at least 1 MiB");
    if (c.worker_threads < -1 || c.worker_threads > 256) bad_config("worker_threads", c.worker_threads, "-1 (automatic) or 0..256");
    const RelevanceConfig& r = c.relevance;
    if (r.near_count < 0) bad_config("relevance.near_count", r.near_count, "at least 0");
    if (!(r.far_scale > 0 && r.far_scale <= 1)) bad_config("relevance.far_scale", r.far_scale, "in (0, 1]");
    if (!(r.reference_m > 0 && std::isfinite(r.reference_m))) bad_config("relevance.reference_m", r.reference_m, "finite and > 0");
    if (!(r.min_priority > 0 && r.min_priority <= r.far_scale)) bad_config("relevance.min_priority", r.min_priority, "in (0, far_scale]");
    if (r.far_hold_depth < -1) bad_config("relevance.far_hold_depth", r.far_hold_depth, "-1 (every joint) or at least 0");
}

}  // namespace

StreamServer::StreamServer(const StreamServerConfig& cfg) : impl_(std::make_unique<Impl>()) {
    check_config(cfg);
    impl_->cfg = cfg;
    server_log();
    if (!cfg.record_path.empty()) {
        // Fail now, on the caller's thread, rather than at the first tick.
        std::ofstream probe(cfg.record_path, std::ios::binary | std::ios::trunc);
        if (!probe) throw Error(Errc::Io, "cannot record to " + cfg.record_path + ": cannot create the file", "config.record_path");
    }
    if (cfg.network) {
        net::ServerConfig sc;
        sc.bind = cfg.bind;
        sc.port = cfg.port;
        sc.tick_hz = cfg.tick_hz;
        sc.snapshot_hz = cfg.snapshot_hz;
        sc.bandwidth_bps = cfg.bandwidth_bps;
        sc.follow_path = cfg.follow_path;
        sc.min_bandwidth_bps = cfg.min_bandwidth_bps;
        sc.max_clients = cfg.max_clients;
        sc.timeout_s = cfg.timeout_s;
        sc.secret_seed = cfg.secret_seed;
        sc.worker_threads = cfg.worker_threads;
        sc.relevance = cfg.relevance;
        sc.reliable_timeout_s = cfg.reliable_timeout_s;
        sc.max_sessions_per_address = cfg.max_sessions_per_address;
        sc.admission = cfg.admission;
        sc.private_key = cfg.private_key;
        sc.insecure_dev = cfg.insecure_dev && cfg.insecure_dev_public;  // on loopback dev mode needs neither
        sc.limit_loopback = cfg.limit_loopback;
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
    const std::string where = "add_skeleton(\"" + name + "\")";
    skeleton.check(where.c_str());
    if (name.size() > net::kMaxNameBytes) throw Error(Errc::InvalidArgument, "add_skeleton: name longer than 64 bytes", "name");
    for (int j = 0; j < skeleton.size(); ++j)
        if (skeleton.names[size_t(j)].size() > net::kMaxNameBytes)
            throw Error(Errc::InvalidSkeleton, where + ": skeleton.names: joint " + std::to_string(j) + " has a name longer than 64 bytes",
                        "skeleton.names", j);
    if (!(metres_per_unit > 0 && std::isfinite(metres_per_unit)))
        throw Error(Errc::InvalidArgument, where + ": metres_per_unit = " + std::to_string(metres_per_unit) + ", must be finite and > 0",
                    "metres_per_unit");
    net::Roster::SkeletonEntry e{name, skeleton, metres_per_unit, plan_precision(skeleton, metres_per_unit)};
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->closed) throw Error(Errc::State, std::string("add_skeleton") + " after close()");
    if (impl_->next_skeleton == UINT16_MAX) throw Error(Errc::InvalidArgument, "add_skeleton: too many skeletons (65535)");
    const uint16_t id = impl_->next_skeleton++;
    impl_->skeletons[id] = skeleton;
    impl_->pending.skeletons.emplace_back(id, std::move(e));
    return id;
}

uint16_t StreamServer::add_character(uint16_t skeleton, const std::string& name) {
    if (name.size() > net::kMaxNameBytes) throw Error(Errc::InvalidArgument, "add_character: name longer than 64 bytes", "name");
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->closed) throw Error(Errc::State, std::string("add_character") + " after close()");
    if (!impl_->skeletons.count(skeleton))
        throw Error(Errc::UnknownId, "add_character: unknown skeleton " + std::to_string(skeleton), "skeleton");
    if (impl_->next_character == UINT16_MAX) throw Error(Errc::InvalidArgument, "add_character: too many characters (65535)");
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
    if (it == m.end()) throw Error(Errc::UnknownId, std::string(what) + ": unknown character " + std::to_string(id), "character");
    return it->second;
}
}  // namespace

uint16_t StreamServer::Impl::open_epoch(uint16_t character, kinesync::wire::EventKind kind, const char* fn) {
    std::lock_guard<std::mutex> lock(m);
    if (closed) throw Error(Errc::State, std::string(fn) + " after close()");
    Staged& s = find_character(characters, character, fn);
    ++s.epoch;
    pending.events.push_back({character, s.epoch, kind, tick + 1});
    return s.epoch;
}

void StreamServer::remove_character(uint16_t character) {
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->closed) throw Error(Errc::State, std::string("remove_character") + " after close()");
    find_character(impl_->characters, character, "remove_character");
    impl_->characters.erase(character);
    auto& added = impl_->pending.characters;
    const auto it = std::find_if(added.begin(), added.end(), [&](const auto& a) { return a.first == character; });
    if (it != added.end()) added.erase(it);  // added and removed within one tick: nobody heard of it
    else impl_->pending.removed.push_back(character);
}

void StreamServer::set_pose(uint16_t character, const Pose& pose) {
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->closed) throw Error(Errc::State, std::string("set_pose") + " after close()");
    Impl::Staged& s = find_character(impl_->characters, character, "set_pose");
    const std::string where = "set_pose(character " + std::to_string(character) + ")";
    check_pose(pose, impl_->skeletons.at(s.skeleton), where.c_str());
    s.pose = pose;
    s.has_pose = true;
    s.ahead_s = 0.0f;
}

void StreamServer::set_look_ahead(uint16_t character, const Pose& pose, float seconds, uint16_t plan) {
    std::lock_guard<std::mutex> lock(impl_->m);
    if (impl_->closed) throw Error(Errc::State, "set_look_ahead after close()");
    Impl::Staged& s = find_character(impl_->characters, character, "set_look_ahead");
    const std::string where = "set_look_ahead(character " + std::to_string(character) + ")";
    if (!(seconds > 0.0f && seconds <= 2.0f))
        throw Error(Errc::InvalidArgument, where + ": seconds = " + std::to_string(seconds) + ": in (0, 2]", "seconds");
    if (!s.has_pose) throw Error(Errc::State, where + ": before any set_pose of the character");
    check_pose(pose, impl_->skeletons.at(s.skeleton), where.c_str());
    s.ahead = pose;
    s.ahead_s = seconds;
    s.ahead_plan = plan;
    s.planned = true;
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
        if (impl_->closed) throw Error(Errc::State, "end_tick after close()");
        tick = ++impl_->tick;
        // The network thread is this far behind: the tick is not handed over (its roster changes
        // and events wait for the next one), so its queue never grows past the bound.
        if (impl_->cfg.io == IoMode::OwnThread && impl_->cfg.network && impl_->queued_ticks >= kMaxQueuedTicks) {
            impl_->skip_tick(tick);
            return tick;
        }
        impl_->skipping = false;
        *frame = std::move(impl_->pending);
        impl_->pending = Frame{};
        frame->tick = tick;
        for (auto& e : frame->events) e.tick = tick;
        for (const auto& [id, s] : impl_->characters)
            if (s.has_pose) frame->poses.push_back({id, s.epoch, s.pose, s.ahead_s, s.ahead_s > 0.0f ? s.ahead : Pose(), s.ahead_plan, s.planned});
    }
    if (!impl_->cfg.network) {
        impl_->apply(*frame);  // offline: nothing is real-time, the recording takes every tick
    } else if (impl_->cfg.io == IoMode::OwnThread) {
        ++impl_->queued_ticks;
        asio::post(impl_->io, [impl = impl_.get(), frame] {
            impl->apply(*frame);
            --impl->queued_ticks;
        });
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
            std::lock_guard<std::mutex> lock(impl->report_m);
            impl->report_recording();
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
    if (!impl_->record_error.empty())
        throw Error(Errc::Io, "recording " + impl_->cfg.record_path + ": " + impl_->record_error, "config.record_path");
}

uint32_t StreamServer::tick() const {
    std::lock_guard<std::mutex> lock(impl_->m);
    return impl_->tick;
}

StreamServerStats StreamServer::stats() const {
    std::lock_guard<std::mutex> lock(impl_->report_m);
    StreamServerStats st = impl_->report;
    st.ticks_not_published = impl_->ticks_not_published.load();
    return st;
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
