#pragma once
// Stateless challenge cookies: a keyed hash of the peer's address, port, salt and a coarse time
// window, so the server keeps nothing per unauthenticated peer and a cookie replayed from another
// address or port, or after two windows, is refused. (SipHash-2-4 with a random 128-bit key: a
// keyed PRF, which is what a cookie needs; not a substitute for encryption.)

#include <array>
#include <cstdint>
#include <string>

namespace ks::net {

uint64_t siphash24(const std::array<uint64_t, 2>& key, const uint8_t* data, size_t len);

class CookieJar {
public:
    explicit CookieJar(uint64_t seed);
    // Cookie for (address, port, salt) in time window `window` (e.g. server seconds / 10).
    std::array<uint8_t, 16> make(const std::string& address, uint16_t port, uint64_t salt, uint64_t window) const;
    // Valid in the current or the previous window.
    bool check(const std::array<uint8_t, 16>& cookie, const std::string& address, uint16_t port, uint64_t salt,
               uint64_t window) const;

private:
    std::array<uint64_t, 2> key_;
};

}  // namespace ks::net
