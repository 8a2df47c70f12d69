// Session recordings (common/record): exact round trips of header and frames, chunking, crash
// truncation at every byte of the last chunk, corruption in the middle, errors naming the path and
// offset, and what compression buys on real-looking motion.
#include <gtest/gtest.h>

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/common/record/recording.h>
#include "tests/support/clips.h"
#include "tests/support/fd.h"
#include "tests/support/synthetic.h"

namespace ks {
namespace {

using test::Rng;

// A file in the temp directory, removed at the end of the test.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& name)
        : path((std::filesystem::temp_directory_path() /
                (std::string("ks_test_recording_") + std::to_string(::getpid()) + "_" + name + ".ksrec"))
                   .string()) {
        std::filesystem::remove(path);
    }
    ~TempFile() { std::filesystem::remove(path); }
};

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
void spit(const std::string& path, const std::string& bytes, size_t n) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(n));
}

// The message of the std::runtime_error `f` throws (fails the test when it throws nothing).
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a std::runtime_error";
    return {};
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Three skeletons (the 21-joint humanoid, a random 9-joint one, a single joint) and five
// characters with scattered ids.
RecordingHeader make_header() {
    Rng rng(11);
    RecordingHeader h;
    h.tick_hz = 60.0f;
    h.snapshot_hz = 20.0f;
    h.scenario = "kinesync-server --characters 5 --clips builtin:walk,run \"quoted\" \xC3\xA9t\xC3\xA9\nsecond line";
    h.seed = 0xFEDCBA9876543210ull;
    h.created_unix_s = 1'700'000'123;
    h.skeletons = {builtin_skeleton(), test::random_skeleton(9, rng), test::random_skeleton(1, rng)};
    h.skeleton_names = {"builtin", "random9", ""};
    h.metres_per_unit = {1.0f, 0.05644f, 0.01f};
    h.characters = {{3, 0, "alice"}, {10, 1, "bob"}, {500, 2, ""}, {65535, 0, "max id"}, {0, 1, "zero"}};
    return h;
}

int joints_of(const RecordingHeader& h, uint16_t id) {
    for (const auto& c : h.characters)
        if (c.id == id) return h.skeletons[c.skeleton].size();
    return -1;
}

// Frame `i`: a varying subset of the characters with random poses (non-finite and signed-zero
// values included: the recording keeps bits), varying epochs, and now and then events.
RecordedFrame make_frame(const RecordingHeader& h, uint32_t i, Rng& rng) {
    RecordedFrame f;
    f.tick = 1000 + 3 * i;
    for (size_t k = 0; k < h.characters.size(); ++k) {
        if ((i + k) % 4 == 3) continue;  // not every character every frame
        RecordedCharacter c;
        c.id = h.characters[k].id;
        c.epoch = uint16_t(i / 10 + k);
        c.pose = test::random_pose(joints_of(h, c.id), rng);
        if (i % 5 == 0) {
            c.pose.pos[0].x = -0.0f;
            c.pose.vel[0].y = std::numeric_limits<float>::quiet_NaN();
            c.pose.ang[0].z = std::numeric_limits<float>::infinity();
            c.pose.svl[0].x = std::numeric_limits<float>::denorm_min();
        }
        f.characters.push_back(std::move(c));
    }
    if (i % 6 == 1) f.events.push_back({h.characters.front().id, uint16_t(i), 0, f.tick});
    if (i % 9 == 2) {
        f.events.push_back({h.characters.back().id, 7, 1, f.tick + 1});
        f.events.push_back({h.characters.back().id, 65535, 200, 0xFFFFFFFFu});  // unknown kinds are kept
    }
    return f;
}

void expect_frames_equal(const std::vector<RecordedFrame>& got, const std::vector<RecordedFrame>& want, size_t count) {
    ASSERT_EQ(got.size(), count);
    ASSERT_LE(count, want.size());
    for (size_t i = 0; i < count; ++i) {
        const RecordedFrame& a = got[i];
        const RecordedFrame& b = want[i];
        ASSERT_EQ(a.tick, b.tick) << "frame " << i;
        ASSERT_EQ(a.characters.size(), b.characters.size()) << "frame " << i;
        for (size_t k = 0; k < a.characters.size(); ++k) {
            const RecordedCharacter& x = a.characters[k];
            const RecordedCharacter& y = b.characters[k];
            EXPECT_EQ(x.id, y.id);
            EXPECT_EQ(x.epoch, y.epoch);
            EXPECT_TRUE(same_bits(x.pose.pos, y.pose.pos) && same_bits(x.pose.rot, y.pose.rot) &&
                        same_bits(x.pose.scl, y.pose.scl) && same_bits(x.pose.vel, y.pose.vel) &&
                        same_bits(x.pose.ang, y.pose.ang) && same_bits(x.pose.svl, y.pose.svl))
                << "frame " << i << " character " << x.id << ": pose differs";
        }
        ASSERT_EQ(a.events.size(), b.events.size()) << "frame " << i;
        for (size_t e = 0; e < a.events.size(); ++e) {
            EXPECT_EQ(a.events[e].character, b.events[e].character);
            EXPECT_EQ(a.events[e].epoch, b.events[e].epoch);
            EXPECT_EQ(a.events[e].kind, b.events[e].kind);
            EXPECT_EQ(a.events[e].tick, b.events[e].tick);
        }
    }
}

