#include "server/src/net/cookie.h"

#include <sodium.h>
#include <vector>

#include "common/src/net/secure_channel.h"

namespace ks::net {

CookieJar::CookieJar(uint64_t seed) {
    ensure_crypto();
    if (seed == 0) {
        randombytes_buf(key_.data(), key_.size());
        return;
    }
    uint8_t s[8];
    for (int i = 0; i < 8; ++i) s[i] = uint8_t(seed >> (8 * i));
    crypto_generichash(key_.data(), key_.size(), s, sizeof s, nullptr, 0);
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
    crypto_generichash(out.data(), out.size(), msg.data(), msg.size(), key_.data(), key_.size());
    return out;
}

bool CookieJar::check(const std::array<uint8_t, 16>& cookie, const std::string& address, uint16_t port, uint64_t salt,
                      uint64_t window, std::span<const uint8_t> bound) const {
    for (uint64_t w : {window, window > 0 ? window - 1 : window}) {
        const auto expect = make(address, port, salt, w, bound);
        if (sodium_memcmp(cookie.data(), expect.data(), cookie.size()) == 0) return true;
    }
    return false;
}

}  // namespace ks::net
