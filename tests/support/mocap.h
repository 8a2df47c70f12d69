#pragma once
// Locating the shared motion-capture clips (../shared/mocap). They are never part of the project:
// tests that need them skip with a clear message when the folder is absent.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ks::test {

inline std::string mocap_dir() {
    if (const char* env = std::getenv("KS_MOCAP_DIR")) return env;
    return KS_DEFAULT_MOCAP_DIR;
}

inline bool mocap_available() { return std::filesystem::exists(mocap_dir() + "/cmu_02_01_walk.bvh"); }

inline std::string mocap_path(const std::string& file) { return mocap_dir() + "/" + file; }

}  // namespace ks::test

// Skips the current test when the shared clips are not there.
#define KS_REQUIRE_MOCAP()                                                                            \
    do {                                                                                              \
        if (!::ks::test::mocap_available())                                                           \
            GTEST_SKIP() << "shared mocap clips not found in " << ::ks::test::mocap_dir()            \
                         << " (set KS_MOCAP_DIR); real-clip checks skipped";                         \
    } while (0)