// Writes `frames` and returns the file offset each chunk starts at and the number of frames in
// the file after each chunk (index c: chunk c).
struct Written {
    std::vector<size_t> chunk_start, frames_after_chunk;
    size_t size = 0, raw = 0;
};
Written write_recording(const std::string& path, const RecordingHeader& h, const std::vector<RecordedFrame>& frames,
                        int frames_per_chunk) {
    Written w;
    RecordingWriter writer(path, h, frames_per_chunk);
    size_t before = writer.bytes_written();
    auto note = [&] {
        if (writer.bytes_written() != before) {
            w.chunk_start.push_back(before);
            w.frames_after_chunk.push_back(writer.frames_written());
            before = writer.bytes_written();
        }
    };
    for (const RecordedFrame& f : frames) {
        writer.write(f);
        note();
    }
    writer.flush();
    note();
    writer.close();
    w.size = writer.bytes_written();
    w.raw = writer.raw_bytes_written();
    return w;
}

TEST(Recording, Crc32KnownValues) {
    EXPECT_EQ(recording_crc32("123456789", 9), 0xCBF43926u);
    EXPECT_EQ(recording_crc32("", 0), 0u);
    // Running checksum.
    EXPECT_EQ(recording_crc32("6789", 4, recording_crc32("12345", 5)), 0xCBF43926u);
}

TEST(Recording, RoundTripHeaderAndFrames) {
    TempFile tf("roundtrip");
    const RecordingHeader h = make_header();
    Rng rng(5);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 50; ++i) frames.push_back(make_frame(h, i, rng));
    frames.push_back({});  // an empty frame (tick 0, no characters, no events)
    frames.push_back({77, {}, {{10, 1, 1, 77}}});  // events only
    const Written w = write_recording(tf.path, h, frames, 7);
    EXPECT_EQ(std::filesystem::file_size(tf.path), w.size);

    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_FALSE(r.truncated);
    EXPECT_TRUE(r.warning.empty()) << r.warning;
    EXPECT_EQ(r.chunks, (frames.size() + 6) / 7);
    const RecordingHeader& g = r.header;
    EXPECT_EQ(g.tick_hz, h.tick_hz);
    EXPECT_EQ(g.snapshot_hz, h.snapshot_hz);
    EXPECT_EQ(g.scenario, h.scenario);
    EXPECT_EQ(g.seed, h.seed);
    EXPECT_EQ(g.created_unix_s, h.created_unix_s);
    ASSERT_EQ(g.skeletons.size(), h.skeletons.size());
    for (size_t s = 0; s < h.skeletons.size(); ++s) {
        EXPECT_EQ(g.skeletons[s].names, h.skeletons[s].names);
        EXPECT_EQ(g.skeletons[s].parents, h.skeletons[s].parents);
        EXPECT_TRUE(same_bits(g.skeletons[s].offsets, h.skeletons[s].offsets));
    }
    EXPECT_EQ(g.skeleton_names, h.skeleton_names);
    EXPECT_TRUE(same_bits(g.metres_per_unit, h.metres_per_unit));
    ASSERT_EQ(g.characters.size(), h.characters.size());
    for (size_t k = 0; k < h.characters.size(); ++k) {
        EXPECT_EQ(g.characters[k].id, h.characters[k].id);
        EXPECT_EQ(g.characters[k].skeleton, h.characters[k].skeleton);
        EXPECT_EQ(g.characters[k].name, h.characters[k].name);
    }
    expect_frames_equal(r.frames, frames, frames.size());
}

TEST(Recording, StreamingReadGivesTheSameFrames) {
    TempFile tf("streaming");
    const RecordingHeader h = make_header();
    Rng rng(15);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 25; ++i) frames.push_back(make_frame(h, i, rng));
    const Written w = write_recording(tf.path, h, frames, 7);  // 7, 7, 7, 4
    std::vector<RecordedFrame> got;
    RecordingReadResult r = read_recording(tf.path, [&](RecordedFrame&& f) { got.push_back(std::move(f)); });
    EXPECT_TRUE(r.frames.empty());
    EXPECT_EQ(r.chunks, 4u);
    EXPECT_EQ(r.header.scenario, h.scenario);
    expect_frames_equal(got, frames, frames.size());
    // Cut inside the last chunk: the three complete chunks, and the same warning as read_recording.
    const std::string bytes = slurp(tf.path);
    spit(tf.path, bytes, w.chunk_start.back() + 30);
    got.clear();
    r = read_recording(tf.path, [&](RecordedFrame&& f) { got.push_back(std::move(f)); });
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.warning, read_recording(tf.path).warning);
    EXPECT_NE(r.warning.find("21 frames in 3 complete chunks"), std::string::npos) << r.warning;
    expect_frames_equal(got, frames, 21);
}

