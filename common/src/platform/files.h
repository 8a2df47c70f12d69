#pragma once
// Files that hold secrets (private keys, connect tokens): readable by their owner only. One
// implementation per platform: files_posix.cpp (mode 0600) and files_win32.cpp (a protected ACL
// granting the owner alone).

#include <cstdint>
#include <string>
#include <vector>

namespace ks {

// Throws std::runtime_error naming the file when others may read it (POSIX: any group or other
// permission bit). Windows: not checked (a file's ACL is inherited from its folder; keep key files
// in the owner's profile); write_private_file's files are the owner's alone.
void check_private_file(const std::string& path);

// Writes the bytes to path atomically (a temporary file renamed over it), readable and writable
// by the owner alone; throws std::runtime_error naming the file on failure.
void write_private_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace ks
