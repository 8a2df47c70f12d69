#include "common/src/platform/udp.h"

#include <cstring>

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <netinet/in.h>
#endif

namespace ks {

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

}  // namespace ks
