#include <kinesync/common/record/recording.h>

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <sys/types.h>

#include "common/src/record/recording_format.h"
#include "schema/recording_generated.h"

namespace ks {

namespace fb = ::flatbuffers;
namespace rec = ::kinesync::rec;
using namespace recording_format;

namespace {

std::string printable(const uint8_t* p, size_t n) {
    std::string s = "\"";
    for (size_t i = 0; i < n; ++i) {
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '"' && p[i] != '\\') {
            s += char(p[i]);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(p[i]));
            s += buf;
        }
    }
    return s + "\"";
}

template <class T>
void copy_out(std::vector<T>& dst, const uint8_t* src, size_t n) {
    dst.resize(n);
    if (n) std::memcpy(dst.data(), src, n * sizeof(T));
}

// A pose from its six arrays, each already checked to hold n joints.
template <class V, class Q>
void read_pose(Pose& out, const V* pos, const Q* rot, const V* scl, const V* vel, const V* ang, const V* svl, size_t n) {
    copy_out(out.pos, pos->Data(), n);
    copy_out(out.rot, rot->Data(), n);
    copy_out(out.scl, scl->Data(), n);
    copy_out(out.vel, vel->Data(), n);
    copy_out(out.ang, ang->Data(), n);
    copy_out(out.svl, svl->Data(), n);
}

}  // namespace

struct RecordingStream::Impl {
    explicit Impl(const std::string& path) : path_(path) {
        file_ = std::fopen(path.c_str(), "rb");
        if (!file_) throw std::runtime_error(path + ": cannot open: " + errno_text(errno));
        if (fseeko(file_, 0, SEEK_END) != 0) {
            const int e = errno;
            std::fclose(file_);
            errno = e;
            io_error(0, "seek failed");
        }
        const off_t end = ftello(file_);
        if (end < 0) {
            const int e = errno;
            std::fclose(file_);
            errno = e;
            io_error(0, "cannot tell the file size");
        }
        size_ = uint64_t(end);
        dctx_ = ZSTD_createDCtx();
        if (!dctx_) {
            std::fclose(file_);
            throw std::runtime_error(path + ": cannot create a zstd decompression context");
        }
    }
    ~Impl() {
        std::fclose(file_);
        ZSTD_freeDCtx(dctx_);
    }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    // The file magic and the header block; offset_ is left at the first chunk.
    void open();
    // Reads and decodes the next sound chunk into chunk_ (false at the end of the recording or at
    // a damaged tail, which sets truncated_ and warning_); throws at corruption in the middle.
    bool load_next_chunk();

    std::string path_;
    std::FILE* file_ = nullptr;
    ZSTD_DCtx* dctx_ = nullptr;
    uint64_t size_ = 0;
    uint64_t offset_ = 0;  // the next block
    std::vector<uint8_t> cbuf_, raw_;
    RecordingHeader header_;
    std::unordered_map<uint16_t, int> joints_;  // character id -> joints
    std::vector<RecordedFrame> chunk_;          // the current chunk's frames
    size_t next_ = 0;                           // the next frame of chunk_ to hand out
    size_t frames_read_ = 0;                    // frames of the complete chunks read
    size_t chunks_ = 0;
    bool done_ = false, truncated_ = false;
    std::string warning_;

    [[noreturn]] void error(uint64_t offset, const std::string& what) const {
        throw std::runtime_error(path_ + ": offset " + std::to_string(offset) + ": " + what);
    }
    [[noreturn]] void io_error(uint64_t offset, const std::string& what) const {
        error(offset, what + ": " + errno_text(errno));
    }
    // Reads exactly n bytes at `offset` (which the caller has checked lie inside the file).
    void read_at(uint64_t offset, void* dst, size_t n) {
        if (fseeko(file_, off_t(offset), SEEK_SET) != 0) io_error(offset, "seek failed");
        if (n && std::fread(dst, 1, n, file_) != n) io_error(offset, "read failed");
    }

    struct Block {
        std::string problem;  // empty: the block is sound and its flatbuffer is in raw_
        uint32_t kind = 0;
        uint64_t end = 0;     // offset just past the block
    };
    // Checks the block at `offset`: header, sizes, CRC, and (when `decompress`) the zstd frame.
    Block load_block(uint64_t offset, bool decompress);
    // Whether a sound block starts anywhere after `from` (distinguishes corruption in the middle
    // of a recording from a damaged tail).
    bool sound_block_after(uint64_t from, uint64_t* where);

    void decode_header(uint64_t offset);
    void decode_chunk(uint64_t offset, std::vector<RecordedFrame>& frames);
};

