// random_bytes on Linux, macOS and the BSDs (the Windows one is random_win32.cpp).
#if !defined(_WIN32)

#include "common/src/platform/random.h"

#include <algorithm>
#include <cerrno>
#include <system_error>

#if defined(__linux__)
#include <sys/random.h>
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
#include <unistd.h>
#else
#error "no operating-system random source known for this platform"
#endif

namespace ks::platform {

namespace {

[[noreturn]] void fail(int err) {
    throw std::system_error(err, std::generic_category(), "the operating system's random source failed");
}

}  // namespace

#if defined(__linux__)

// getrandom(2) from the urandom pool (blocks only until it is seeded at boot); a signal or a
// large request can return fewer bytes, so it loops.
void random_bytes(std::span<uint8_t> out) {
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = getrandom(out.data() + done, out.size() - done, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(errno);
        }
        done += size_t(n);
    }
}

#else

// getentropy(2) gives at most 256 bytes a call.
void random_bytes(std::span<uint8_t> out) {
    for (size_t done = 0; done < out.size();) {
        const size_t n = std::min<size_t>(256, out.size() - done);
        if (getentropy(out.data() + done, n) != 0) fail(errno);
        done += n;
    }
}

#endif

}  // namespace ks::platform

#endif
