#include "client/src/skeleton_cache.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <system_error>

#include <kinesync/common/errors.h>

namespace ks {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExtension = ".kskel";
// The largest canonical skeleton: 11 bytes of header, then 1,024 joints of 15 bytes and a 64-byte name.
constexpr uintmax_t kMaxFileBytes = 11 + 1024 * (15 + 64);

// Paths are UTF-8 on every platform (a Windows profile folder may hold any character).
fs::path from_utf8(const std::string& s) { return fs::path(std::u8string(s.begin(), s.end())); }
std::string utf8(const fs::path& p) {
    const std::u8string u = p.u8string();
    return std::string(u.begin(), u.end());
}

bool is_temporary(const fs::path& p) { return p.filename().u8string().find(u8".kskel.tmp") != std::u8string::npos; }

struct Entry {
    fs::path path;
    net::SkeletonHash hash;
    fs::file_time_type used;
};

// The cache's files (name a hash, extension .kskel), most recently used first.
std::vector<Entry> entries(const fs::path& dir) {
    std::vector<Entry> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        if (p.extension() != kExtension) continue;
        const auto h = net::skeleton_hash_from_hex(utf8(p.stem()));
        if (!h) continue;
        std::error_code tec;
        const fs::file_time_type t = fs::last_write_time(p, tec);
        if (!tec) out.push_back({p, *h, t});
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
        return a.used != b.used ? a.used > b.used : a.path.filename() < b.path.filename();
    });
    return out;
}

bool read_file(const fs::path& p, std::vector<uint8_t>& out, std::string& why) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(p, ec);
    if (ec) return why = "cannot read: " + ec.message(), false;
    if (size > kMaxFileBytes) return why = std::to_string(size) + " bytes, more than any skeleton (" + std::to_string(kMaxFileBytes) + ")", false;
    std::ifstream in(p, std::ios::binary);
    out.resize(size_t(size));
    if (!in || !in.read(reinterpret_cast<char*>(out.data()), std::streamsize(size))) return why = "cannot read", false;
    return true;
}

}  // namespace

SkeletonCache::SkeletonCache(const std::string& dir) : dir_(from_utf8(dir)) {
    auto refuse = [&](const std::string& why) {
        throw Error(Errc::InvalidConfig, "skeleton_cache_dir = " + dir + ": " + why, "skeleton_cache_dir");
    };
    if (dir.empty()) throw Error(Errc::InvalidConfig, "skeleton_cache_dir is empty", "skeleton_cache_dir");
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec || !fs::is_directory(dir_)) refuse("not a directory this client can make or use" + (ec ? ": " + ec.message() : std::string()));
    // Writable, or every skeleton this client receives would fail to be kept.
    const fs::path probe = dir_ / ("probe.kskel.tmp" + std::to_string(std::random_device()()));
    if (!std::ofstream(probe, std::ios::binary)) refuse("cannot write files in it");
    fs::remove(probe, ec);
}

fs::path SkeletonCache::file_of(const net::SkeletonHash& h) const { return dir_ / (net::to_hex(h) + kExtension); }

std::vector<KnownSkeleton> SkeletonCache::load(size_t limit, std::vector<std::string>* problems) const {
    std::vector<KnownSkeleton> out;
    std::vector<uint8_t> bytes;
    for (const Entry& e : entries(dir_)) {
        if (out.size() >= limit) break;
        std::string why;
        if (read_file(e.path, bytes, why)) {
            if (net::hash_canonical_skeleton(bytes) != e.hash) {
                why = "its bytes do not hash to its name (damaged, or not written by kinesync)";
            } else if (auto s = net::parse_canonical_skeleton(bytes, &why)) {
                out.push_back({e.hash, std::move(s->skeleton), s->metres_per_unit});
                continue;
            }
        }
        if (problems) problems->push_back(utf8(e.path) + ": " + why);
        std::error_code ignored;
        fs::remove(e.path, ignored);  // reported once; a received copy replaces it
    }
    return out;
}

std::optional<net::SkeletonHash> SkeletonCache::save(const net::ReceivedSkeleton& s, std::string* why) {
    const std::vector<uint8_t> bytes = net::canonical_skeleton(s.skeleton, s.metres_per_unit);
    const net::SkeletonHash hash = net::hash_canonical_skeleton(bytes);
    const fs::path path = file_of(hash);
    fs::path tmp = path;
    tmp += ".tmp" + std::to_string(std::random_device()());  // two processes may keep the same skeleton at once
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out || !out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size())) || !out.flush()) {
            if (why) *why = utf8(tmp) + ": cannot write";
            std::error_code ignored;
            fs::remove(tmp, ignored);
            return std::nullopt;
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        if (why) *why = utf8(path) + ": " + ec.message();
        fs::remove(tmp, ec);
        return std::nullopt;
    }
    touch(hash);
    prune();
    return hash;
}

bool SkeletonCache::touch(const net::SkeletonHash& h) const {
    std::error_code ec;
    fs::last_write_time(file_of(h), fs::file_time_type::clock::now(), ec);
    return !ec;
}

// Beyond kMaxFiles the least recently used go, and temporary files a crash left behind an hour ago.
void SkeletonCache::prune() const {
    const std::vector<Entry> all = entries(dir_);
    std::error_code ec;
    for (size_t i = kMaxFiles; i < all.size(); ++i) fs::remove(all[i].path, ec);
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
        if (is_temporary(it->path()) && fs::last_write_time(it->path(), ec) < old && !ec) fs::remove(it->path(), ec);
}

}  // namespace ks
