#include "server/src/net/cookie.h"

#include <vector>

#include "common/src/crypto/crypto.h"
#include "common/src/net/secure_channel.h"

namespace ks::net {

CookieJar::CookieJar(uint64_t seed) {
    ensure_crypto();
    if (seed == 0) {
        random_bytes(key_);
        return;
    }
    uint8_t s[8];
    for (int i = 0; i < 8; ++i) s[i] = uint8_t(seed >> (8 * i));
    crypto::keyed_hash(key_, s);
}

std::array<uint8_t, 16> CookieJar::make(const std::string& address, uint16_t port, uint64_t salt, uint64_t window,
                                        std::span<const uint8_t> bound) const {
    std::vector<uint8_t> msg(address.begin(), address.end());
    auto put = [&msg](uint64_t v, int n) {
        for (int i = 0; i < n; ++i) msg.push_back(uint8_t(v >> (8 * i)));
    };
    msg.push_back(0);  // the address text ends here
    put(port, 2);
    put(salt, 8);
    put(window, 8);
    msg.insert(msg.end(), bound.begin(), bound.end());
    std::array<uint8_t, 16> out{};
    crypto::keyed_hash(out, msg, key_);
    return out;
}

bool CookieJar::check(const std::array<uint8_t, 16>& cookie, const std::string& address, uint16_t port, uint64_t salt,
                      uint64_t window, std::span<const uint8_t> bound) const {
    for (uint64_t w : {window, window > 0 ? window - 1 : window}) {
        const auto expect = make(address, port, salt, w, bound);
        if (crypto::equal_constant_time(cookie, expect)) return true;
    }
    return false;
}

}  // namespace ks::net
