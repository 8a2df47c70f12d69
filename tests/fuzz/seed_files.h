#pragma once
// The fuzz targets' `-ks_write_seeds=DIR` (libFuzzer passes unknown flags through): the directory
// it names, and writing a seed there.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ks::fuzz {

// The directory of a -ks_write_seeds=DIR argument, or empty when there is none.
inline std::string seeds_dir(int argc, char** argv) {
    const char* flag = "-ks_write_seeds=";
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) return argv[i] + std::strlen(flag);
    return {};
}

// Writes `bytes` to `path`; exits 1 naming the file when it cannot.
inline void write_seed(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f) std::fclose(f);
    if (!ok) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(1);
    }
}

}  // namespace ks::fuzz