TEST(Recording, StreamHoldsOneChunkAtATime) {
    // 130 frames in chunks of 7 (19 chunks): RecordingStream hands out the same frames as
    // read_recording, never holding more than the current chunk's.
    TempFile tf("stream_bounded");
    const RecordingHeader h = make_header();
    Rng rng(17);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 130; ++i) frames.push_back(make_frame(h, i, rng));
    const Written w = write_recording(tf.path, h, frames, 7);
    ASSERT_EQ(w.chunk_start.size(), 19u);
    RecordingStream s(tf.path);
    EXPECT_EQ(s.path(), tf.path);
    EXPECT_EQ(s.header().scenario, h.scenario);
    EXPECT_EQ(s.header().characters.size(), h.characters.size());
    EXPECT_EQ(s.chunks(), 0u) << "nothing read past the header on opening";
    EXPECT_EQ(s.buffered_frames(), 0u);
    std::vector<RecordedFrame> got;
    size_t most_buffered = 0;
    RecordedFrame f;
    while (s.next(f)) {
        got.push_back(std::move(f));
        most_buffered = std::max(most_buffered, s.buffered_frames());
        ASSERT_LE(s.buffered_frames(), 6u) << "after frame " << got.size();
        ASSERT_EQ(s.frames_read(), got.size());
        ASSERT_EQ(s.chunks(), (got.size() + 6) / 7) << "chunks are read as the frames are asked for";
    }
    EXPECT_EQ(most_buffered, 6u);
    EXPECT_FALSE(s.next(f)) << "the end stays the end";
    EXPECT_FALSE(s.truncated());
    EXPECT_EQ(s.chunks(), 19u);
    EXPECT_EQ(s.offset(), w.size);
    EXPECT_EQ(s.file_size(), w.size);
    expect_frames_equal(got, frames, frames.size());
}

TEST(Recording, StreamReportsDamageAsReadRecordingDoes) {
    const RecordingHeader h = make_header();
    Rng rng(19);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 30; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile full("stream_damage_full"), bad("stream_damage_bad");
    const Written w = write_recording(full.path, h, frames, 6);  // 5 chunks
    ASSERT_EQ(w.chunk_start.size(), 5u);
    const std::string bytes = slurp(full.path);
    auto drain = [](RecordingStream& s, std::vector<RecordedFrame>& got) {
        RecordedFrame f;
        while (s.next(f)) got.push_back(std::move(f));
    };
    // A damaged tail: the complete chunks, then the end, with read_recording's warning.
    spit(bad.path, bytes, w.chunk_start.back() + 33);
    {
        RecordingStream s(bad.path);
        std::vector<RecordedFrame> got;
        drain(s, got);
        EXPECT_TRUE(s.truncated());
        EXPECT_EQ(s.warning(), read_recording(bad.path).warning);
        EXPECT_EQ(s.warning().rfind(bad.path + ": offset " + std::to_string(w.chunk_start.back()) + ": ", 0), 0u) << s.warning();
        expect_frames_equal(got, frames, 24);
    }
    // Corruption in the middle (chunk 2): the frames of chunks 0 and 1, then read_recording's error.
    std::string b = bytes;
    b[w.chunk_start[2] + 20 + 100] ^= 0x40;
    spit(bad.path, b, b.size());
    {
        RecordingStream s(bad.path);
        std::vector<RecordedFrame> got;
        const std::string e = error_of([&] { drain(s, got); });
        EXPECT_EQ(e, error_of([&] { read_recording(bad.path); }));
        EXPECT_EQ(e.rfind(bad.path + ": offset " + std::to_string(w.chunk_start[2]) + ": CRC mismatch", 0), 0u) << e;
        expect_frames_equal(got, frames, 12);
    }
    // A bad header: the constructor throws, naming the path and offset.
    b = bytes;
    b[8 + 20 + 10] ^= 0x01;
    spit(bad.path, b, b.size());
    EXPECT_EQ(error_of([&] { RecordingStream s(bad.path); }).rfind(bad.path + ": offset 8: header block: CRC mismatch", 0), 0u);
    EXPECT_EQ(error_of([&] { RecordingStream s(bad.path + ".missing"); }).rfind(bad.path + ".missing: cannot open", 0), 0u);
}

