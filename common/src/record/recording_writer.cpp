#include <kinesync/common/record/recording.h>

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "common/src/record/recording_format.h"
#include "schema/recording_generated.h"

namespace ks {

namespace fb = ::flatbuffers;
namespace rec = ::kinesync::rec;
using namespace recording_format;

struct RecordingWriter::Impl {
    std::string path;
    std::FILE* file = nullptr;
    int frames_per_chunk = 60;
    int level = 3;
    ZSTD_CCtx* cctx = nullptr;
    fb::FlatBufferBuilder fbb{1 << 16};
    std::vector<fb::Offset<rec::Frame>> pending;
    std::vector<fb::Offset<rec::CharacterFrame>> chars_tmp;
    std::vector<rec::Event> events_tmp;
    std::vector<uint8_t> cbuf;
    struct CharSlot {
        int joints = 0;
        uint64_t seen = 0;  // frame stamp of the last frame it appeared in
    };
    std::unordered_map<uint16_t, CharSlot> characters;
    uint64_t frame_stamp = 0;
    size_t bytes = 0, raw_bytes = 0, frames_written = 0;
    std::string failure;  // set after an I/O error: every later write/flush throws it
    bool closed = false;

    ~Impl() {
        if (file) std::fclose(file);
        ZSTD_freeCCtx(cctx);
    }

    [[noreturn]] void fail(const std::string& what) {
        failure = path + ": offset " + std::to_string(bytes) + ": " + what;
        throw std::runtime_error(failure);
    }
    void check_usable() const {
        if (!failure.empty()) throw std::runtime_error(path + ": recording writer failed earlier: " + failure);
        if (closed || !file) throw std::runtime_error(path + ": recording writer is closed");
    }

    void write_raw(const void* p, size_t n) {
        if (n && std::fwrite(p, 1, n, file) != n) fail("write failed: " + errno_text(errno));
    }
    void write_block(uint32_t kind, const uint8_t* raw, size_t raw_size) {
        if (raw_size > kMaxBlockBytes) fail("block of " + std::to_string(raw_size) + " bytes exceeds the format's limit");
        cbuf.resize(ZSTD_compressBound(raw_size));
        const size_t csize = ZSTD_compressCCtx(cctx, cbuf.data(), cbuf.size(), raw, raw_size, level);
        if (ZSTD_isError(csize)) fail(std::string("zstd compression failed: ") + ZSTD_getErrorName(csize));
        uint8_t head[kBlockHeaderBytes];
        std::memcpy(head, kBlockMagic, 4);
        put_u32(head + 4, kind);
        put_u32(head + 8, uint32_t(csize));
        put_u32(head + 12, uint32_t(raw_size));
        put_u32(head + 16, recording_crc32(cbuf.data(), csize));
        write_raw(head, sizeof head);
        write_raw(cbuf.data(), csize);
        if (std::fflush(file) != 0) fail("flush failed: " + errno_text(errno));
        bytes += sizeof head + csize;
        raw_bytes += raw_size;
    }

    void write_chunk() {
        if (pending.empty()) return;
        fbb.Finish(rec::CreateChunk(fbb, fbb.CreateVector(pending)));
        const size_t n = pending.size();
        write_block(kKindChunk, fbb.GetBufferPointer(), fbb.GetSize());
        frames_written += n;
        pending.clear();
        fbb.Clear();
    }

