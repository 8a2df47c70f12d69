#include "server/src/recording_queue.h"

#include <chrono>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ks {

size_t queued_frame_bytes(const RecordedFrame& f) {
    size_t n = sizeof(RecordedFrame) + f.events.size() * sizeof(RecordedEvent);
    for (const RecordedCharacter& c : f.characters)
        n += sizeof(RecordedCharacter) + c.pose.pos.size() * sizeof(vec3) * 5 + c.pose.rot.size() * sizeof(quat);
    return n;
}

struct RecordingQueue::Shared {
    std::string path;
    RecordingHeader header;
    size_t max_bytes = 0;
    bool wait_when_full = false;
    mutable std::mutex m;
    std::condition_variable wake, done_cv, room;
    std::deque<RecordedFrame> queue;
    Stats stats;
    uint32_t dropped_run = 0;               // ticks dropped since the last frame queued
    uint32_t last_dropped_tick = 0;
    std::vector<RecordedEvent> carried;     // their events, for the next frame
    std::chrono::steady_clock::time_point last_log{};
    bool logged_once = false;
    bool closing = false, done = false;
    std::string error;

    void run();
    void log_drop(uint32_t tick);
};

void RecordingQueue::Shared::log_drop(uint32_t tick) {
    const auto now = std::chrono::steady_clock::now();
    if (logged_once && now - last_log < std::chrono::seconds(10)) return;
    logged_once = true;
    last_log = now;
    if (auto log = spdlog::get("server"))
        log->warn("recording {} falls behind (the disk is slow or blocked): dropping ticks from tick {} ({} dropped so far, "
                  "queue full at {} KiB); the recording marks where",
                  path, tick, stats.frames_dropped, max_bytes / 1024);
}

void RecordingQueue::Shared::run() {
    std::unique_ptr<RecordingWriter> writer;
    try {
        writer = std::make_unique<RecordingWriter>(path, header);
        for (;;) {
            RecordedFrame f;
            {
                std::unique_lock<std::mutex> lock(m);
                wake.wait(lock, [&] { return closing || !queue.empty(); });
                if (queue.empty()) break;  // closing, and everything written
                f = std::move(queue.front());
                queue.pop_front();
                stats.queued_bytes -= queued_frame_bytes(f);
                room.notify_all();
            }
            writer->write(f);
            std::lock_guard<std::mutex> lock(m);
            ++stats.frames_written;
        }
        writer->close();
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m);
        error = e.what();
        stats.frames_dropped += queue.size();
        queue.clear();
        stats.queued_bytes = 0;
        room.notify_all();
        if (auto log = spdlog::get("server")) log->error("recording stopped: {}", error);
    }
    std::lock_guard<std::mutex> lock(m);
    done = true;
    done_cv.notify_all();
    room.notify_all();
}

RecordingQueue::RecordingQueue(const std::string& path, RecordingHeader header, size_t max_bytes, bool wait_when_full)
    : shared_(std::make_shared<Shared>()) {
    shared_->path = path;
    shared_->header = std::move(header);
    shared_->max_bytes = max_bytes;
    shared_->wait_when_full = wait_when_full;
    thread_ = std::thread([s = shared_] { s->run(); });
}

RecordingQueue::~RecordingQueue() {
    try {
        close();
    } catch (...) {
    }
}

void RecordingQueue::push(RecordedFrame frame) {
    Shared& s = *shared_;
    const size_t bytes = queued_frame_bytes(frame);
    std::unique_lock<std::mutex> lock(s.m);
    if (s.closing) return;
    if (s.wait_when_full)  // room, or at least an empty queue for a frame larger than the bound
        s.room.wait(lock, [&] { return !s.error.empty() || s.done || s.queue.empty() || s.stats.queued_bytes + bytes <= s.max_bytes; });
    const bool too_big = s.stats.queued_bytes + bytes > s.max_bytes && !(s.wait_when_full && s.queue.empty());
    if (!s.error.empty() || s.done || too_big) {
        ++s.stats.frames_dropped;
        if (s.error.empty()) {
            if (s.dropped_run == 0) s.log_drop(frame.tick);
            ++s.dropped_run;
            s.last_dropped_tick = frame.tick;
            s.carried.insert(s.carried.end(), frame.events.begin(), frame.events.end());
        }
        return;
    }
    if (s.dropped_run) {
        frame.dropped_before = s.dropped_run;
        frame.events.insert(frame.events.begin(), s.carried.begin(), s.carried.end());
        s.dropped_run = 0;
        s.carried.clear();
    }
    s.stats.queued_bytes += queued_frame_bytes(frame);
    s.stats.peak_bytes = std::max(s.stats.peak_bytes, s.stats.queued_bytes);
    s.queue.push_back(std::move(frame));
    s.wake.notify_one();
}

void RecordingQueue::close(double wait_s) {
    if (closed_) return;
    closed_ = true;
    Shared& s = *shared_;
    bool finished = false;
    {
        std::unique_lock<std::mutex> lock(s.m);
        if (s.dropped_run && s.error.empty()) {
            // The recording ended in a hole: a last frame without characters, after it, says so.
            RecordedFrame mark;
            mark.tick = s.last_dropped_tick + 1;
            mark.dropped_before = s.dropped_run;
            mark.events = std::move(s.carried);
            s.queue.push_back(std::move(mark));
        }
        s.closing = true;
        s.wake.notify_all();
        finished = s.done_cv.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return s.done; });
    }
    if (!finished) {
        thread_.detach();  // blocked in the kernel: it keeps its own reference to what it uses
        throw std::runtime_error("the disk did not take the recording's last frames within " + std::to_string(int(wait_s)) +
                                 " s; the file may end early");
    }
    thread_.join();
    if (!s.error.empty()) throw std::runtime_error(s.error);
}

RecordingQueue::Stats RecordingQueue::stats() const {
    std::lock_guard<std::mutex> lock(shared_->m);
    return shared_->stats;
}

std::string RecordingQueue::error() const {
    std::lock_guard<std::mutex> lock(shared_->m);
    return shared_->error;
}

}  // namespace ks