RecordingStream::Impl::Block RecordingStream::Impl::load_block(uint64_t offset, bool decompress) {
    Block b;
    const uint64_t left = size_ - offset;
    if (left < kBlockHeaderBytes) {
        b.problem = "expected a " + std::to_string(kBlockHeaderBytes) + "-byte block header, the file ends after " +
                    std::to_string(left) + " bytes";
        return b;
    }
    uint8_t h[kBlockHeaderBytes];
    read_at(offset, h, sizeof h);
    if (std::memcmp(h, kBlockMagic, 4) != 0) {
        b.problem = "expected the block magic \"KSCH\", got " + printable(h, 4);
        return b;
    }
    b.kind = get_u32(h + 4);
    const uint32_t csize = get_u32(h + 8), rsize = get_u32(h + 12), crc = get_u32(h + 16);
    if (b.kind != kKindHeader && b.kind != kKindChunk) {
        b.problem = "expected block kind 0 (header) or 1 (chunk), got " + std::to_string(b.kind);
        return b;
    }
    if (csize == 0 || csize > kMaxBlockBytes || rsize == 0 || rsize > kMaxBlockBytes) {
        b.problem = "block sizes out of range (compressed " + std::to_string(csize) + ", raw " + std::to_string(rsize) +
                    " bytes; expected 1.." + std::to_string(kMaxBlockBytes) + ")";
        return b;
    }
    if (csize > left - kBlockHeaderBytes) {
        b.problem = "expected a block of " + std::to_string(kBlockHeaderBytes + csize) + " bytes, the file ends after " +
                    std::to_string(left) + " bytes";
        return b;
    }
    b.end = offset + kBlockHeaderBytes + csize;
    cbuf_.resize(csize);
    read_at(offset + kBlockHeaderBytes, cbuf_.data(), csize);
    const uint32_t actual = recording_crc32(cbuf_.data(), csize);
    if (actual != crc) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "CRC mismatch (stored %08" PRIX32 ", computed %08" PRIX32 ")", crc, actual);
        b.problem = buf;
        return b;
    }
    if (!decompress) return b;
    const unsigned long long content = ZSTD_getFrameContentSize(cbuf_.data(), csize);
    if (content != rsize) {
        b.problem = "zstd frame declares " +
                    (content == ZSTD_CONTENTSIZE_ERROR     ? std::string("no valid size")
                     : content == ZSTD_CONTENTSIZE_UNKNOWN ? std::string("an unknown size")
                                                           : std::to_string(content) + " bytes") +
                    ", expected the block's raw size " + std::to_string(rsize);
        return b;
    }
    raw_.resize(rsize);
    const size_t got = ZSTD_decompressDCtx(dctx_, raw_.data(), raw_.size(), cbuf_.data(), csize);
    if (ZSTD_isError(got) || got != rsize) {
        b.problem = ZSTD_isError(got) ? std::string("zstd decompression failed: ") + ZSTD_getErrorName(got)
                                      : "zstd decompression gave " + std::to_string(got) + " bytes, expected " +
                                            std::to_string(rsize);
        return b;
    }
    return b;
}

bool RecordingStream::Impl::sound_block_after(uint64_t from, uint64_t* where) {
    // Scan for the block magic; check each candidate's header, sizes and CRC.
    std::vector<uint8_t> buf(size_t(1) << 16);
    uint64_t pos = from;
    while (pos + kBlockHeaderBytes <= size_) {
        const size_t n = size_t(std::min<uint64_t>(buf.size(), size_ - pos));
        read_at(pos, buf.data(), n);
        size_t i = 0;
        for (; i + 4 <= n; ++i) {
            if (std::memcmp(buf.data() + i, kBlockMagic, 4) != 0) continue;
            const uint64_t cand = pos + i;
            if (load_block(cand, false).problem.empty()) {
                *where = cand;
                return true;
            }
        }
        if (n < buf.size()) break;
        pos += n - 3;  // keep a magic that straddles the buffer boundary
    }
    return false;
}

