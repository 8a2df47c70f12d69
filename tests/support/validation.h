#pragma once
// The validation clips (docs/FIDELITY.md, "The validation set"): motion capture never used to tune
// anything, read from the folder named by KS_VALIDATION_DIR and never copied into the project.
// Tests that need them skip with a message when it is unset or holds no BVH file.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace ks::test {

inline std::string validation_dir() {
    const char* env = std::getenv("KS_VALIDATION_DIR");
    return env ? env : "";
}

inline std::vector<std::string> validation_clips() {
    std::vector<std::string> out;
    std::error_code ec;
    const std::string dir = validation_dir();
    if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".bvh") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace ks::test

#define KS_REQUIRE_VALIDATION_CLIPS()                                                                 \
    do {                                                                                              \
        if (::ks::test::validation_clips().empty())                                                   \
            GTEST_SKIP() << "no validation clips (set KS_VALIDATION_DIR to a folder of BVH files: "   \
                            "docs/FIDELITY.md, \"The validation set\"); validation checks skipped";  \
    } while (0)