    // A vector of FlatBuffers structs from a vector of layout-identical native ones (the bytes
    // are copied as they are). Not CreateUninitializedVectorOfStructs: FlatBuffers 2.0.8 aligns
    // those to sizeof(T), which breaks for 12-byte structs.
    template <class T, class S>
    fb::Offset<fb::Vector<const T*>> structs(const std::vector<S>& v) {
        static_assert(sizeof(T) == sizeof(S) && alignof(T) == alignof(S));
        if (v.empty()) return fbb.CreateVectorOfStructs(static_cast<const T*>(nullptr), 0);
        return fbb.CreateVectorOfStructs(reinterpret_cast<const T*>(v.data()), v.size());
    }
};

namespace {

void validate_header(const RecordingHeader& h) {
    auto bad = [](const std::string& what) { throw std::invalid_argument("recording header: " + what); };
    if (h.skeletons.size() > 65536) bad("more than 65536 skeletons");
    if (!h.skeleton_names.empty() && h.skeleton_names.size() != h.skeletons.size())
        bad("skeleton_names has " + std::to_string(h.skeleton_names.size()) + " entries for " +
            std::to_string(h.skeletons.size()) + " skeletons");
    if (!h.metres_per_unit.empty() && h.metres_per_unit.size() != h.skeletons.size())
        bad("metres_per_unit has " + std::to_string(h.metres_per_unit.size()) + " entries for " +
            std::to_string(h.skeletons.size()) + " skeletons");
    for (size_t s = 0; s < h.skeletons.size(); ++s) {
        const Skeleton& sk = h.skeletons[s];
        const std::string v = sk.validate();
        if (!v.empty()) bad("skeleton " + std::to_string(s) + ": " + v);
        if (sk.size() < 1 || size_t(sk.size()) > recording_format::kMaxJoints)
            bad("skeleton " + std::to_string(s) + " has " + std::to_string(sk.size()) + " joints (1.." +
                std::to_string(recording_format::kMaxJoints) + ")");
        if (!h.metres_per_unit.empty() && !(h.metres_per_unit[s] > 0.0f))
            bad("skeleton " + std::to_string(s) + ": metres_per_unit must be > 0");
    }
    std::vector<bool> seen(65536, false);
    for (const auto& c : h.characters) {
        if (seen[c.id]) bad("character id " + std::to_string(c.id) + " appears twice");
        seen[c.id] = true;
        if (c.skeleton >= h.skeletons.size())
            bad("character " + std::to_string(c.id) + " uses skeleton " + std::to_string(c.skeleton) + " of " +
                std::to_string(h.skeletons.size()));
    }
}

}  // namespace

RecordingWriter::RecordingWriter(const std::string& path, const RecordingHeader& header, int frames_per_chunk,
                                 int zstd_level)
    : impl_(std::make_unique<Impl>()) {
    if (frames_per_chunk < 1) throw std::invalid_argument("RecordingWriter: frames_per_chunk must be >= 1");
    validate_header(header);
    Impl& m = *impl_;
    m.path = path;
    m.frames_per_chunk = frames_per_chunk;
    m.level = std::clamp(zstd_level, ZSTD_minCLevel(), ZSTD_maxCLevel());
    m.cctx = ZSTD_createCCtx();
    if (!m.cctx) throw std::runtime_error(path + ": cannot create a zstd compression context");
    for (const auto& c : header.characters) m.characters[c.id] = {header.skeletons[c.skeleton].size(), 0};

    // The header flatbuffer.
    fb::FlatBufferBuilder& fbb = m.fbb;
    std::vector<fb::Offset<rec::Skeleton>> skels;
    for (size_t s = 0; s < header.skeletons.size(); ++s) {
        const Skeleton& sk = header.skeletons[s];
        std::vector<int16_t> parents(sk.parents.begin(), sk.parents.end());
        const auto names = fbb.CreateVectorOfStrings(sk.names);
        const auto par = fbb.CreateVector(parents);
        const auto offs = m.structs<rec::Vec3>(sk.offsets);
        const auto name = fbb.CreateString(header.skeleton_names.empty() ? std::string() : header.skeleton_names[s]);
        const float mpu = header.metres_per_unit.empty() ? 1.0f : header.metres_per_unit[s];
        skels.push_back(rec::CreateSkeleton(fbb, uint16_t(s), name, names, par, offs, mpu));
    }
    std::vector<fb::Offset<rec::Character>> chars;
    for (const auto& c : header.characters) chars.push_back(rec::CreateCharacter(fbb, c.id, c.skeleton, fbb.CreateString(c.name)));
    const auto scenario = fbb.CreateString(header.scenario);
    const auto skv = fbb.CreateVector(skels);
    const auto chv = fbb.CreateVector(chars);
    const int64_t created = header.created_unix_s ? header.created_unix_s : int64_t(std::time(nullptr));
    fbb.Finish(rec::CreateHeader(fbb, uint32_t(rec::HeaderMagic::KSRH), uint16_t(rec::FormatVersion::Current), header.tick_hz,
                                 header.snapshot_hz, scenario, header.seed, skv, chv, created));

    m.file = std::fopen(path.c_str(), "wb");
    if (!m.file) throw std::runtime_error(path + ": cannot open for writing: " + errno_text(errno));
    m.write_raw(kFileMagic, sizeof kFileMagic);
    m.bytes = sizeof kFileMagic;
    m.write_block(kKindHeader, fbb.GetBufferPointer(), fbb.GetSize());
    fbb.Clear();
}

RecordingWriter::RecordingWriter(RecordingWriter&&) noexcept = default;

RecordingWriter::~RecordingWriter() {
    if (!impl_) return;
    try {
        close();
    } catch (...) {
        // Destructors must not throw; call close() explicitly to see the error.
    }
}

void RecordingWriter::write(const RecordedFrame& frame) {
    Impl& m = *impl_;
    m.check_usable();
    ++m.frame_stamp;
    // Check everything before serializing anything, so a rejected frame leaves no trace.
    for (const RecordedCharacter& c : frame.characters) {
        const auto it = m.characters.find(c.id);
        if (it == m.characters.end())
            throw std::invalid_argument(m.path + ": frame " + std::to_string(frame.tick) + ": character " +
                                        std::to_string(c.id) + " is not in the recording header");
        if (it->second.seen == m.frame_stamp)
            throw std::invalid_argument(m.path + ": frame " + std::to_string(frame.tick) + ": character " +
                                        std::to_string(c.id) + " appears twice");
        it->second.seen = m.frame_stamp;
        const size_t n = size_t(it->second.joints);
        auto sized = [n](const Pose& p) {
            return p.pos.size() == n && p.rot.size() == n && p.scl.size() == n && p.vel.size() == n && p.ang.size() == n &&
                   p.svl.size() == n;
        };
        if (!sized(c.pose))
            throw std::invalid_argument(m.path + ": frame " + std::to_string(frame.tick) + ": character " +
                                        std::to_string(c.id) + ": pose arrays must all have the skeleton's " +
                                        std::to_string(n) + " joints");
        if (!(c.ahead_s >= 0.0f && c.ahead_s <= 10.0f) || (c.ahead_s > 0.0f && !sized(c.ahead)))
            throw std::invalid_argument(m.path + ": frame " + std::to_string(frame.tick) + ": character " +
                                        std::to_string(c.id) + ": a look-ahead needs ahead_s in [0, 10] s and the skeleton's " +
                                        std::to_string(n) + " joints");
    }
    for (const RecordedEvent& e : frame.events)
        if (!m.characters.count(e.character))
            throw std::invalid_argument(m.path + ": frame " + std::to_string(frame.tick) + ": event for character " +
                                        std::to_string(e.character) + ", which is not in the recording header");

    fb::FlatBufferBuilder& fbb = m.fbb;
    m.chars_tmp.clear();
    // A pose's six arrays in the buffer (none for an empty pose: a character without a look-ahead).
    struct Arrays {
        fb::Offset<fb::Vector<const rec::Vec3*>> pos, scl, vel, ang, svl;
        fb::Offset<fb::Vector<const rec::Quat*>> rot;
    };
    auto arrays = [&m](const Pose& p) {
        if (p.pos.empty()) return Arrays{};
        return Arrays{m.structs<rec::Vec3>(p.pos), m.structs<rec::Vec3>(p.scl), m.structs<rec::Vec3>(p.vel),
                      m.structs<rec::Vec3>(p.ang), m.structs<rec::Vec3>(p.svl), m.structs<rec::Quat>(p.rot)};
    };
    for (const RecordedCharacter& c : frame.characters) {
        const Arrays p = arrays(c.pose);
        const Arrays a = c.ahead_s > 0.0f ? arrays(c.ahead) : Arrays{};
        m.chars_tmp.push_back(rec::CreateCharacterFrame(fbb, c.id, c.epoch, p.pos, p.rot, p.scl, p.vel, p.ang, p.svl, c.ahead_s, a.pos,
                                                        a.rot, a.scl, a.vel, a.ang, a.svl, c.ahead_plan));
    }
    m.events_tmp.clear();
    for (const RecordedEvent& e : frame.events) m.events_tmp.emplace_back(e.character, e.epoch, e.kind, e.tick);
    const auto chv = fbb.CreateVector(m.chars_tmp);
    const auto evv = m.structs<rec::Event>(m.events_tmp);
    m.pending.push_back(rec::CreateFrame(fbb, frame.tick, chv, evv, frame.dropped_before));
    if (m.pending.size() >= size_t(m.frames_per_chunk) || fbb.GetSize() >= kChunkSoftLimit) m.write_chunk();
}

void RecordingWriter::flush() {
    Impl& m = *impl_;
    m.check_usable();
    m.write_chunk();
    if (std::fflush(m.file) != 0) m.fail("flush failed: " + errno_text(errno));
}

void RecordingWriter::close() {
    if (!impl_) return;
    Impl& m = *impl_;
    if (m.closed) return;
    m.closed = true;
    std::string error;
    if (m.failure.empty() && m.file) {
        try {
            m.write_chunk();
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    if (m.file) {
        const int rc = std::fclose(m.file);
        const int e = errno;
        m.file = nullptr;
        if (rc != 0 && error.empty()) error = m.path + ": offset " + std::to_string(m.bytes) + ": close failed: " + errno_text(e);
    }
    ZSTD_freeCCtx(m.cctx);
    m.cctx = nullptr;
    m.fbb.Reset();
    m.pending.clear();
    m.pending.shrink_to_fit();
    if (!error.empty()) throw std::runtime_error(error);
}

const std::string& RecordingWriter::path() const { return impl_->path; }
size_t RecordingWriter::bytes_written() const { return impl_->bytes; }
size_t RecordingWriter::raw_bytes_written() const { return impl_->raw_bytes; }
size_t RecordingWriter::frames_written() const { return impl_->frames_written; }
size_t RecordingWriter::frames_pending() const { return impl_->pending.size(); }

}  // namespace ks
