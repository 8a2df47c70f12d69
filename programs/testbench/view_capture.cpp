#include "programs/testbench/view_capture.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "programs/testbench/base64.h"
#include "programs/testbench/viewer_assets.h"
#include <kinesync/offline/svg.h>

namespace ks {

namespace {

constexpr int kRootSampleEvery = 60;  // frames between view_roots samples (1 s at 60 Hz)

int32_t mm(float metres) { return int32_t(std::lround(double(metres) * 1000.0)); }
int16_t mm16(float metres) { return int16_t(std::clamp<long>(std::lround(double(metres) * 1000.0), -32767, 32767)); }
int8_t unit8(float v) { return int8_t(std::clamp<long>(std::lround(double(v) * 127.0), -127, 127)); }

template <class T>
void append_raw(std::vector<uint8_t>& out, const std::vector<T>& v) {
    const size_t at = out.size();
    out.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(T));
}

// Each of `width` interleaved channels as differences from the same channel one frame before,
// wrapping in T (the page sums them back the same way).
template <class T>
std::vector<T> deltas(const std::vector<T>& v, size_t width) {
    std::vector<T> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        using U = std::make_unsigned_t<T>;
        const U prev = i >= width ? U(v[i - width]) : U(0);
        out[i] = T(U(U(v[i]) - prev));
    }
    return out;
}

void put_u32(std::string& out, uint32_t v) {
    for (int k = 0; k < 4; ++k) out.push_back(char((v >> (8 * k)) & 0xff));
}

}  // namespace

ViewCapture::ViewCapture(std::vector<std::string> streams, std::vector<int> joints_per_character, double from_s, double span_s)
    : streams_(std::move(streams)), joints_(std::move(joints_per_character)), from_s_(from_s), span_s_(span_s),
      tracks_(streams_.size() * joints_.size()) {}

bool ViewCapture::begin_frame(double t) {
    in_frame_ = false;
    if (t < from_s_) return false;
    if (t >= from_s_ + span_s_) {
        clipped_ = clipped_ || !second_pass_;
        return false;
    }
    if (second_pass_) {
        if (cur_ >= frames_) return false;
    } else {
        if (frames_ == 0) t0_ = t;
        ++frames_;
    }
    ++cur_;
    t_ = t;
    in_frame_ = true;
    return true;
}

void ViewCapture::begin_second_pass() {
    second_pass_ = true;
    cur_ = 0;
    in_frame_ = false;
}

void ViewCapture::fill_to(Track& tr, size_t c, size_t frames) const {
    const size_t j = size_t(joints_[c]);
    while (tr.filled < frames) {  // absent: the previous values again (deltas of 0)
        tr.present.push_back(0);
        tr.error_cm.push_back(0.0f);
        for (size_t k = 0; k < 3; ++k) tr.root.push_back(tr.filled ? tr.root[tr.root.size() - 3] : 0);
        for (size_t k = 0; k < 3 * j; ++k) tr.pos.push_back(tr.filled ? tr.pos[tr.pos.size() - 3 * j] : int16_t(0));
        for (size_t k = 0; k < 4 * j; ++k) tr.rot.push_back(tr.filled ? tr.rot[tr.rot.size() - 4 * j] : int8_t(k % 4 == 0 ? 127 : 0));
        ++tr.filled;
    }
}

void ViewCapture::add(size_t s, size_t c, std::span<const vec3> pos_m, std::span<const quat> rot, float error_cm) {
    if (!in_frame_ || s >= streams_.size() || c >= joints_.size() || pos_m.size() != size_t(joints_[c]) || rot.size() != pos_m.size())
        return;
    Track& tr = tracks_[s * joints_.size() + c];
    if (tr.filled >= cur_) return;  // twice in one frame: the first
    fill_to(tr, c, cur_ - 1);
    tr.present.push_back(1);
    tr.error_cm.push_back(error_cm);
    const vec3 root = pos_m[0];
    tr.root.insert(tr.root.end(), {mm(root.x), mm(root.y), mm(root.z)});
    for (size_t j = 0; j < pos_m.size(); ++j) {
        const vec3 d = pos_m[j] - root;
        tr.pos.insert(tr.pos.end(), {mm16(d.x), mm16(d.y), mm16(d.z)});
        const quat q = rot[j].w < 0 ? quat{-rot[j].w, -rot[j].x, -rot[j].y, -rot[j].z} : rot[j];
        tr.rot.insert(tr.rot.end(), {unit8(q.w), unit8(q.x), unit8(q.y), unit8(q.z)});
    }
    ++tr.filled;

    const int frame = int(cur_ - 1);
    if (frame % kRootSampleEvery != 0) return;
    auto it = std::find_if(samples_.begin(), samples_.end(), [&](const ViewRootSample& v) { return v.frame == frame && v.character == int(c); });
    if (it == samples_.end()) {
        samples_.push_back({frame, t_, int(c), {}});
        it = samples_.end() - 1;
    }
    it->roots.push_back({streams_[s], root});
}

