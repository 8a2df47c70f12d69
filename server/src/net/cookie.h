#pragma once
// Stateless challenge cookies: a keyed hash (BLAKE2b, crypto::keyed_hash, 16 bytes)
// of the peer's address, port, salt, a coarse time window and, with connect tokens, the token's
// tag, so the server keeps nothing per unauthenticated peer and a cookie replayed from another
// address or port, for another token, or after two windows, is refused.

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace ks::net {

class CookieJar {
public:
    // seed 0: a random key; otherwise a key derived from the seed (reproducible tests).
    explicit CookieJar(uint64_t seed);
    // Cookie for (address, port, salt, bound bytes) in time window `window` (e.g. seconds / 10).
    std::array<uint8_t, 16> make(const std::string& address, uint16_t port, uint64_t salt, uint64_t window,
                                 std::span<const uint8_t> bound = {}) const;
    // Valid in the current or the previous window (compared in constant time).
    bool check(const std::array<uint8_t, 16>& cookie, const std::string& address, uint16_t port, uint64_t salt,
               uint64_t window, std::span<const uint8_t> bound = {}) const;

private:
    std::array<uint8_t, 32> key_{};
};

}  // namespace ks::net
