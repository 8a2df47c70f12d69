#pragma once
// KS_BENCH_SMOKE=1: every benchmark runs once, briefly (the fixed-length ones shortened), so CI's
// sanitizer build can run them all and none can crash unseen. Its figures mean nothing.

#include <cstdlib>
#include <string_view>

namespace ks {

inline bool bench_smoke() {
    const char* v = std::getenv("KS_BENCH_SMOKE");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

}  // namespace ks
