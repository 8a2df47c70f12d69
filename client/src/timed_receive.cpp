#include "client/src/timed_receive.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>

namespace ks {

bool enable_receive_timestamps(int fd) {
    const int on = 1;
    return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

bool receive_timed(int fd, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    sockaddr_in from{};
    iovec iov{buf, capacity};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n < 0) return false;
    out.size = size_t(n);
    out.from_ip = from.sin_family == AF_INET ? ntohl(from.sin_addr.s_addr) : 0;
    out.from_port = from.sin_family == AF_INET ? ntohs(from.sin_port) : 0;
    out.age_s = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        timespec at, now;
        std::copy_n(reinterpret_cast<const char*>(CMSG_DATA(c)), sizeof at, reinterpret_cast<char*>(&at));
        ::clock_gettime(CLOCK_REALTIME, &now);
        const double age = double(now.tv_sec - at.tv_sec) + 1e-9 * double(now.tv_nsec - at.tv_nsec);
        out.age_s = std::clamp(age, 0.0, 1.0);  // a wall clock stepped meanwhile: at most a second
    }
    return true;
}

}  // namespace ks