TEST(Recording, HeaderDefaults) {
    // Empty name / unit lists, no characters, created time filled in by the writer.
    TempFile tf("defaults");
    RecordingHeader h;
    Rng rng(3);
    h.skeletons = {test::random_skeleton(4, rng)};
    const int64_t before = int64_t(std::time(nullptr));
    { RecordingWriter w(tf.path, h); }
    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_EQ(r.header.skeleton_names, std::vector<std::string>{""});
    EXPECT_EQ(r.header.metres_per_unit, std::vector<float>{1.0f});
    EXPECT_GE(r.header.created_unix_s, before);
    EXPECT_LE(r.header.created_unix_s, int64_t(std::time(nullptr)) + 1);
    EXPECT_TRUE(r.frames.empty());
    EXPECT_EQ(r.chunks, 0u);
    EXPECT_FALSE(r.truncated);
}

TEST(Recording, ChunkBoundaries) {
    const RecordingHeader h = make_header();
    Rng rng(9);
    std::vector<RecordedFrame> all;
    for (uint32_t i = 0; i < 130; ++i) all.push_back(make_frame(h, i, rng));
    for (int fpc : {1, 7, 60}) {
        for (size_t n : {size_t(0), size_t(1), size_t(6), size_t(7), size_t(8), size_t(59), size_t(60), size_t(61), size_t(130)}) {
            SCOPED_TRACE(std::string("frames_per_chunk ") + std::to_string(fpc) + ", " + std::to_string(n) + " frames");
            TempFile tf("chunks");
            const std::vector<RecordedFrame> frames(all.begin(), all.begin() + std::ptrdiff_t(n));
            const Written w = write_recording(tf.path, h, frames, fpc);
            const size_t chunks = (n + size_t(fpc) - 1) / size_t(fpc);
            EXPECT_EQ(w.chunk_start.size(), chunks);
            for (size_t c = 0; c < w.frames_after_chunk.size(); ++c)
                EXPECT_EQ(w.frames_after_chunk[c], std::min(n, (c + 1) * size_t(fpc)));
            const RecordingReadResult r = read_recording(tf.path);
            EXPECT_FALSE(r.truncated);
            EXPECT_EQ(r.chunks, chunks);
            expect_frames_equal(r.frames, frames, n);
        }
    }
}

TEST(Recording, ChunksReachTheFileAsTheyAreWritten) {
    // What a crash leaves: every complete chunk is in the file (fflush'ed) when write() returns;
    // flush() writes a short chunk; the destructor writes what is pending.
    TempFile tf("flushed");
    const RecordingHeader h = make_header();
    Rng rng(4);
    std::vector<RecordedFrame> frames;
    {
        RecordingWriter w(tf.path, h, 5);
        EXPECT_EQ(std::filesystem::file_size(tf.path), w.bytes_written());
        for (uint32_t i = 0; i < 23; ++i) {
            frames.push_back(make_frame(h, i, rng));
            w.write(frames.back());
            EXPECT_EQ(std::filesystem::file_size(tf.path), w.bytes_written()) << "after frame " << i;
            EXPECT_EQ(w.frames_written() + w.frames_pending(), i + 1);
            EXPECT_EQ(w.frames_pending(), (i < 12 ? i + 1 : i + 1 - 12) % 5);
            if (i == 11) {
                w.flush();  // chunk of 2
                EXPECT_EQ(w.frames_pending(), 0u);
                EXPECT_EQ(read_recording(tf.path).frames.size(), 12u);
            }
        }
        // 23 frames: chunks of 5, 5, 2 (flush), 5, 5, and 1 pending.
        EXPECT_EQ(w.frames_written(), 22u);
        const RecordingReadResult mid = read_recording(tf.path);  // readable while still open
        EXPECT_FALSE(mid.truncated);
        EXPECT_EQ(mid.frames.size(), 22u);
    }  // destructor: writes the last frame
    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_EQ(r.chunks, 6u);
    expect_frames_equal(r.frames, frames, frames.size());
}

