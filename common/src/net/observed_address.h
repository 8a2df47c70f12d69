#pragma once
// Challenge.observed (schema/protocol.fbs): the address and port the server saw a ConnectRequest
// come from, as 16 bytes (IPv4 as ::ffff:a.b.c.d) and a big-endian port. The server writes it
// under the Challenge's mac; a client that knows its own address tells its own Challenge from one
// relayed to another address (schema/PROTOCOL.md, "Handshake").

#include <algorithm>
#include <asio/ip/udp.hpp>

#include "common/src/net/protocol.h"

namespace ks::net {

inline ObservedAddress observed_address(const asio::ip::udp::endpoint& e) {
    const asio::ip::address a = e.address();
    const std::array<uint8_t, 16> bytes =
        a.is_v4() ? asio::ip::make_address_v6(asio::ip::v4_mapped, a.to_v4()).to_bytes() : a.to_v6().to_bytes();
    ObservedAddress out{};
    std::copy(bytes.begin(), bytes.end(), out.begin());
    out[16] = uint8_t(e.port() >> 8);
    out[17] = uint8_t(e.port());
    return out;
}

}  // namespace ks::net
