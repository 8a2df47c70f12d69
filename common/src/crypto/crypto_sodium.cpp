// The libsodium backend: every primitive (compiled only when the build has libsodium).
#if defined(KS_HAVE_SODIUM)

#include <mutex>
#include <sodium.h>

#include "common/src/crypto/crypto.h"

namespace ks::crypto::sodium {

namespace {

static_assert(crypto_aead_chacha20poly1305_IETF_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_NPUBBYTES == kIetfNonceBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_ABYTES == kTagBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == kXNonceBytes);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kTagBytes);
static_assert(crypto_shorthash_KEYBYTES == kShortHashKeyBytes && crypto_shorthash_BYTES == kShortHashBytes);

void init() {
    static std::once_flag once;
    static bool ok = false;
    std::call_once(once, [] { ok = sodium_init() >= 0; });
    if (!ok) throw std::runtime_error("crypto backend 'sodium': libsodium could not be initialised (sodium_init failed)");
}

void ietf_seal(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    crypto_aead_chacha20poly1305_ietf_encrypt(out, nullptr, plain.data(), plain.size(), ad.data(), ad.size(), nullptr,
                                              nonce.data(), key.data());
}

bool ietf_open(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    if (sealed.size() < kTagBytes) return false;
    return crypto_aead_chacha20poly1305_ietf_decrypt(out, nullptr, nullptr, sealed.data(), sealed.size(), ad.data(), ad.size(),
                                                     nonce.data(), key.data()) == 0;
}

void x_seal(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key) {
    crypto_aead_xchacha20poly1305_ietf_encrypt(out, nullptr, plain.data(), plain.size(), ad.data(), ad.size(), nullptr,
                                               nonce.data(), key.data());
}

bool x_open(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key) {
    if (sealed.size() < kTagBytes) return false;
    return crypto_aead_xchacha20poly1305_ietf_decrypt(out, nullptr, nullptr, sealed.data(), sealed.size(), ad.data(), ad.size(),
                                                      nonce.data(), key.data()) == 0;
}

void keyed_hash(std::span<uint8_t> out, Bytes msg, Bytes key) {
    if (out.size() < kHashMinBytes || out.size() > kHashMaxBytes || key.size() > kHashMaxKeyBytes ||
        crypto_generichash(out.data(), out.size(), msg.data(), msg.size(), key.empty() ? nullptr : key.data(), key.size()) != 0)
        throw std::invalid_argument("crypto backend 'sodium': BLAKE2b takes 16..64 output bytes and a key of 0..64 bytes");
}

void short_hash(std::span<uint8_t, kShortHashBytes> out, Bytes msg, std::span<const uint8_t, kShortHashKeyBytes> key) {
    crypto_shorthash(out.data(), msg.data(), msg.size(), key.data());
}

bool equal(Bytes a, Bytes b) { return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace

const Backend& backend() {
    static const Backend b{"sodium", init, ietf_seal, ietf_open, x_seal, x_open, keyed_hash, short_hash, equal};
    return b;
}

}  // namespace ks::crypto::sodium

#endif
