#pragma once
// Session recordings: what an authoritative server computed, tick by tick, at full float precision
// (poses with their velocities, character epochs and events), written while the session runs and
// read back by the replay tool and tests. The format is schema/recording.fbs: the file magic
// "KSREC001", a header block, then chunk blocks of `frames_per_chunk` frames, each a
// zstd-compressed flatbuffer behind a 20-byte block header carrying its sizes and a CRC-32.
//
// Crash safety: every chunk goes to the file (and is fflush'ed) as soon as it is full, so a crash
// loses at most the frames of the chunk being filled. read_recording() returns every complete
// chunk of a file cut short and says where it stopped; corruption followed by valid blocks is an
// error, never silently skipped.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/skeleton.h>

namespace ks {

struct RecordingHeader {
    float tick_hz = 60.0f;
    float snapshot_hz = 30.0f;
    std::string scenario;  // free text, e.g. the server's command line
    uint64_t seed = 0;
    // Skeleton ids are indexes into these. skeleton_names and metres_per_unit are either empty
    // (names "", 1 m per unit) or as long as `skeletons`; read_recording() always fills them.
    std::vector<Skeleton> skeletons;
    std::vector<std::string> skeleton_names;
    std::vector<float> metres_per_unit;
    struct CharacterInfo {
        uint16_t id = 0, skeleton = 0;
        std::string name;
    };
    std::vector<CharacterInfo> characters;  // ids unique
    // Seconds since the Unix epoch when the recording started: the writer stores the current
    // time when this is 0; read_recording() returns the stored value.
    int64_t created_unix_s = 0;
};

struct RecordedEvent {
    uint16_t character = 0;
    uint16_t epoch = 0;  // the character's epoch from `tick` on
    uint8_t kind = 0;    // 0 teleport, 1 reset (other values are kept as they are)
    uint32_t tick = 0;
};

struct RecordedCharacter {
    uint16_t id = 0;
    uint16_t epoch = 0;
    Pose pose;  // the character's skeleton's joints; joint 0 (the root) in world space, the others local
    // The look-ahead the server computed at this tick: the pose ahead_s seconds later assuming no
    // decision meanwhile (ahead_s 0: none, and `ahead` is empty).
    float ahead_s = 0.0f;
    Pose ahead;
    uint16_t ahead_plan = 0;  // the plan followed (also without a look-ahead): +1 at each decision the earlier look-aheads could not know
};

struct RecordedFrame {
    uint32_t tick = 0;
    std::vector<RecordedCharacter> characters;
    std::vector<RecordedEvent> events;  // at this tick, or at ticks dropped just before it
    // Ticks the server could not record just before this one (its writer fell behind, e.g. a
    // blocked disk; StreamServer counts them in recording_frames_dropped).
    uint32_t dropped_before = 0;
};

// Appends a recording to `path` (created or truncated). Frames are serialized as they arrive and
// written as one chunk when `frames_per_chunk` have accumulated (or the chunk's flatbuffer passes
// 64 MiB), on flush() and on close(). Throws std::runtime_error naming the path on any I/O
// failure, std::invalid_argument for a header or frame that does not fit the format (unknown
// character, pose size not the skeleton's, ...). Not thread-safe.
class RecordingWriter {
public:
    RecordingWriter(const std::string& path, const RecordingHeader& header, int frames_per_chunk = 60,
                    int zstd_level = 3);
    ~RecordingWriter();  // close(); errors are swallowed there (call close() to see them)
    RecordingWriter(RecordingWriter&&) noexcept;
    RecordingWriter& operator=(RecordingWriter&&) = delete;
    RecordingWriter(const RecordingWriter&) = delete;
    RecordingWriter& operator=(const RecordingWriter&) = delete;

    void write(const RecordedFrame& frame);
    // Writes the pending frames (if any) as a chunk and flushes the file.
    void flush();
    // flush(), then closes the file. Further write()/flush() throw; close() again does nothing.
    void close();

    const std::string& path() const;
    size_t bytes_written() const;     // file bytes so far (magic, header and chunk blocks)
    size_t raw_bytes_written() const; // the same blocks' flatbuffer bytes before compression
    size_t frames_written() const;    // frames in chunks already written
    size_t frames_pending() const;    // frames waiting for the next chunk

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct RecordingReadResult {
    RecordingHeader header;
    std::vector<RecordedFrame> frames;
    bool truncated = false;  // the file ended with an incomplete or corrupt block (a crash)
    std::string warning;     // when truncated: "path: offset N: what was wrong; ... frames kept"
    size_t chunks = 0;       // complete chunks read
};

// Reads a whole recording. Throws std::runtime_error "path: offset N: what was expected" for a
// missing file, a bad file magic, a bad header block, or a bad block followed by valid ones
// (corruption in the middle). A file that ends inside a block, or whose last blocks are corrupt
// with no valid block after them, reads back to its last complete chunk with truncated = true.
RecordingReadResult read_recording(const std::string& path);
// The same, streaming: each frame of each sound chunk goes to `on_frame` as soon as its chunk is
// read and checked (one chunk in memory at a time); the result's `frames` stays empty. Frames of
// the chunks before a corrupt block in the middle are delivered before the error is thrown.
RecordingReadResult read_recording(const std::string& path, const std::function<void(RecordedFrame&&)>& on_frame);

// A recording read frame by frame, in file order, one chunk decoded at a time: what it holds is
// the header and the frames of the current chunk not yet handed out, however long the recording.
// read_recording() is built on it: the same checks, errors and warning. The constructor reads
// the file magic and the header block (and throws as read_recording() does); next() reads on,
// chunk by chunk, and throws at corruption in the middle (after handing out every frame of the
// chunks before it). Not thread-safe.
class RecordingStream {
public:
    explicit RecordingStream(const std::string& path);
    ~RecordingStream();
    RecordingStream(RecordingStream&&) noexcept;
    RecordingStream& operator=(RecordingStream&&) noexcept;
    RecordingStream(const RecordingStream&) = delete;
    RecordingStream& operator=(const RecordingStream&) = delete;

    const std::string& path() const;
    const RecordingHeader& header() const;
    // The next frame (moved into `out`); false at the end of the recording, or at a damaged tail:
    // then truncated() is true and warning() says where and what was kept.
    bool next(RecordedFrame& out);
    bool truncated() const;
    const std::string& warning() const;
    size_t chunks() const;           // chunks read so far
    size_t frames_read() const;      // frames handed out so far
    size_t buffered_frames() const;  // frames of the current chunk not yet handed out
    uint64_t offset() const;         // file offset of the next block to read
    uint64_t file_size() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// CRC-32 (IEEE 802.3 / zlib polynomial, reflected, init and final xor 0xFFFFFFFF). Pass the
// previous result as `crc` to continue a running checksum.
uint32_t recording_crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace ks
