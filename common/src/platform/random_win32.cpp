// random_bytes on Windows: the system-preferred RNG of CNG (links bcrypt).
#if defined(_WIN32)

#include "common/src/platform/random.h"

#include <algorithm>
#include <climits>
#include <system_error>

// clang-format off
#include <windows.h>
#include <bcrypt.h>
// clang-format on

namespace ks::platform {

void random_bytes(std::span<uint8_t> out) {
    for (size_t done = 0; done < out.size();) {
        const ULONG n = ULONG(std::min<size_t>(ULONG_MAX, out.size() - done));
        const NTSTATUS st = BCryptGenRandom(nullptr, out.data() + done, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG);
        if (!BCRYPT_SUCCESS(st))
            throw std::system_error(int(st), std::system_category(), "BCryptGenRandom (the operating system's random source) failed");
        done += n;
    }
}

}  // namespace ks::platform

#endif
