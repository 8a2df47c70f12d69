// POSIX (Linux, macOS, BSD): recvmsg with the kernel's receive timestamp, poll.
#if !defined(_WIN32)
#include "common/src/platform/udp.h"

#include <poll.h>
#include <sys/time.h>
#include <time.h>

#include <algorithm>

namespace ks {

namespace {

#if defined(SO_TIMESTAMPNS)
constexpr int kStampOption = SO_TIMESTAMPNS, kStampMessage = SCM_TIMESTAMPNS;
using Stamp = timespec;
double stamp_seconds(const timespec& t) { return double(t.tv_sec) + 1e-9 * double(t.tv_nsec); }
#else
constexpr int kStampOption = SO_TIMESTAMP, kStampMessage = SCM_TIMESTAMP;
using Stamp = timeval;
double stamp_seconds(const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); }
#endif

// The age of a datagram from its timestamp control message (0 without one).
double kernel_age_s(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != kStampMessage) continue;
        Stamp at;
        std::copy_n(reinterpret_cast<const char*>(CMSG_DATA(c)), sizeof at, reinterpret_cast<char*>(&at));
        timespec now;
        ::clock_gettime(CLOCK_REALTIME, &now);
        const double age = double(now.tv_sec) + 1e-9 * double(now.tv_nsec) - stamp_seconds(at);
        return std::clamp(age, 0.0, 1.0);  // a wall clock stepped meanwhile: at most a second
    }
    return 0.0;
}

}  // namespace

bool enable_receive_timestamps(SocketHandle s) {
    const int on = 1;
    return ::setsockopt(s, SOL_SOCKET, kStampOption, &on, sizeof on) == 0;
}

bool receive_timed(SocketHandle s, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    iovec iov{buf, capacity};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(Stamp))];
    msghdr msg{};
    out.from = {};
    msg.msg_name = &out.from;
    msg.msg_namelen = sizeof out.from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(s, &msg, MSG_DONTWAIT);
    if (n < 0) return false;
    out.size = size_t(n);
    out.from_len = msg.msg_namelen;
    out.age_s = kernel_age_s(msg);
    return true;
}

bool wait_readable(SocketHandle s, int timeout_ms) {
    pollfd p{s, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) == 1;
}

}  // namespace ks
#endif
