#pragma once
// Reading a datagram together with when it arrived. A client pumped once per render frame reads
// what arrived up to a frame ago; stamping it with the time of the read would make every pong
// (and so the round trip and the server clock estimate) up to a frame late. The kernel's receive
// timestamp (SO_TIMESTAMPNS) says how long the datagram waited in the socket.

#include <cstddef>
#include <cstdint>

namespace ks {

// Asks the kernel to timestamp the socket's datagrams; false when it cannot (then ages are 0).
bool enable_receive_timestamps(int fd);

struct TimedDatagram {
    size_t size = 0;
    uint32_t from_ip = 0;    // IPv4, host order
    uint16_t from_port = 0;  // host order
    double age_s = 0;        // how long ago the kernel received it (0 when not timestamped)
};

// Reads one datagram into buf without blocking; false when none is waiting (or on an error).
bool receive_timed(int fd, uint8_t* buf, size_t capacity, TimedDatagram& out);

}  // namespace ks
