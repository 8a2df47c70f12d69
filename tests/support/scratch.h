#pragma once
// A file path of a test's own: in the temporary directory, named for this process, so two test
// runs at once (two build directories, or a developer's beside CI's) never write the same file.
// The files (and anything a path names beside them, e.g. "x.ksrec.cut.ksrec") go when the
// process exits normally.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace ks::test {

namespace detail {
struct ScratchFiles {
    std::string prefix = "ks-" + std::to_string(::getpid()) + "-";
    ~ScratchFiles() {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec))
            if (e.path().filename().string().rfind(prefix, 0) == 0) std::filesystem::remove_all(e.path(), ec);
    }
};
inline ScratchFiles& scratch_files() {
    static ScratchFiles files;
    return files;
}
}  // namespace detail

inline std::string scratch_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / (detail::scratch_files().prefix + name)).string();
}

}  // namespace ks::test
