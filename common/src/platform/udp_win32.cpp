// Windows: WSARecvMsg with the receive timestamp of SIO_TIMESTAMPING (Windows 10 2004 and later:
// a QueryPerformanceCounter value), select. Where the socket cannot timestamp (older Windows,
// Wine), enable_receive_timestamps says so and ages are 0.
#if defined(_WIN32)
#include "common/src/platform/udp.h"

#include <mstcpip.h>
#include <mswsock.h>
#include <windows.h>

#include <algorithm>

namespace ks {

namespace {

// SIO_TIMESTAMPING's control code, configuration and control message, spelled out here: the
// headers define them only when targeting Windows 10 2004 (NTDDI_WIN10_FE) or later.
constexpr DWORD kSioTimestamping = _WSAIOW(IOC_VENDOR, 235);
constexpr ULONG kTimestampRx = 0x1;
constexpr INT kSoTimestamp = 0x300A;
struct StampConfig {
    ULONG flags;
    USHORT tx_buffered;
};

LPFN_WSARECVMSG recv_msg_function(SOCKET s) {
    static LPFN_WSARECVMSG fn = [s] {
        GUID id = WSAID_WSARECVMSG;
        LPFN_WSARECVMSG f = nullptr;
        DWORD got = 0;
        if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &id, sizeof id, &f, sizeof f, &got, nullptr, nullptr) != 0) return LPFN_WSARECVMSG{};
        return f;
    }();
    return fn;
}

double seconds_since(UINT64 counter) {
    LARGE_INTEGER now, freq;
    QueryPerformanceCounter(&now);
    QueryPerformanceFrequency(&freq);
    const double age = double(INT64(UINT64(now.QuadPart) - counter)) / double(freq.QuadPart);
    return std::clamp(age, 0.0, 1.0);
}

double kernel_age_s(WSAMSG& msg) {
    for (WSACMSGHDR* c = WSA_CMSG_FIRSTHDR(&msg); c; c = WSA_CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != kSoTimestamp) continue;
        UINT64 at;
        std::copy_n(reinterpret_cast<const char*>(WSA_CMSG_DATA(c)), sizeof at, reinterpret_cast<char*>(&at));
        return seconds_since(at);
    }
    return 0.0;
}

// recvfrom without a timestamp, for when WSARecvMsg is missing.
bool receive_plain(SOCKET s, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    int from_len = sizeof out.from;
    const int n = ::recvfrom(s, reinterpret_cast<char*>(buf), int(capacity), 0, reinterpret_cast<sockaddr*>(&out.from), &from_len);
    if (n == SOCKET_ERROR) return false;
    out.size = size_t(n);
    out.from_len = from_len;
    out.age_s = 0;
    return true;
}

}  // namespace

bool enable_receive_timestamps(SocketHandle s) {
    // An ICMP "port unreachable" for an earlier send otherwise fails the next read (WSAECONNRESET).
    BOOL report_reset = FALSE;
    DWORD got = 0;
    WSAIoctl(s, SIO_UDP_CONNRESET, &report_reset, sizeof report_reset, nullptr, 0, &got, nullptr, nullptr);
    StampConfig cfg{kTimestampRx, 0};
    if (!recv_msg_function(s)) return false;
    return WSAIoctl(s, kSioTimestamping, &cfg, sizeof cfg, nullptr, 0, &got, nullptr, nullptr) == 0;
}

bool receive_timed(SocketHandle s, uint8_t* buf, size_t capacity, TimedDatagram& out) {
    out.from = {};
    const LPFN_WSARECVMSG recv_msg = recv_msg_function(s);
    if (!recv_msg) return receive_plain(s, buf, capacity, out);
    char control[WSA_CMSG_SPACE(sizeof(UINT64))];
    WSABUF data{ULONG(capacity), reinterpret_cast<char*>(buf)};
    WSAMSG msg{};
    msg.name = reinterpret_cast<sockaddr*>(&out.from);
    msg.namelen = sizeof out.from;
    msg.lpBuffers = &data;
    msg.dwBufferCount = 1;
    msg.Control = {ULONG(sizeof control), control};
    DWORD n = 0;
    for (;;) {
        if (recv_msg(s, &msg, &n, nullptr, nullptr) == 0) break;
        const int err = WSAGetLastError();
        if (err == WSAEMSGSIZE) break;  // truncated, as recvmsg on POSIX: the datagram is consumed
        if (err != WSAECONNRESET) return false;
    }
    out.size = size_t(n);
    out.from_len = msg.namelen;
    out.age_s = kernel_age_s(msg);
    return true;
}

bool wait_readable(SocketHandle s, int timeout_ms) {
    fd_set read;
    FD_ZERO(&read);
    FD_SET(s, &read);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    return ::select(0, &read, nullptr, nullptr, &tv) == 1;
}

}  // namespace ks
#endif
