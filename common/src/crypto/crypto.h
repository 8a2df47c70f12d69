#pragma once
// The primitives kinesync's protocol uses, behind one small interface with two backends:
// libsodium (the default, everything) and libgcrypt (the Windows client build: no XChaCha20 and
// no SipHash, so it cannot issue tokens or run a server; no 16-byte BLAKE2b, so no handshake
// proof either: a libgcrypt client connects only to a server without tokens). Both can be
// linked into one binary (ks::crypto::sodium / ks::crypto::gcrypt; the tests do); the libraries
// link the one the CMake option KS_CRYPTO names, and the free functions below forward to it.
// Randomness is not here: it is the operating system's (common/src/platform/random.h).

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

namespace ks::crypto {

constexpr size_t kKeyBytes = 32;
constexpr size_t kTagBytes = 16;
constexpr size_t kIetfNonceBytes = 12;
constexpr size_t kXNonceBytes = 24;
constexpr size_t kShortHashKeyBytes = 16;
constexpr size_t kShortHashBytes = 8;
constexpr size_t kHashMinBytes = 16, kHashMaxBytes = 64, kHashMaxKeyBytes = 64;

using KeyView = std::span<const uint8_t, kKeyBytes>;
using Bytes = std::span<const uint8_t>;

// A primitive this backend does not have (what() names the backend and the primitive).
class Unsupported : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Backend {
    const char* name;
    // Initialises the library once (thread-safe); throws std::runtime_error when it cannot.
    void (*init)();
    // ChaCha20-Poly1305-IETF (RFC 8439): out receives ciphertext then tag (plain.size() + 16 bytes).
    void (*aead_ietf_seal)(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key);
    // out receives sealed.size() - 16 bytes; false (out zeroed) when it does not authenticate.
    bool (*aead_ietf_open)(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key);
    // XChaCha20-Poly1305 (24-byte nonce), same layout; may throw Unsupported.
    void (*aead_x_seal)(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key);
    bool (*aead_x_open)(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key);
    // BLAKE2b with out.size() bytes of output (16..64) and an optional key (0..64 bytes): the
    // same bytes as libsodium's crypto_generichash. libgcrypt has outputs of 20, 32, 48 and 64
    // bytes only (Unsupported otherwise, 16 included: no handshake proof on that backend).
    void (*keyed_hash)(std::span<uint8_t> out, Bytes msg, Bytes key);
    // SipHash-2-4 (libsodium's crypto_shorthash); may throw Unsupported.
    void (*short_hash)(std::span<uint8_t, kShortHashBytes> out, Bytes msg, std::span<const uint8_t, kShortHashKeyBytes> key);
    // Equal sizes and bytes, in time independent of where they differ.
    bool (*equal_constant_time)(Bytes a, Bytes b);
};

namespace sodium {
const Backend& backend();
}
namespace gcrypt {
const Backend& backend();
}

// The libraries' backend (KS_CRYPTO), initialised.
const Backend& backend();
// The backend called `name` ("sodium", "gcrypt"), initialised, when the libraries have it, else nullptr.
const Backend* find_backend(std::string_view name);

inline void aead_ietf_seal(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    backend().aead_ietf_seal(out, plain, ad, nonce, key);
}
inline bool aead_ietf_open(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    return backend().aead_ietf_open(out, sealed, ad, nonce, key);
}
inline void aead_x_seal(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key) {
    backend().aead_x_seal(out, plain, ad, nonce, key);
}
inline bool aead_x_open(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kXNonceBytes> nonce, KeyView key) {
    return backend().aead_x_open(out, sealed, ad, nonce, key);
}
inline void keyed_hash(std::span<uint8_t> out, Bytes msg, Bytes key = {}) { backend().keyed_hash(out, msg, key); }
inline void short_hash(std::span<uint8_t, kShortHashBytes> out, Bytes msg, std::span<const uint8_t, kShortHashKeyBytes> key) {
    backend().short_hash(out, msg, key);
}
inline bool equal_constant_time(Bytes a, Bytes b) { return backend().equal_constant_time(a, b); }
inline void init() { backend(); }

}  // namespace ks::crypto