void ViewCapture::add_snapshot(double tick_time_s, double arrival_s) {
    if (arrival_s >= from_s_ && arrival_s < from_s_ + span_s_) snapshots_.push_back({tick_time_s, arrival_s});
}

std::vector<uint8_t> ViewCapture::planes() const {
    std::vector<uint8_t> out;
    for (size_t s = 0; s < streams_.size(); ++s)
        for (size_t c = 0; c < joints_.size(); ++c) {
            Track tr = tracks_[s * joints_.size() + c];
            fill_to(tr, c, frames_);
            const size_t j = size_t(joints_[c]);
            append_raw(out, tr.present);
            append_raw(out, tr.error_cm);
            append_raw(out, deltas(tr.root, 3));
            append_raw(out, deltas(tr.pos, 3 * j));
            append_raw(out, deltas(tr.rot, 4 * j));
        }
    return out;
}

std::vector<uint8_t> ViewCapture::shown(size_t s, size_t frames) const {
    std::vector<uint8_t> out;
    if (s >= streams_.size()) return out;
    frames = std::min(frames, frames_);
    for (size_t c = 0; c < joints_.size(); ++c) {
        Track tr = tracks_[s * joints_.size() + c];
        fill_to(tr, c, frames_);
        const size_t j = size_t(joints_[c]);
        tr.present.resize(frames);
        tr.root.resize(3 * frames);
        tr.pos.resize(3 * j * frames);
        tr.rot.resize(4 * j * frames);
        append_raw(out, tr.present);
        append_raw(out, tr.root);
        append_raw(out, tr.pos);
        append_raw(out, tr.rot);
    }
    return out;
}

std::string default_three_dir() {
    if (const char* e = std::getenv("KINESYNC_THREE_DIR"); e && *e) return e;
    return KS_THREE_DIR;
}

size_t write_viewer(const std::string& dir, const ViewCapture& capture, const ViewFiles& files) {
    namespace fs = std::filesystem;
    const fs::path three = fs::path(files.three_dir) / "three.min.js",
                   orbit = fs::path(files.three_dir) / "examples/js/controls/OrbitControls.js";
    for (const fs::path& p : {three, orbit})
        if (!fs::exists(p))
            throw std::runtime_error("--view: three.js not found (" + p.string() +
                                     "): install Debian's libjs-three (setup.sh does) or point KINESYNC_THREE_DIR at a "
                                     "three.js r111 directory");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error(dir + ": cannot create the viewer's directory: " + ec.message());

    // replay.ksview: magic, meta JSON, then the planes deflated (zlib).
    const std::vector<uint8_t> raw = capture.planes();
    uLongf packed_len = compressBound(uLong(raw.size()));
    std::vector<uint8_t> packed(packed_len);
    if (compress2(packed.data(), &packed_len, raw.data(), uLong(raw.size()), 9) != Z_OK)
        throw std::runtime_error("--view: compressing the frames failed");
    std::string bin = "KSVIEW01";
    put_u32(bin, uint32_t(files.meta_json.size()));
    bin += files.meta_json;
    put_u32(bin, uint32_t(raw.size()));
    put_u32(bin, uint32_t(packed_len));
    bin.append(reinterpret_cast<const char*>(packed.data()), packed_len);
    write_text_file((fs::path(dir) / "replay.ksview").string(), bin);

    // The same bytes for a page opened from disk, where fetch() of a local file is refused.
    write_text_file((fs::path(dir) / "replay.ksview.js").string(), "window.KS_VIEW_BASE64 = \"" + base64_encode(bin) + "\";\n");

    for (const ViewerAsset& a : viewer_assets()) write_text_file((fs::path(dir) / a.name).string(), std::string(a.bytes));
    for (const fs::path& p : {three, orbit}) {
        fs::copy_file(p, fs::path(dir) / p.filename(), fs::copy_options::overwrite_existing, ec);
        if (ec) throw std::runtime_error(p.string() + ": cannot copy into " + dir + ": " + ec.message());
    }
    return bin.size();
}

}  // namespace ks
