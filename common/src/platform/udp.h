#pragma once
// The operating system's UDP calls that Asio does not give: reading a datagram together with when
// it arrived, and waiting for one. One implementation per platform: udp_posix.cpp (Linux, macOS,
// BSD) and udp_win32.cpp (Windows).
//
// A program that reads its socket once per frame or per tick reads what arrived up to a frame ago;
// stamping it with the time of the read would make every pong (and so the round trip and the clock
// estimate) up to a frame late. The kernel's receive timestamp says how long the datagram waited
// in the socket: SO_TIMESTAMPNS on Linux, SO_TIMESTAMP on other POSIX systems, SIO_TIMESTAMPING on
// Windows 10 2004 and later. Where none is available, ages are 0 and the caller says so
// (StreamClient's stats: receive_timestamps). The client and the server read their sockets this
// way, so their round trips are measured alike.

#include <cstddef>
#include <cstdint>

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <sys/socket.h>
#endif

namespace ks {

#if defined(_WIN32)
using SocketHandle = SOCKET;
#else
using SocketHandle = int;
#endif

// Asks the kernel to timestamp the socket's datagrams; false when it cannot (then ages are 0).
bool enable_receive_timestamps(SocketHandle s);

struct TimedDatagram {
    size_t size = 0;
    sockaddr_storage from{};  // the sender, IPv4 or IPv6
    socklen_t from_len = 0;
    double age_s = 0;  // how long ago the kernel received it (0 when not timestamped)
    // The sender as IPv4 (host order), or 0 when it is not IPv4.
    uint32_t from_ipv4() const;
    uint16_t from_port() const;
};

// Reads one datagram into buf without blocking; false when none is waiting (or on an error).
bool receive_timed(SocketHandle s, uint8_t* buf, size_t capacity, TimedDatagram& out);

// Waits up to timeout_ms for a datagram to read; false on timeout (or an error).
bool wait_readable(SocketHandle s, int timeout_ms);

}  // namespace ks
