#pragma once
// Stateless challenge cookies. What the server needs to finish a handshake (the time window it
// answered in and, with connect tokens, the opened token's keys, client id, expiry and tag) travels
// to the client and back sealed (XChaCha20-Poly1305) under a key only this server process knows,
// bound to the peer's address, port and salt. The server keeps nothing per unauthenticated peer and
// never opens a token twice; a cookie replayed from another address or port, for another salt, or
// after two windows, is refused. Layout: kCookieBytes = 24-byte nonce (16 random bytes per process,
// then a counter: no nonce repeats, even under a key several processes derive from one seed),
// 104 bytes sealed, 16-byte tag.

#include <array>
#include <asio/ip/udp.hpp>
#include <cstdint>
#include <optional>

#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"

namespace ks::net {

struct CookieContents {
    uint64_t window = 0;               // floor(server seconds / kCookieWindowS) when it was made
    uint64_t token_expire_s = 0;       // with tokens; else 0 and the rest zero
    uint64_t client_id = 0;
    std::array<uint8_t, kSealTagBytes> token_tag{};
    Key client_to_server{}, server_to_client{};
};

constexpr double kCookieWindowS = 10.0;

class CookieJar {
public:
    // seed 0: a random key (what a server uses); otherwise a key derived from the seed (tests).
    explicit CookieJar(uint64_t seed);
    Cookie seal(const CookieContents& c, const asio::ip::udp::endpoint& peer, uint64_t salt);
    // The contents, when the cookie is this jar's, for this peer and salt, made in window
    // `window` or the one before; else nullopt.
    std::optional<CookieContents> open(const Cookie& cookie, const asio::ip::udp::endpoint& peer, uint64_t salt,
                                       uint64_t window) const;

private:
    Key key_{};
    std::array<uint8_t, 16> nonce_prefix_{};  // random per jar
    uint64_t counter_ = 0;
};

}  // namespace ks::net
