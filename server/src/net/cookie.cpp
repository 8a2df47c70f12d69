#include "server/src/net/cookie.h"

#include "common/src/crypto/crypto.h"
#include "server/src/net/admission.h"

namespace ks::net {

namespace {

constexpr size_t kPlainBytes = 8 + 8 + 8 + kSealTagBytes + 2 * kKeyBytes;
constexpr size_t kNonceBytes = crypto::kXNonceBytes;
static_assert(kNonceBytes + kPlainBytes + crypto::kTagBytes == kCookieBytes, "the cookie's layout");

void put64(uint8_t*& p, uint64_t v) {
    for (int i = 0; i < 8; ++i) *p++ = uint8_t(v >> (8 * i));
}
uint64_t get64(const uint8_t*& p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(*p++) << (8 * i);
    return v;
}

// Associated data: a context, the peer's address (16 bytes) and port, the salt.
constexpr char kContext[] = "kinesync cookie v7";
constexpr size_t kBindingBytes = sizeof kContext + 16 + 2 + 8;

std::array<uint8_t, kBindingBytes> binding(const asio::ip::udp::endpoint& peer, uint64_t salt) {
    std::array<uint8_t, kBindingBytes> ad{};
    uint8_t* p = std::copy(kContext, kContext + sizeof kContext, ad.begin());
    const std::array<uint8_t, 16> a = address_bytes(peer.address());
    p = std::copy(a.begin(), a.end(), p);
    *p++ = uint8_t(peer.port());
    *p++ = uint8_t(peer.port() >> 8);
    put64(p, salt);
    return ad;
}

}  // namespace

CookieJar::CookieJar(uint64_t seed) {
    ensure_crypto();
    random_bytes(nonce_prefix_);
    if (seed == 0) {
        random_bytes(key_);
        return;
    }
    uint8_t s[8];
    for (int i = 0; i < 8; ++i) s[i] = uint8_t(seed >> (8 * i));
    crypto::keyed_hash(key_, s);
}

Cookie CookieJar::seal(const CookieContents& c, const asio::ip::udp::endpoint& peer, uint64_t salt) {
    std::array<uint8_t, kPlainBytes> plain{};
    uint8_t* p = plain.data();
    put64(p, c.window);
    put64(p, c.token_expire_s);
    put64(p, c.client_id);
    p = std::copy(c.token_tag.begin(), c.token_tag.end(), p);
    p = std::copy(c.client_to_server.begin(), c.client_to_server.end(), p);
    std::copy(c.server_to_client.begin(), c.server_to_client.end(), p);
    Cookie out{};
    uint8_t* n = std::copy(nonce_prefix_.begin(), nonce_prefix_.end(), out.begin());
    put64(n, counter_++);  // a counter: no nonce repeats under the key
    const auto ad = binding(peer, salt);
    crypto::aead_x_seal(out.data() + kNonceBytes, plain, ad, std::span<const uint8_t, kNonceBytes>(out.data(), kNonceBytes), key_);
    return out;
}

std::optional<CookieContents> CookieJar::open(const Cookie& cookie, const asio::ip::udp::endpoint& peer, uint64_t salt,
                                              uint64_t window) const {
    std::array<uint8_t, kPlainBytes> plain{};
    const auto ad = binding(peer, salt);
    const std::span<const uint8_t> sealed(cookie.data() + kNonceBytes, kPlainBytes + crypto::kTagBytes);
    if (!crypto::aead_x_open(plain.data(), sealed, ad, std::span<const uint8_t, kNonceBytes>(cookie.data(), kNonceBytes), key_))
        return std::nullopt;
    CookieContents c;
    const uint8_t* p = plain.data();
    c.window = get64(p);
    if (c.window != window && c.window + 1 != window) return std::nullopt;  // stale (or from the future)
    c.token_expire_s = get64(p);
    c.client_id = get64(p);
    std::copy_n(p, c.token_tag.size(), c.token_tag.begin());
    p += c.token_tag.size();
    std::copy_n(p, kKeyBytes, c.client_to_server.begin());
    std::copy_n(p + kKeyBytes, kKeyBytes, c.server_to_client.begin());
    return c;
}

}  // namespace ks::net
