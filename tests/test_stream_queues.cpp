// A StreamServer's queues are bounded. The recording is written on its own thread behind a queue
// bounded in bytes: a blocked disk (here a FIFO nobody reads) never stalls the ticks or grows
// memory past the bound; the ticks that did not fit are counted and marked in the file
// (RecordedFrame::dropped_before), with their events. Ticks wait for the network thread in a queue
// of at most 32: a stuck network thread (here held inside a log call) costs ticks, counted, never
// memory.
#include <gtest/gtest.h>

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <kinesync/common/record/recording.h>
#include <kinesync/server/stream_server.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "programs/testbench/replay.h"
#include "server/src/recording_queue.h"
#include "tests/support/fd.h"
#include "tests/support/udp_harness.h"
#include "tests/support/scratch.h"

using namespace ks;

namespace {

Skeleton chain(int joints) {
    Skeleton s;
    for (int j = 0; j < joints; ++j) {
        s.names.push_back(std::to_string(j));
        s.parents.push_back(j - 1);
        s.offsets.push_back({0, j ? 0.1f : 0.0f, 0});
    }
    return s;
}

// A FIFO with a reader that reads nothing until drain() (a disk that blocks), then everything.
struct BlockedDisk {
    std::string path = ks::test::scratch_path("blocked-disk.fifo");
    int fd = -1;
    std::thread drainer;
    std::string bytes;
    BlockedDisk() {
        ::unlink(path.c_str());
        if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
        fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, so writers may open
    }
    void drain() {
        ::fcntl(fd, F_SETFL, 0);  // blocking reads from now on
        drainer = std::thread([this] {
            char buf[65536];
            for (;;) {
                const ssize_t n = ::read(fd, buf, sizeof buf);
                if (n > 0) bytes.append(buf, size_t(n));
                else if (n == 0 || errno != EINTR) return;  // every writer closed
            }
        });
    }
    ~BlockedDisk() {
        if (drainer.joinable()) drainer.join();
        ::close(fd);
        ::unlink(path.c_str());
    }
};

}  // namespace

TEST(StreamQueues, ABlockedDiskNeverStallsTheTicksAndMemoryStaysWithinTheBound) {
    BlockedDisk disk;
    StreamServerConfig sc;
    sc.port = 0;  // streaming, so real-time: an offline run (network = false) waits for the disk instead
    sc.io = IoMode::Pumped;
    sc.record_path = disk.path;
    sc.record_queue_bytes = size_t(1) << 20;
    StreamServer server(sc);
    const Skeleton sk = chain(60);
    std::vector<uint16_t> ids;
    for (const char* name : {"a", "b", "c", "d"}) ids.push_back(server.add_character(server.add_skeleton(name, sk)));
    Pose p(sk);
    const uint32_t ticks = 3000;  // 4 x 60 joints: about 19 kB a tick, 57 MB in all
    for (uint32_t t = 1; t <= ticks; ++t) {
        p.pos[0].x = 0.01f * float(t);
        for (uint16_t id : ids) server.set_pose(id, p);
        if (t == 2000) server.teleport(ids[1]);
        server.end_tick();
    }
    const StreamServerStats st = server.stats();
    EXPECT_LE(st.recording_queue_peak_bytes, sc.record_queue_bytes);
    EXPECT_GT(st.recording_queue_peak_bytes, sc.record_queue_bytes / 2) << "the queue filled";
    EXPECT_GT(st.recording_frames_dropped, ticks / 2) << "a blocked disk loses most ticks";
    test::record_figure("recording: peak queue bytes behind a blocked disk (bound 1 MiB)", double(st.recording_queue_peak_bytes));
    disk.drain();
    server.close();
    disk.drainer.join();

    const std::string copy = ks::test::scratch_path("blocked-copy.ksrec");
    std::ofstream(copy, std::ios::binary) << disk.bytes;
    const RecordingReadResult rec = read_recording(copy);
    EXPECT_FALSE(rec.truncated) << rec.warning;
    uint64_t dropped = 0;
    size_t holes = 0;
    bool teleport_kept = false;
    for (const RecordedFrame& f : rec.frames) {
        dropped += f.dropped_before;
        holes += f.dropped_before > 0;
        for (const RecordedEvent& e : f.events) teleport_kept |= e.character == ids[1] && e.tick == 2000;
    }
    EXPECT_GE(holes, 1u);
    EXPECT_EQ(dropped, server.stats().recording_frames_dropped) << "every dropped tick is marked in the file";
    EXPECT_EQ(rec.frames.size() + dropped, ticks + (rec.frames.back().characters.empty() ? 1 : 0))
        << "each tick recorded or marked (and a closing mark when the recording ends in a hole)";
    EXPECT_TRUE(teleport_kept) << "a dropped tick's events go with the next frame recorded";
    const RecordingScan scan = scan_recording(copy);
    EXPECT_EQ(scan.holes.size(), holes) << "the replay finds every hole";
    std::remove(copy.c_str());
}