TEST(Recording, TruncatedAtEveryOffsetOfTheLastChunk) {
    // Small skeletons keep the last chunk a few kB: every cut is read back.
    Rng rng(21);
    RecordingHeader h;
    h.skeletons = {test::random_skeleton(5, rng)};
    h.characters = {{1, 0, "a"}, {2, 0, "b"}};
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 22; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile full("trunc_full"), cut("trunc_cut");
    const Written w = write_recording(full.path, h, frames, 4);  // chunks of 4, 4, 4, 4, 4, 2
    const std::string bytes = slurp(full.path);
    ASSERT_EQ(bytes.size(), w.size);
    ASSERT_EQ(w.chunk_start.size(), 6u);

    // The frames in the chunks that end at or before `n`, and the chunk cut through.
    auto expected = [&](size_t n, size_t* cut_chunk_start) {
        size_t kept = 0;
        for (size_t c = 0; c < w.chunk_start.size(); ++c) {
            const size_t end = c + 1 < w.chunk_start.size() ? w.chunk_start[c + 1] : w.size;
            if (end <= n) {
                kept = w.frames_after_chunk[c];
            } else {
                *cut_chunk_start = w.chunk_start[c];
                break;
            }
        }
        return kept;
    };
    std::vector<size_t> cuts;
    for (size_t n = w.chunk_start.back(); n < w.size; ++n) cuts.push_back(n);  // every byte of the last chunk
    for (size_t n = w.chunk_start.front(); n < w.chunk_start.back(); n += 37) cuts.push_back(n);  // earlier chunks
    for (size_t c = 1; c < w.chunk_start.size(); ++c) cuts.push_back(w.chunk_start[c] - 1);
    int checked = 0;
    for (size_t n : cuts) {
        spit(cut.path, bytes, n);
        size_t cut_at = 0;
        const size_t kept = expected(n, &cut_at);
        RecordingReadResult r;
        try {
            r = read_recording(cut.path);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "cut at " << n << ": " << e.what();
            continue;
        }
        const bool at_boundary = std::find(w.chunk_start.begin(), w.chunk_start.end(), n) != w.chunk_start.end();
        EXPECT_EQ(r.truncated, !at_boundary) << "cut at " << n;
        if (!at_boundary) {
            EXPECT_NE(r.warning.find(cut.path + ": offset " + std::to_string(cut_at) + ": "), std::string::npos)
                << "cut at " << n << ": " << r.warning;
        }
        expect_frames_equal(r.frames, frames, kept);
        if (::testing::Test::HasFailure()) {
            ADD_FAILURE() << "first failing cut at byte " << n << " of " << w.size;
            break;
        }
        ++checked;
    }
    EXPECT_GT(checked, 1000);
    // The complete file.
    EXPECT_FALSE(read_recording(full.path).truncated);

    // Cut inside the header block or the file magic: nothing to return, an error naming where.
    for (size_t n : {size_t(0), size_t(5), size_t(8), size_t(15), w.chunk_start.front() - 1}) {
        spit(cut.path, bytes, n);
        const std::string e = error_of([&] { read_recording(cut.path); });
        EXPECT_EQ(e.rfind(cut.path + ": offset " + std::string(n < 8 ? "0" : "8") + ": ", 0), 0u) << e;
    }
}

TEST(Recording, ZeroFilledTailIsATruncation) {
    // After a power loss a file can end in zeros (its size was extended, the data never written).
    Rng rng(2);
    RecordingHeader h;
    h.skeletons = {test::random_skeleton(3, rng)};
    h.characters = {{1, 0, "a"}};
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 10; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile tf("zeros");
    const Written w = write_recording(tf.path, h, frames, 4);
    std::string bytes = slurp(tf.path);
    bytes.resize(w.chunk_start.back() + 500, '\0');  // the last chunk replaced by zeros
    spit(tf.path, bytes, bytes.size());
    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_TRUE(r.truncated);
    EXPECT_NE(r.warning.find(std::string("offset ") + std::to_string(w.chunk_start.back())), std::string::npos) << r.warning;
    expect_frames_equal(r.frames, frames, 8);
}

TEST(Recording, CorruptionInTheMiddleIsAnError) {
    const RecordingHeader h = make_header();
    Rng rng(8);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 30; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile full("corrupt_full"), bad("corrupt_bad");
    const Written w = write_recording(full.path, h, frames, 6);  // 5 chunks
    ASSERT_EQ(w.chunk_start.size(), 5u);
    const std::string bytes = slurp(full.path);
    auto with_flip = [&](size_t at, uint8_t mask) {
        std::string b = bytes;
        b[at] = char(uint8_t(b[at]) ^ mask);
        spit(bad.path, b, b.size());
    };
    const size_t c2 = w.chunk_start[2];
    struct Case {
        size_t at;
        const char* what;
    };
    const Case cases[] = {
        {c2 + 20 + 100, "CRC mismatch"},          // compressed payload
        {c2 + 1, "block magic"},                  // block magic
        {c2 + 4, "block kind"},                   // kind
        {c2 + 10, ""},                            // compressed size (high byte: out of range or past the end)
        {c2 + 8, "CRC mismatch"},                 // compressed size (low byte: a different span)
        {c2 + 17, "CRC mismatch"},                // stored CRC
        {w.chunk_start[1] - 1, "CRC mismatch"},   // last byte of chunk 0
    };
    for (const Case& c : cases) {
        with_flip(c.at, 0x40);
        const std::string e = error_of([&] { read_recording(bad.path); });
        const size_t block = *std::prev(std::upper_bound(w.chunk_start.begin(), w.chunk_start.end(), c.at));
        EXPECT_EQ(e.rfind(bad.path + ": offset " + std::to_string(block) + ": ", 0), 0u) << "flip at " << c.at << ": " << e;
        EXPECT_NE(e.find(c.what), std::string::npos) << e;
        EXPECT_NE(e.find("valid block follows"), std::string::npos) << e;
    }
    // Raw size wrong (CRC covers only the compressed bytes): the zstd frame's size disagrees.
    with_flip(c2 + 12, 0x01);
    EXPECT_NE(error_of([&] { read_recording(bad.path); }).find(std::string("offset ") + std::to_string(c2) + ": zstd frame declares"),
              std::string::npos);
    // The header block.
    with_flip(8 + 20 + 10, 0x01);
    EXPECT_EQ(error_of([&] { read_recording(bad.path); }).rfind(bad.path + ": offset 8: header block: CRC mismatch", 0), 0u);
    // The same damage in the last chunk is a damaged tail: the earlier chunks are kept.
    with_flip(w.chunk_start.back() + 20 + 50, 0x01);
    const RecordingReadResult r = read_recording(bad.path);
    EXPECT_TRUE(r.truncated);
    EXPECT_NE(r.warning.find(std::string("offset ") + std::to_string(w.chunk_start.back()) + ": CRC mismatch"), std::string::npos)
        << r.warning;
    expect_frames_equal(r.frames, frames, 24);
}

