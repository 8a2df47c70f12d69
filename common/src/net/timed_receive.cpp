#include "common/src/net/timed_receive.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace ks {

bool enable_receive_timestamps(int fd) {
    const int on = 1;
    return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

uint32_t TimedDatagram::from_ipv4() const {
    if (from.ss_family != AF_INET) return 0;
    sockaddr_in v4;
    std::memcpy(&v4, &from, sizeof v4);
    return ntohl(v4.sin_addr.s_addr);
}

uint16_t TimedDatagram::from_port() const {
    if (from.ss_family == AF_INET) {
        sockaddr_in v4;
        std::memcpy(&v4, &from, sizeof v4);
        return ntohs(v4.sin_port);
    }
    if (from.ss_family == AF_INET6) {
        sockaddr_in6 v6;
        std::memcpy(&v6, &from, sizeof v6);
        return ntohs(v6.sin6_port);
    }
    return 0;
}

// The age of a datagram from its SCM_TIMESTAMPNS control message (0 without one).
static double kernel_age_s(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        timespec at, now;
        std::copy_n(reinterpret_cast<const char*>(CMSG_DATA(c)), sizeof at, reinterpret_cast<char*>(&at));
        ::clock_gettime(CLOCK_REALTIME, &now);
        const double age = double(now.tv_sec - at.tv_sec) + 1e-9 * double(now.tv_nsec - at.tv_nsec);
        return std::clamp(age, 0.0, 1.0);  // a wall clock stepped meanwhile: at most a second
    }
    return 0.0;
}

bool receive_timed(int fd, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    iovec iov{buf, capacity};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr msg{};
    out.from = {};
    msg.msg_name = &out.from;
    msg.msg_namelen = sizeof out.from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n < 0) return false;
    out.size = size_t(n);
    out.from_len = msg.msg_namelen;
    out.age_s = kernel_age_s(msg);
    return true;
}

}  // namespace ks