void RecordingStream::Impl::decode_header(uint64_t offset) {
    fb::Verifier::Options opts;
    fb::Verifier v(raw_.data(), raw_.size(), opts);
    if (!v.VerifyBuffer<rec::Header>(nullptr)) error(offset, "header block: expected a Header flatbuffer, verification failed");
    const rec::Header* h = fb::GetRoot<rec::Header>(raw_.data());
    if (h->magic() != uint32_t(rec::HeaderMagic::KSRH)) error(offset, "header block: bad header magic");
    if (h->version() != uint16_t(rec::FormatVersion::Current))
        error(offset, "header block: expected format version " + std::to_string(uint16_t(rec::FormatVersion::Current)) +
                          ", got " + std::to_string(h->version()));
    RecordingHeader& out = header_;
    out.tick_hz = h->tick_hz();
    out.snapshot_hz = h->snapshot_hz();
    out.scenario = h->scenario() ? h->scenario()->str() : std::string();
    out.seed = h->seed();
    out.created_unix_s = h->created_unix_s();
    if (const auto* sks = h->skeletons()) {
        for (fb::uoffset_t s = 0; s < sks->size(); ++s) {
            const rec::Skeleton* sk = sks->Get(s);
            const std::string where = "header block: skeleton " + std::to_string(s) + ": ";
            if (sk->id() != s) error(offset, where + "expected id " + std::to_string(s) + ", got " + std::to_string(sk->id()));
            if (!sk->joint_names() || !sk->parents() || !sk->offsets()) error(offset, where + "missing joint arrays");
            const size_t n = sk->parents()->size();
            if (sk->joint_names()->size() != n || sk->offsets()->size() != n)
                error(offset, where + "joint_names, parents and offsets differ in length");
            Skeleton k;
            for (const auto* name : *sk->joint_names()) k.names.push_back(name ? name->str() : std::string());
            k.parents.assign(sk->parents()->begin(), sk->parents()->end());
            copy_out(k.offsets, sk->offsets()->Data(), n);
            const std::string bad = k.validate();
            if (!bad.empty()) error(offset, where + bad);
            if (n < 1) error(offset, where + "no joints");
            if (!(sk->metres_per_unit() > 0.0f)) error(offset, where + "metres_per_unit must be > 0");
            out.skeletons.push_back(std::move(k));
            out.skeleton_names.push_back(sk->name() ? sk->name()->str() : std::string());
            out.metres_per_unit.push_back(sk->metres_per_unit());
        }
    }
    if (const auto* cs = h->characters()) {
        for (const rec::Character* c : *cs) {
            if (c->skeleton() >= out.skeletons.size())
                error(offset, "header block: character " + std::to_string(c->id()) + " uses skeleton " +
                                  std::to_string(c->skeleton()) + " of " + std::to_string(out.skeletons.size()));
            if (!joints_.emplace(c->id(), out.skeletons[c->skeleton()].size()).second)
                error(offset, "header block: character id " + std::to_string(c->id()) + " appears twice");
            out.characters.push_back({c->id(), c->skeleton(), c->name() ? c->name()->str() : std::string()});
        }
    }
}

void RecordingStream::Impl::decode_chunk(uint64_t offset, std::vector<RecordedFrame>& frames) {
    fb::Verifier::Options opts;
    opts.max_tables = std::max<fb::uoffset_t>(opts.max_tables, fb::uoffset_t(raw_.size() / 8));
    fb::Verifier v(raw_.data(), raw_.size(), opts);
    if (!v.VerifyBuffer<rec::Chunk>(nullptr)) error(offset, "chunk block: expected a Chunk flatbuffer, verification failed");
    const rec::Chunk* chunk = fb::GetRoot<rec::Chunk>(raw_.data());
    if (!chunk->frames()) return;
    for (fb::uoffset_t f = 0; f < chunk->frames()->size(); ++f) {
        const rec::Frame* in = chunk->frames()->Get(f);
        RecordedFrame& out = frames.emplace_back();
        out.tick = in->tick();
        out.dropped_before = in->dropped_before();
        const std::string where = "chunk block: frame " + std::to_string(f) + " (tick " + std::to_string(in->tick()) + "): ";
        if (const auto* cs = in->characters()) {
            out.characters.reserve(cs->size());
            for (const rec::CharacterFrame* c : *cs) {
                const auto it = joints_.find(c->id());
                if (it == joints_.end())
                    error(offset, where + "character " + std::to_string(c->id()) + " is not in the header");
                const size_t n = size_t(it->second);
                auto sized = [n](const auto* vec) { return vec && vec->size() == n; };
                if (!sized(c->pos()) || !sized(c->rot()) || !sized(c->scl()) || !sized(c->vel()) || !sized(c->ang()) ||
                    !sized(c->svl()))
                    error(offset, where + "character " + std::to_string(c->id()) + ": expected " + std::to_string(n) +
                                      " joints in every pose array");
                RecordedCharacter& rc = out.characters.emplace_back();
                rc.id = c->id();
                rc.epoch = c->epoch();
                read_pose(rc.pose, c->pos(), c->rot(), c->scl(), c->vel(), c->ang(), c->svl(), n);
                rc.ahead_plan = c->ahead_plan();
                if (c->ahead_s() != 0.0f) {
                    if (!(c->ahead_s() > 0.0f && c->ahead_s() <= 10.0f) || !sized(c->ahead_pos()) || !sized(c->ahead_rot()) || !sized(c->ahead_scl()) ||
                        !sized(c->ahead_vel()) || !sized(c->ahead_ang()) || !sized(c->ahead_svl()))
                        error(offset, where + "character " + std::to_string(c->id()) + ": a look-ahead of " +
                                          std::to_string(c->ahead_s()) + " s without " + std::to_string(n) +
                                          " joints in every array (or outside (0, 10] s)");
                    rc.ahead_s = c->ahead_s();
                    read_pose(rc.ahead, c->ahead_pos(), c->ahead_rot(), c->ahead_scl(), c->ahead_vel(), c->ahead_ang(), c->ahead_svl(), n);
                }
            }
        }
        if (const auto* es = in->events()) {
            out.events.reserve(es->size());
            for (const rec::Event* e : *es) {
                if (!joints_.count(e->character()))
                    error(offset, where + "event for character " + std::to_string(e->character()) + ", not in the header");
                out.events.push_back({e->character(), e->epoch(), e->kind(), e->tick()});
            }
        }
    }
}

