// POSIX (Linux, macOS, BSD): recvmsg with the kernel's receive timestamp, poll.
#if !defined(_WIN32)
#include "common/src/platform/udp.h"

#include <poll.h>
#include <sys/time.h>
#include <time.h>

#include <algorithm>

namespace ks {

namespace {

double seconds_of(const timespec& t) { return double(t.tv_sec) + 1e-9 * double(t.tv_nsec); }
double seconds_of(const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); }

template <class Stamp>
double age_from(const cmsghdr* c) {
    Stamp at;
    std::copy_n(reinterpret_cast<const char*>(CMSG_DATA(c)), sizeof at, reinterpret_cast<char*>(&at));
    timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    return std::clamp(seconds_of(now) - seconds_of(at), 0.0, 1.0);  // a wall clock stepped meanwhile: at most a second
}

// The age of a datagram from its timestamp control message (0 without one): SCM_TIMESTAMPNS
// (Linux, nanoseconds) or SCM_TIMESTAMP (microseconds: other POSIX systems, and where the first
// is refused, e.g. under qemu-user).
double kernel_age_s(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET) continue;
#if defined(SCM_TIMESTAMPNS)
        if (c->cmsg_type == SCM_TIMESTAMPNS) return age_from<timespec>(c);
#endif
        if (c->cmsg_type == SCM_TIMESTAMP) return age_from<timeval>(c);
    }
    return 0.0;
}

}  // namespace

bool enable_receive_timestamps(SocketHandle s) {
    const int on = 1;
#if defined(SO_TIMESTAMPNS)
    if (::setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0) return true;
#endif
    return ::setsockopt(s, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof on) == 0;
}

bool receive_timed(SocketHandle s, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    iovec iov{buf, capacity};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec) > sizeof(timeval) ? sizeof(timespec) : sizeof(timeval))];
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
