// The libgcrypt backend (the Windows client build): ChaCha20-Poly1305-IETF and BLAKE2b.
// libgcrypt has neither XChaCha20 nor SipHash, so those refuse (Unsupported): a client never
// needs them, only a server and a token issuer do. Nor has it BLAKE2b-128 (see blake2b_algo).
// Compiled only when the build has libgcrypt.
#if defined(KS_HAVE_GCRYPT)

#include <cstring>
#include <gcrypt.h>
#include <mutex>
#include <string>

#include "common/src/crypto/crypto.h"

namespace ks::crypto::gcrypt {

namespace {

// The oldest libgcrypt with both ChaCha20-Poly1305 and keyed BLAKE2b.
constexpr const char* kMinVersion = "1.8.0";

void check(gcry_error_t err, const char* what) {
    if (err) throw std::runtime_error(std::string("crypto backend 'gcrypt': ") + what + ": " + gcry_strerror(err));
}

[[noreturn]] void unsupported(const char* primitive) {
    throw Unsupported(std::string("crypto backend 'gcrypt': ") + primitive + " is not in the libgcrypt build (client-only)");
}

void init() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (!gcry_check_version(kMinVersion))
            throw std::runtime_error(std::string("crypto backend 'gcrypt': libgcrypt ") + kMinVersion + " or newer is needed");
        // An application that set libgcrypt up itself keeps its own settings.
        if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return;
        // No secure memory: keys live in ordinary memory here as they do with libsodium.
        check(gcry_control(GCRYCTL_DISABLE_SECMEM, 0), "disabling secure memory");
        check(gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0), "finishing initialisation");
    });
}

// One ChaCha20-Poly1305 handle, keyed, with its nonce and associated data already fed.
class Aead {
public:
    Aead(Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
        check(gcry_cipher_open(&h_, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305, 0), "opening ChaCha20-Poly1305");
        check(gcry_cipher_setkey(h_, key.data(), key.size()), "setting the key");
        check(gcry_cipher_setiv(h_, nonce.data(), nonce.size()), "setting the nonce");
        if (!ad.empty()) check(gcry_cipher_authenticate(h_, ad.data(), ad.size()), "authenticating the associated data");
        check(gcry_cipher_final(h_), "marking the last data");
    }
    ~Aead() { gcry_cipher_close(h_); }
    Aead(const Aead&) = delete;
    Aead& operator=(const Aead&) = delete;
    gcry_cipher_hd_t get() const { return h_; }

private:
    gcry_cipher_hd_t h_ = nullptr;
};

void ietf_seal(uint8_t* out, Bytes plain, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    Aead a(ad, nonce, key);
    if (!plain.empty()) check(gcry_cipher_encrypt(a.get(), out, plain.size(), plain.data(), plain.size()), "encrypting");
    check(gcry_cipher_gettag(a.get(), out + plain.size(), kTagBytes), "reading the tag");
}

bool ietf_open(uint8_t* out, Bytes sealed, Bytes ad, std::span<const uint8_t, kIetfNonceBytes> nonce, KeyView key) {
    if (sealed.size() < kTagBytes) return false;
    const size_t n = sealed.size() - kTagBytes;
    Aead a(ad, nonce, key);
    if (n > 0) check(gcry_cipher_decrypt(a.get(), out, n, sealed.data(), n), "decrypting");
    const gcry_error_t err = gcry_cipher_checktag(a.get(), sealed.data() + n, kTagBytes);
    if (err == 0) return true;
    if (n > 0) std::memset(out, 0, n);  // never hand out plaintext that did not authenticate
    if (gcry_err_code(err) == GPG_ERR_CHECKSUM) return false;
    check(err, "checking the tag");
    return false;
}

void x_seal(uint8_t*, Bytes, Bytes, std::span<const uint8_t, kXNonceBytes>, KeyView) { unsupported("XChaCha20-Poly1305"); }

bool x_open(uint8_t*, Bytes, Bytes, std::span<const uint8_t, kXNonceBytes>, KeyView) { unsupported("XChaCha20-Poly1305"); }

// libgcrypt has BLAKE2b at 20, 32, 48 and 64 bytes only (1.10: no GCRY_MD_BLAKE2B_128). The
// output length is in BLAKE2b's parameter block, so no other length can be made from these
// (truncating BLAKE2b-256 is not BLAKE2b-128): the protocol's 16-byte handshake proof and cookies
// are out of reach of this backend.
int blake2b_algo(size_t out_bytes) {
    switch (out_bytes) {
        case 20: return GCRY_MD_BLAKE2B_160;
        case 32: return GCRY_MD_BLAKE2B_256;
        case 48: return GCRY_MD_BLAKE2B_384;
        case 64: return GCRY_MD_BLAKE2B_512;
    }
    throw Unsupported("crypto backend 'gcrypt': BLAKE2b with " + std::to_string(out_bytes) +
                      " output bytes is not in libgcrypt (it has 20, 32, 48 and 64)");
}

// Keyed through gcry_md_setkey (BLAKE2's own keyed mode, not HMAC): the same bytes as
// libsodium's crypto_generichash at the same output length (test_crypto checks both).
void keyed_hash(std::span<uint8_t> out, Bytes msg, Bytes key) {
    if (key.size() > kHashMaxKeyBytes) throw std::invalid_argument("crypto backend 'gcrypt': BLAKE2b keys are 0..64 bytes");
    gcry_md_hd_t h = nullptr;
    check(gcry_md_open(&h, blake2b_algo(out.size()), 0), "opening BLAKE2b");
    struct Close {
        gcry_md_hd_t h;
        ~Close() { gcry_md_close(h); }
    } close{h};
    if (!key.empty()) check(gcry_md_setkey(h, key.data(), key.size()), "setting the BLAKE2b key");
    if (!msg.empty()) gcry_md_write(h, msg.data(), msg.size());
    const unsigned char* digest = gcry_md_read(h, 0);
    if (!digest) throw std::runtime_error("crypto backend 'gcrypt': BLAKE2b gave no digest");
    std::memcpy(out.data(), digest, out.size());
}

void short_hash(std::span<uint8_t, kShortHashBytes>, Bytes, std::span<const uint8_t, kShortHashKeyBytes>) {
    unsupported("SipHash-2-4");
}

// libgcrypt has no public constant-time compare: every byte is looked at whatever differs.
bool equal(Bytes a, Bytes b) {
    if (a.size() != b.size()) return false;
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff = uint8_t(diff | (a[i] ^ b[i]));
    return diff == 0;
}

}  // namespace

const Backend& backend() {
    static const Backend b{"gcrypt", init, ietf_seal, ietf_open, x_seal, x_open, keyed_hash, short_hash, equal};
    return b;
}

}  // namespace ks::crypto::gcrypt

#endif
