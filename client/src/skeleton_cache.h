#pragma once
// A directory of the skeletons a client has received, kept across sessions: each handshake offers
// the server the ones held (by hash), and the server sends those by reference instead of in full
// (joining a server with several 250-joint skeletons waits on their definitions otherwise).
//
// One file per skeleton, named `<64 hex digits of its hash>.kskel`, holding its canonical bytes
// (common/src/net/skeleton_hash.h): the name is checked against the bytes, so a damaged or
// foreign file is refused (named, with the byte where it goes wrong), deleted and never offered.
// Files are written whole (a temporary file, then a rename). The most recently received or used
// come first; beyond kMaxFiles the least recently used are deleted. Files a game ships here with its
// assets (the bytes net::canonical_skeleton makes) are the cache's like any other: offered while
// among the 24 most recently used, pruned when they fall out of the 256.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "client/src/session.h"

namespace ks {

class SkeletonCache {
public:
    static constexpr size_t kMaxFiles = 256;

    // Creates the directory (a UTF-8 path) when missing. Throws ks::Error (InvalidConfig, field
    // "skeleton_cache_dir") when it cannot, when the path is not a directory, or when no file can be
    // written in it.
    explicit SkeletonCache(const std::string& dir);

    // The most recently used skeletons, at most `limit`, newest first. A file that cannot be read
    // or is not what its name says is skipped and deleted, and `problems` gets "FILE: what" for it.
    std::vector<KnownSkeleton> load(size_t limit, std::vector<std::string>* problems = nullptr) const;
    // Keeps a skeleton received in full (newest): its hash, or nullopt and *why when it cannot be written.
    std::optional<net::SkeletonHash> save(const net::ReceivedSkeleton& s, std::string* why = nullptr);
    // Marks a skeleton as just used (a session took it by reference). False when it is not here.
    bool touch(const net::SkeletonHash& h) const;

    const std::filesystem::path& dir() const { return dir_; }
    std::filesystem::path file_of(const net::SkeletonHash& h) const;

private:
    void prune() const;
    std::filesystem::path dir_;
};

}  // namespace ks