TEST(Recording, SoundBlockThatIsNotAChunkIsAnError) {
    // A block whose CRC and zstd frame are right but whose content is not a Chunk flatbuffer is
    // not crash damage: an error, even at the end of the file.
    const RecordingHeader h = make_header();
    Rng rng(12);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 8; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile tf("not_a_chunk");
    const Written w = write_recording(tf.path, h, frames, 4);
    std::string bytes = slurp(tf.path);
    std::string raw(300, '\0');
    for (char& c : raw) c = char(rng.gen());
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3));
    auto u32 = [](uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; };
    bytes += "KSCH" + u32(1) + u32(uint32_t(z.size())) + u32(uint32_t(raw.size())) +
             u32(recording_crc32(z.data(), z.size())) + z;
    spit(tf.path, bytes, bytes.size());
    const std::string e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset " + std::to_string(w.size) + ": chunk block: expected a Chunk flatbuffer", 0), 0u)
        << e;
}

TEST(Recording, RandomDamageNeverCrashes) {
    // Flipped bytes, cuts and appended garbage anywhere: a result or a std::runtime_error, never
    // undefined behaviour (this runs under ASan + UBSan in ./check.sh). Damage limited to the
    // last chunk always reads back every earlier chunk.
    const RecordingHeader h = make_header();
    Rng rng(13);
    std::vector<RecordedFrame> frames;
    for (uint32_t i = 0; i < 20; ++i) frames.push_back(make_frame(h, i, rng));
    TempFile full("damage_full"), bad("damage_bad");
    const Written w = write_recording(full.path, h, frames, 6);  // 6, 6, 6, 2
    const std::string bytes = slurp(full.path);
    std::mt19937 gen(99);
    int errors = 0, truncated = 0;
    for (int round = 0; round < 400; ++round) {
        std::string b = bytes;
        const bool tail_only = round % 2 == 0;
        const size_t lo = tail_only ? w.chunk_start.back() : 0;
        const int flips = 1 + int(gen() % 4);
        for (int k = 0; k < flips; ++k) b[lo + gen() % (b.size() - lo)] ^= char(1 + gen() % 255);
        if (gen() % 3 == 0) b.resize(lo + gen() % (b.size() - lo));
        if (gen() % 4 == 0)
            for (int k = int(gen() % 64); k > 0; --k) b += char(gen());
        spit(bad.path, b, b.size());
        try {
            const RecordingReadResult r = read_recording(bad.path);
            truncated += r.truncated;
            if (tail_only) {
                EXPECT_GE(r.frames.size(), 18u) << "round " << round;
                expect_frames_equal(r.frames, frames, std::min<size_t>(r.frames.size(), frames.size()));
            }
        } catch (const std::runtime_error& e) {
            ++errors;
            EXPECT_EQ(std::string(e.what()).rfind(bad.path + ": offset ", 0), 0u) << e.what();
        }
    }
    EXPECT_GT(errors, 0);
    EXPECT_GT(truncated, 0);
}

