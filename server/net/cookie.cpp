#include "server/net/cookie.h"

#include <cstring>
#include <vector>

namespace ks::net {

namespace {
inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline void sipround(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
}
uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
}  // namespace

uint64_t siphash24(const std::array<uint64_t, 2>& key, const uint8_t* data, size_t len) {
    uint64_t v0 = 0x736f6d6570736575ull ^ key[0], v1 = 0x646f72616e646f6dull ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ull ^ key[0], v3 = 0x7465646279746573ull ^ key[1];
    const size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; ++i) {
        uint64_t m;
        std::memcpy(&m, data + i * 8, 8);
        v3 ^= m;
        sipround(v0, v1, v2, v3);
        sipround(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t b = uint64_t(len) << 56;
    for (size_t i = 0; i < (len & 7); ++i) b |= uint64_t(data[blocks * 8 + i]) << (8 * i);
    v3 ^= b;
    sipround(v0, v1, v2, v3);
    sipround(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) sipround(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

CookieJar::CookieJar(uint64_t seed) {
    key_[0] = splitmix(seed);
    key_[1] = splitmix(seed);
}

std::array<uint8_t, 16> CookieJar::make(const std::string& address, uint16_t port, uint64_t salt, uint64_t window) const {
    std::vector<uint8_t> msg(address.begin(), address.end());
    auto put = [&msg](uint64_t v, int n) {
        for (int i = 0; i < n; ++i) msg.push_back(uint8_t(v >> (8 * i)));
    };
    put(port, 2);
    put(salt, 8);
    put(window, 8);
    std::array<uint8_t, 16> out{};
    const uint64_t a = siphash24(key_, msg.data(), msg.size());
    msg.push_back(0x5A);
    const uint64_t b = siphash24(key_, msg.data(), msg.size());
    std::memcpy(out.data(), &a, 8);
    std::memcpy(out.data() + 8, &b, 8);
    return out;
}

bool CookieJar::check(const std::array<uint8_t, 16>& cookie, const std::string& address, uint16_t port, uint64_t salt,
                      uint64_t window) const {
    for (uint64_t w : {window, window > 0 ? window - 1 : window}) {
        const auto expect = make(address, port, salt, w);
        uint8_t diff = 0;  // constant time
        for (size_t i = 0; i < cookie.size(); ++i) diff |= uint8_t(cookie[i] ^ expect[i]);
        if (diff == 0) return true;
    }
    return false;
}

}  // namespace ks::net
