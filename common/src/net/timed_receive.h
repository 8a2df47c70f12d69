#pragma once
// Reading a datagram together with when it arrived. A program that reads its socket once per frame
// or per tick reads what arrived up to a frame ago; stamping it with the time of the read would
// make every pong (and so the round trip and the clock estimate) up to a frame late. The kernel's
// receive timestamp (SO_TIMESTAMPNS) says how long the datagram waited in the socket. The client
// and the server both read their sockets this way, so their round trips are measured alike.

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace ks {

// Asks the kernel to timestamp the socket's datagrams; false when it cannot (then ages are 0).
bool enable_receive_timestamps(int fd);

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
bool receive_timed(int fd, uint8_t* buf, size_t capacity, TimedDatagram& out);

}  // namespace ks
