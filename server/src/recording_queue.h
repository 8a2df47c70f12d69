#pragma once
// A recording written on its own thread, so a slow or blocked disk never stalls the ticks and
// never grows memory without bound. Frames wait in a queue of at most `max_bytes`. A frame that
// does not fit is dropped and counted; the first of a run of drops is logged (at most once every
// 10 s). The next frame that is written carries the number of ticks dropped before it
// (RecordedFrame::dropped_before) and their events, so a reader knows where the holes are; a
// recording that ends in a hole ends with a frame without characters, one tick after it.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <kinesync/common/record/recording.h>

namespace ks {

// Bytes a frame takes while queued (its poses and events).
size_t queued_frame_bytes(const RecordedFrame& f);

class RecordingQueue {
public:
    struct Stats {
        uint64_t frames_written = 0;  // handed to the file writer
        uint64_t frames_dropped = 0;  // the queue was full, or the writer had failed
        size_t queued_bytes = 0, peak_bytes = 0;
    };
    // Opens the file on the writer thread (a failure shows in error() and in close()). With
    // `wait_when_full` (an offline run, where nothing is real-time) push() waits for room instead
    // of dropping.
    RecordingQueue(const std::string& path, RecordingHeader header, size_t max_bytes, bool wait_when_full = false);
    ~RecordingQueue();  // close(), errors swallowed
    RecordingQueue(const RecordingQueue&) = delete;
    RecordingQueue& operator=(const RecordingQueue&) = delete;

    // Never waits for the disk (unless wait_when_full).
    void push(RecordedFrame frame);
    // Writes what is queued and closes the file, waiting at most `wait_s` for the disk; throws
    // std::runtime_error naming the file when the writer failed or did not finish in time (then
    // its thread is abandoned, still owning what it needs).
    void close(double wait_s = 10.0);
    Stats stats() const;
    std::string error() const;  // "" while the writer is fine

private:
    struct Shared;
    std::shared_ptr<Shared> shared_;
    std::thread thread_;
    bool closed_ = false;
};

}  // namespace ks