TEST(Recording, ErrorsNameThePath) {
    TempFile tf("errors");
    // Missing file.
    std::string e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": cannot open", 0), 0u) << e;
    // Empty file, short file, wrong magic.
    spit(tf.path, "", 0);
    e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset 0: expected the file magic", 0), 0u) << e;
    spit(tf.path, "KSREC", 5);
    e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset 0: expected the file magic", 0), 0u) << e;
    const std::string other = "BVH HIERARCHY\nROOT Hips\n{\n";
    spit(tf.path, other, other.size());
    e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset 0: expected the file magic \"KSREC001\"", 0), 0u) << e;
    EXPECT_NE(e.find("got \"BVH HIER\""), std::string::npos) << e;
    // A future version of the file format.
    {
        RecordingWriter w(tf.path, make_header());
    }
    std::string bytes = slurp(tf.path);
    bytes[7] = '2';
    spit(tf.path, bytes, bytes.size());
    e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset 0: ", 0), 0u) << e;
    // A header block that is not a header.
    {
        RecordingWriter w(tf.path, make_header());
    }
    bytes = slurp(tf.path);
    bytes[8 + 4] = 1;  // kind: chunk (the CRC covers only the payload)
    spit(tf.path, bytes, bytes.size());
    e = error_of([&] { read_recording(tf.path); });
    EXPECT_EQ(e.rfind(tf.path + ": offset 8: expected the header block", 0), 0u) << e;
    // The writer: a directory that does not exist.
    const std::string nowhere = tf.path + ".d/sub/file.ksrec";
    e = error_of([&] { RecordingWriter w(nowhere, make_header()); });
    EXPECT_EQ(e.rfind(nowhere + ": cannot open for writing", 0), 0u) << e;
}

TEST(Recording, WriterRejectsWhatTheFormatCannotHold) {
    TempFile tf("reject");
    RecordingHeader h = make_header();
    {
        RecordingHeader bad = h;
        bad.characters.push_back({3, 0, "duplicate id"});
        EXPECT_THROW(RecordingWriter(tf.path, bad), std::invalid_argument);
        bad = h;
        bad.characters[0].skeleton = 3;
        EXPECT_THROW(RecordingWriter(tf.path, bad), std::invalid_argument);
        bad = h;
        bad.skeleton_names.pop_back();
        EXPECT_THROW(RecordingWriter(tf.path, bad), std::invalid_argument);
        bad = h;
        bad.skeletons[1].parents[0] = 4;
        EXPECT_THROW(RecordingWriter(tf.path, bad), std::invalid_argument);
        EXPECT_THROW(RecordingWriter(tf.path, h, 0), std::invalid_argument);
        EXPECT_FALSE(std::filesystem::exists(tf.path));  // nothing created for a rejected header
    }
    Rng rng(1);
    std::vector<RecordedFrame> kept;
    RecordingWriter w(tf.path, h, 3);
    kept.push_back(make_frame(h, 0, rng));
    w.write(kept.back());
    RecordedFrame f = make_frame(h, 1, rng);
    f.characters[0].id = 4;  // unknown
    EXPECT_THROW(w.write(f), std::invalid_argument);
    f = make_frame(h, 1, rng);
    f.characters[1].pose.rot.pop_back();  // one array short
    EXPECT_THROW(w.write(f), std::invalid_argument);
    f = make_frame(h, 1, rng);
    f.characters.push_back(f.characters[0]);  // twice
    EXPECT_THROW(w.write(f), std::invalid_argument);
    f = make_frame(h, 1, rng);
    f.events.push_back({42, 0, 0, 0});  // event for an unknown character
    EXPECT_THROW(w.write(f), std::invalid_argument);
    kept.push_back(make_frame(h, 2, rng));
    w.write(kept.back());
    w.close();
    EXPECT_THROW(w.write(kept.back()), std::runtime_error);
    const RecordingReadResult r = read_recording(tf.path);  // rejected frames left no trace
    expect_frames_equal(r.frames, kept, kept.size());
}

TEST(Recording, MovedWriterKeepsWriting) {
    TempFile tf("moved");
    const RecordingHeader h = make_header();
    Rng rng(6);
    std::vector<RecordedFrame> frames;
    RecordingWriter a(tf.path, h, 4);
    for (uint32_t i = 0; i < 5; ++i) {
        frames.push_back(make_frame(h, i, rng));
        a.write(frames.back());
    }
    RecordingWriter b(std::move(a));
    for (uint32_t i = 5; i < 9; ++i) {
        frames.push_back(make_frame(h, i, rng));
        b.write(frames.back());
    }
    b.close();
    expect_frames_equal(read_recording(tf.path).frames, frames, frames.size());
}