void RecordingStream::Impl::open() {
    uint8_t magic[sizeof kFileMagic];
    if (size_ < sizeof magic)
        error(0, "expected the file magic \"KSREC001\", the file has only " + std::to_string(size_) + " bytes");
    read_at(0, magic, sizeof magic);
    if (std::memcmp(magic, kFileMagic, sizeof magic) != 0)
        error(0, "expected the file magic \"KSREC001\" (a kinesync recording), got " + printable(magic, sizeof magic));

    uint64_t offset = sizeof kFileMagic;
    const Block b = load_block(offset, true);
    if (!b.problem.empty()) error(offset, "header block: " + b.problem);
    if (b.kind != kKindHeader) error(offset, "expected the header block (kind 0), got kind " + std::to_string(b.kind));
    decode_header(offset);
    offset_ = b.end;
}

bool RecordingStream::Impl::load_next_chunk() {
    chunk_.clear();
    next_ = 0;
    while (!done_ && chunk_.empty()) {
        if (offset_ >= size_) {
            done_ = true;
            break;
        }
        const uint64_t offset = offset_;
        const Block b = load_block(offset, true);
        if (!b.problem.empty()) {
            uint64_t next = 0;
            if (sound_block_after(offset + 1, &next))
                error(offset, b.problem + " (corrupt block; a valid block follows at offset " + std::to_string(next) + ")");
            truncated_ = true;
            warning_ = path_ + ": offset " + std::to_string(offset) + ": " + b.problem + "; recording truncated there (" +
                       std::to_string(size_ - offset) + " trailing bytes ignored), " + std::to_string(frames_read_) +
                       " frames in " + std::to_string(chunks_) + " complete chunks kept";
            done_ = true;
            break;
        }
        if (b.kind != kKindChunk) error(offset, "expected a chunk block (kind 1), got kind " + std::to_string(b.kind));
        decode_chunk(offset, chunk_);  // a chunk may hold no frames: then on to the next one
        frames_read_ += chunk_.size();
        ++chunks_;
        offset_ = b.end;
    }
    return !chunk_.empty();
}

RecordingStream::RecordingStream(const std::string& path) : impl_(std::make_unique<Impl>(path)) { impl_->open(); }
RecordingStream::~RecordingStream() = default;
RecordingStream::RecordingStream(RecordingStream&&) noexcept = default;
RecordingStream& RecordingStream::operator=(RecordingStream&&) noexcept = default;

const std::string& RecordingStream::path() const { return impl_->path_; }
const RecordingHeader& RecordingStream::header() const { return impl_->header_; }

bool RecordingStream::next(RecordedFrame& out) {
    Impl& m = *impl_;
    if (m.next_ == m.chunk_.size() && !m.load_next_chunk()) return false;
    out = std::move(m.chunk_[m.next_++]);
    return true;
}

bool RecordingStream::truncated() const { return impl_->truncated_; }
const std::string& RecordingStream::warning() const { return impl_->warning_; }
size_t RecordingStream::chunks() const { return impl_->chunks_; }
size_t RecordingStream::frames_read() const { return impl_->frames_read_ - (impl_->chunk_.size() - impl_->next_); }
size_t RecordingStream::buffered_frames() const { return impl_->chunk_.size() - impl_->next_; }
uint64_t RecordingStream::offset() const { return impl_->offset_; }
uint64_t RecordingStream::file_size() const { return impl_->size_; }

RecordingReadResult read_recording(const std::string& path) {
    std::vector<RecordedFrame> frames;
    RecordingReadResult r = read_recording(path, [&frames](RecordedFrame&& f) { frames.push_back(std::move(f)); });
    r.frames = std::move(frames);
    return r;
}

RecordingReadResult read_recording(const std::string& path, const std::function<void(RecordedFrame&&)>& on_frame) {
    RecordingStream s(path);
    RecordingReadResult r;
    RecordedFrame f;
    while (s.next(f)) on_frame(std::move(f));
    r.header = s.header();
    r.truncated = s.truncated();
    r.warning = s.warning();
    r.chunks = s.chunks();
    return r;
}

}  // namespace ks