TEST(StreamQueues, ARecordingWriterThatCannotOpenItsFileSaysSoAndCountsWhatItCouldNotKeep) {
    RecordingHeader h;
    h.skeletons.push_back(chain(2));
    h.characters.push_back({0, 0, "a"});
    RecordingQueue q(ks::test::scratch_path("no-such-dir/x.ksrec"), h, size_t(1) << 20);
    RecordedFrame f;
    f.tick = 1;
    f.characters.push_back({0, 0, Pose(chain(2)), 0.0f, {}});
    test::wait_until([&] { return !q.error().empty(); });
    q.push(f);
    EXPECT_NE(q.error().find("no-such-dir"), std::string::npos) << q.error();
    EXPECT_EQ(q.stats().frames_dropped, 1u);
    EXPECT_THROW(q.close(), std::runtime_error);
}

namespace {

// Holds whichever thread logs a message containing `trigger` until opened. Lock-free (a null
// mutex): other threads keep logging meanwhile.
class GateSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
    explicit GateSink(std::string trigger) : trigger_(std::move(trigger)) {}
    std::atomic<bool> hit{false}, open{false};

protected:
    void sink_it_(const spdlog::details::log_msg& m) override {
        if (open || std::string_view(m.payload.data(), m.payload.size()).find(trigger_) == std::string_view::npos) return;
        hit = true;
        while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void flush_() override {}

private:
    const std::string trigger_;
};

}  // namespace

TEST(StreamQueues, AStuckNetworkThreadCostsTicksCountedNeverMemory) {
    test::quiet_server_logger();
    auto log = spdlog::get("server");
    auto gate = std::make_shared<GateSink>("connected from");
    log->sinks().push_back(gate);
    StreamServerConfig sc;
    sc.port = 0;
    StreamServer server(sc);
    const Skeleton sk = chain(3);
    const uint16_t id = server.add_character(server.add_skeleton("s", sk));
    Pose p(sk);
    server.set_pose(id, p);
    server.end_tick();
    // A client's handshake makes the network thread log its arrival, where the gate holds it.
    test::UdpClient c(server.port());
    c.session.connect(c.now());
    const bool held = c.run_until([&] { return gate->hit.load(); });
    if (held) {
        for (int t = 0; t < 300; ++t) {
            p.pos[0].x = 0.01f * float(t);
            server.set_pose(id, p);
            server.end_tick();
        }
    }
    const uint64_t skipped = server.stats().ticks_not_published;
    gate->open = true;
    ASSERT_TRUE(held) << "the network thread never logged the client's arrival";
    EXPECT_GE(skipped, 300u - 32u) << "at most 32 ticks wait for the network thread";
    EXPECT_LE(skipped, 300u - 30u);
    // Released, it catches up and publishes the ticks that follow.
    test::wait_until([&] { return server.stats().tick >= 1 + 32; });
    server.end_tick();
    test::wait_until([&] { return server.stats().tick >= 302; });
    EXPECT_EQ(server.stats().tick, 302u);
    EXPECT_EQ(server.stats().ticks_not_published, skipped) << "once caught up, no tick is skipped";
    server.close();
    log->sinks().pop_back();
}

TEST(StreamQueues, AnOfflineRunWaitsForTheDiskAndRecordsEveryTick) {
    StreamServerConfig sc;
    sc.network = false;
    sc.record_path = ks::test::scratch_path("offline-every-tick.ksrec");
    sc.record_queue_bytes = size_t(1) << 20;  // a few dozen ticks
    StreamServer server(sc);
    const Skeleton sk = chain(60);
    std::vector<uint16_t> ids;
    for (const char* name : {"a", "b", "c", "d"}) ids.push_back(server.add_character(server.add_skeleton(name, sk)));
    Pose p(sk);
    for (uint32_t t = 1; t <= 1000; ++t) {
        p.pos[0].x = 0.01f * float(t);
        for (uint16_t id : ids) server.set_pose(id, p);
        server.end_tick();
    }
    server.close();
    EXPECT_EQ(server.stats().recording_frames_dropped, 0u);
    EXPECT_LE(server.stats().recording_queue_peak_bytes, sc.record_queue_bytes);
    const RecordingReadResult rec = read_recording(sc.record_path);
    ASSERT_EQ(rec.frames.size(), 1000u);
    for (uint32_t i = 0; i < 1000; ++i) EXPECT_EQ(rec.frames[i].tick, i + 1);
    std::remove(sc.record_path.c_str());
}