TEST(Recording, CompressionOnBuiltinMotion) {
    // A realistic session: 12 characters on the 21-joint humanoid playing the built-in clips
    // (cubic sampling with velocities), 10 s at 60 Hz, one frame per tick, one chunk per second.
    RecordingHeader h;
    h.skeletons = {builtin_skeleton()};
    h.skeleton_names = {"builtin"};
    const int nchar = 12;
    for (int k = 0; k < nchar; ++k) h.characters.push_back({uint16_t(k), 0, std::string("c") + std::to_string(k)});
    const std::vector<Clip> clips = builtin_clips(60.0f);
    const int joints = h.skeletons[0].size();
    const uint32_t ticks = 600;
    TempFile tf("compression");
    size_t file_bytes = 0, raw_bytes = 0;
    {
        RecordingWriter w(tf.path, h, 60);
        RecordedFrame f;
        f.characters.resize(size_t(nchar));
        for (int k = 0; k < nchar; ++k) f.characters[size_t(k)].pose.resize(joints);
        for (uint32_t t = 0; t < ticks; ++t) {
            f.tick = t;
            for (int k = 0; k < nchar; ++k) {
                RecordedCharacter& c = f.characters[size_t(k)];
                c.id = uint16_t(k);
                op_sample_cubic(c.pose, clips[size_t(k) % clips.size()], double(t) / 60.0 + 0.37 * k, Wrap::Loop);
            }
            w.write(f);
        }
        w.close();
        file_bytes = w.bytes_written();
        raw_bytes = w.raw_bytes_written();
    }
    const double ratio = double(raw_bytes) / double(file_bytes);
    const double per_char_tick = double(file_bytes) / double(ticks * nchar);
    const double plain = double(joints) * (6 * 12 + 4);  // 19 floats per joint, no structure
    test::record_figure("Recording: zstd ratio flatbuffer/file, builtin motion (12 characters)", ratio);
    test::record_figure("Recording: file bytes per character per tick, builtin (21 joints)", per_char_tick);
    test::record_figure("Recording: file bytes per joint per tick, builtin (plain floats: 76)", per_char_tick / joints);
    std::printf("recording: %zu raw -> %zu file bytes, ratio %.2f; %.0f bytes per character per tick (%.1f per joint; plain floats %.0f)\n",
                raw_bytes, file_bytes, ratio, per_char_tick, per_char_tick / joints, plain);
    EXPECT_GT(ratio, 1.5);
    EXPECT_LT(per_char_tick, plain);
    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_EQ(r.frames.size(), ticks);
    EXPECT_EQ(r.chunks, 10u);
}

TEST(Recording, CompressionOnSharedClips) {
    // The same on the shared motion capture (31 to 100 joints, noisy): 14 characters, two per
    // clip, 10 s at 60 Hz. zstd levels 1 / 3 / 9 / 19 measured 3.46 / 3.49 / 3.54 / 3.65 here, the
    // last 20 times slower: the default 3 it is.
    KS_REQUIRE_MOCAP();
    RecordingHeader h;
    std::vector<const Clip*> clips;
    for (const auto& info : test::shared_clip_infos()) {
        clips.push_back(&test::shared_clip(info.file));
        h.skeletons.push_back(clips.back()->skeleton);
        h.skeleton_names.push_back(info.file);
        h.metres_per_unit.push_back(clips.back()->metres_per_unit);
    }
    const int nchar = 2 * int(clips.size());
    size_t joints_per_tick = 0;
    for (int k = 0; k < nchar; ++k) {
        h.characters.push_back({uint16_t(k), uint16_t(k % int(clips.size())), std::string("c") + std::to_string(k)});
        joints_per_tick += size_t(clips[size_t(k) % clips.size()]->joints());
    }
    const uint32_t ticks = 600;
    TempFile tf("compression_shared");
    size_t file_bytes = 0, raw_bytes = 0;
    {
        RecordingWriter w(tf.path, h, 60);
        RecordedFrame f;
        f.characters.resize(size_t(nchar));
        for (int k = 0; k < nchar; ++k) f.characters[size_t(k)].pose.resize(clips[size_t(k) % clips.size()]->joints());
        for (uint32_t t = 0; t < ticks; ++t) {
            f.tick = t;
            for (int k = 0; k < nchar; ++k) {
                RecordedCharacter& c = f.characters[size_t(k)];
                c.id = uint16_t(k);
                const Clip& clip = *clips[size_t(k) % clips.size()];
                op_sample_cubic(c.pose, clip, std::fmod(double(t) / 60.0 + 1.3 * k, double(clip.duration())), Wrap::Loop);
            }
            w.write(f);
        }
        w.close();
        file_bytes = w.bytes_written();
        raw_bytes = w.raw_bytes_written();
    }
    const double ratio = double(raw_bytes) / double(file_bytes);
    const double per_char_tick = double(file_bytes) / double(ticks * uint32_t(nchar));
    const double per_joint_tick = double(file_bytes) / double(size_t(ticks) * joints_per_tick);
    test::record_figure("Recording: zstd ratio flatbuffer/file, shared clips (14 characters)", ratio);
    test::record_figure("Recording: file bytes per character per tick, shared clips (31-100 j.)", per_char_tick);
    test::record_figure("Recording: file bytes per joint per tick, shared clips (plain: 76)", per_joint_tick);
    std::printf("recording, shared clips: %zu raw -> %zu file bytes, ratio %.2f; %.0f bytes per character per tick (%.1f per joint)\n",
                raw_bytes, file_bytes, ratio, per_char_tick, per_joint_tick);
    EXPECT_GT(ratio, 2.0);
    EXPECT_LT(per_joint_tick, 76.0 / 2);
    const RecordingReadResult r = read_recording(tf.path);
    EXPECT_EQ(r.frames.size(), ticks);
    EXPECT_FALSE(r.truncated);
}

}  // namespace
}  // namespace ks
