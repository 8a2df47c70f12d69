// The crypto interface (common/src/crypto/crypto.h) on each backend this build has: published
// vectors (RFC 8439 AEAD, RFC 7693 and the BLAKE2 reference KAT), the two backends against each
// other byte for byte (what a gcrypt client and a sodium server exchange), the gcrypt backend's
// refusals, and the operating system's random source. A backend not built is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/src/crypto/crypto.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"
#include "common/src/platform/random.h"

using namespace ks;
using ks::crypto::Backend;

namespace {

// The backend called `name`: the libraries' own, or gcrypt built beside sodium for these tests.
const Backend* backend_named(std::string_view name) {
    if (const Backend* b = crypto::find_backend(name)) return b;
#if defined(KS_TEST_GCRYPT_BESIDE)
    if (name == "gcrypt") {
        crypto::gcrypt::backend().init();
        return &crypto::gcrypt::backend();
    }
#endif
    return nullptr;
}

std::vector<uint8_t> from_hex(std::string_view hex) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(uint8_t(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
    return out;
}

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> rising(uint8_t from, size_t n) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(from + i);
    return v;
}

std::vector<uint8_t> random_vector(std::mt19937& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (uint8_t& b : v) b = uint8_t(rng());
    return v;
}

std::vector<uint8_t> seal_ietf(const Backend& b, crypto::Bytes plain, crypto::Bytes ad, crypto::Bytes nonce, crypto::Bytes key) {
    std::vector<uint8_t> out(plain.size() + crypto::kTagBytes);
    b.aead_ietf_seal(out.data(), plain, ad, nonce.first<crypto::kIetfNonceBytes>(), key.first<crypto::kKeyBytes>());
    return out;
}

bool open_ietf(const Backend& b, crypto::Bytes sealed, crypto::Bytes ad, crypto::Bytes nonce, crypto::Bytes key,
               std::vector<uint8_t>& plain) {
    plain.assign(sealed.size() - crypto::kTagBytes, 0xEE);
    return b.aead_ietf_open(plain.data(), sealed, ad, nonce.first<crypto::kIetfNonceBytes>(), key.first<crypto::kKeyBytes>());
}

std::vector<uint8_t> hash(const Backend& b, size_t out_bytes, crypto::Bytes msg, crypto::Bytes key = {}) {
    std::vector<uint8_t> out(out_bytes);
    b.keyed_hash(out, msg, key);
    return out;
}

// Both backends, or a skip naming the one this build lacks.
#define KS_NEED_BOTH_BACKENDS(s, g)                                                                     \
    const Backend* s = backend_named("sodium");                                                         \
    const Backend* g = backend_named("gcrypt");                                                         \
    if (!s || !g) GTEST_SKIP() << "needs both crypto backends; this build has sodium " << (s != nullptr) \
                               << ", gcrypt " << (g != nullptr) << " (KS_CRYPTO, libgcrypt found?)"

}  // namespace

// ---- Each backend against published vectors ----

class CryptoBackend : public testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        b_ = backend_named(GetParam());
        if (!b_) GTEST_SKIP() << "the " << GetParam() << " crypto backend is not in this build";
    }
    const Backend& b() const { return *b_; }

private:
    const Backend* b_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Crypto, CryptoBackend, testing::Values("sodium", "gcrypt"),
                         [](const testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// RFC 8439 §2.8.2: AEAD_CHACHA20_POLY1305 test vector (key 80..9f, nonce 07000000 4041424344454647).
TEST_P(CryptoBackend, AeadMatchesRfc8439Section282) {
    const auto key = rising(0x80, 32);
    const auto nonce = from_hex("070000004041424344454647");
    const auto ad = from_hex("50515253c0c1c2c3c4c5c6c7");
    const auto plain = bytes_of(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.");
    const auto expect = from_hex(
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
        "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
        "3ff4def08e4b7a9de576d26586cec64b6116"
        "1ae10b594f09e26a7e902ecbd0600691");  // the tag
    ASSERT_EQ(plain.size(), 114u);
    const auto sealed = seal_ietf(b(), plain, ad, nonce, key);
    EXPECT_EQ(sealed, expect);
    std::vector<uint8_t> opened;
    ASSERT_TRUE(open_ietf(b(), expect, ad, nonce, key, opened));
    EXPECT_EQ(opened, plain);
    auto forged = expect;
    forged.back() ^= 1;
    EXPECT_FALSE(open_ietf(b(), forged, ad, nonce, key, opened));
    EXPECT_TRUE(std::all_of(opened.begin(), opened.end(), [](uint8_t v) { return v == 0; }))
        << "a refused datagram leaves no plaintext behind";
}

// RFC 7693 Appendix A: BLAKE2b-512("abc"), unkeyed.
TEST_P(CryptoBackend, Blake2bMatchesRfc7693AppendixA) {
    EXPECT_EQ(hash(b(), 64, bytes_of("abc")),
              from_hex("ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                       "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"));
}

// The BLAKE2 reference KAT, keyed (github.com/BLAKE2/BLAKE2, testvectors/blake2b-kat.txt and
// blake2b-test.txt, the first two entries): key 00..3f, input empty and 00, 64-byte output.
TEST_P(CryptoBackend, Blake2bMatchesTheReferenceKeyedKat) {
    const auto key = rising(0, 64);
    EXPECT_EQ(hash(b(), 64, {}, key),
              from_hex("10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
                       "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"));
    EXPECT_EQ(hash(b(), 64, from_hex("00"), key),
              from_hex("961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4"
                       "187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"));
}

TEST_P(CryptoBackend, ConstantTimeEqualityComparesSizeAndEveryByte) {
    const auto a = rising(1, 16);
    auto c = a;
    EXPECT_TRUE(b().equal_constant_time(a, c));
    EXPECT_TRUE(b().equal_constant_time({}, {}));
    c[15] ^= 0x80;
    EXPECT_FALSE(b().equal_constant_time(a, c));
    EXPECT_FALSE(b().equal_constant_time(a, crypto::Bytes(a).first(15)));
}

// ---- The two backends against each other: a gcrypt client and a sodium server ----

TEST(CryptoWire, EachBackendOpensWhatTheOtherSealedAndRefusesATamperedByte) {
    KS_NEED_BOTH_BACKENDS(s, g);
    std::mt19937 rng(8439);
    for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(16), size_t(64), size_t(255), size_t(1200)}) {
        SCOPED_TRACE("plaintext of " + std::to_string(n) + " bytes");
        const auto key = random_vector(rng, 32), nonce = random_vector(rng, 12), ad = random_vector(rng, n % 17);
        const auto plain = random_vector(rng, n);
        const auto by_sodium = seal_ietf(*s, plain, ad, nonce, key);
        const auto by_gcrypt = seal_ietf(*g, plain, ad, nonce, key);
        EXPECT_EQ(by_sodium, by_gcrypt);
        std::vector<uint8_t> opened;
        ASSERT_TRUE(open_ietf(*g, by_sodium, ad, nonce, key, opened));
        EXPECT_EQ(opened, plain);
        ASSERT_TRUE(open_ietf(*s, by_gcrypt, ad, nonce, key, opened));
        EXPECT_EQ(opened, plain);
        auto tampered = by_sodium;
        tampered[rng() % tampered.size()] ^= uint8_t(1 + rng() % 255);
        EXPECT_FALSE(open_ietf(*s, tampered, ad, nonce, key, opened));
        EXPECT_FALSE(open_ietf(*g, tampered, ad, nonce, key, opened));
    }
}

// BLAKE2b's output length is in its parameter block, so each length is its own function: at
// every length libgcrypt has (20, 32, 48, 64), keyed (gcry_md_setkey) or not, it gives what
// libsodium's crypto_generichash gives. (16, the handshake proof's, it has not: CryptoGcrypt.)
TEST(CryptoWire, KeyedHashesAreTheSameOnBothBackends) {
    KS_NEED_BOTH_BACKENDS(s, g);
    std::mt19937 rng(7693);
    for (int i = 0; i < 64; ++i) {
        const auto msg = random_vector(rng, rng() % 300), key = random_vector(rng, size_t(i % 3 == 0 ? 0 : 16 + i % 49));
        for (size_t out : {size_t(20), size_t(32), size_t(48), size_t(64)})
            EXPECT_EQ(hash(*s, out, msg, key), hash(*g, out, msg, key)) << out << " bytes, key of " << key.size();
    }
}

// A sealed datagram as the docs lay it out (prefix, counter, ciphertext, tag; AD = prefix and
// counter, protocol id, version; nonce = counter) opens on each backend, so either side may be
// built with either.
TEST(CryptoWire, PacketSealerOutputOpensOnEachBackendFromTheDocumentedLayout) {
    net::Key key{};
    key.fill(0x5A);
    net::PacketSealer sealer(key);
    net::PacketOpener opener(key);
    for (uint64_t c = 0; c < 300; ++c) {
        const auto inner = rising(uint8_t(c), size_t(c % 40));
        const auto sealed = sealer.seal(inner);
        std::vector<uint8_t> got;
        ASSERT_EQ(opener.open(sealed, got), net::PacketOpener::Result::Ok);
        EXPECT_EQ(got, inner);
        const size_t n = size_t(sealed[0] & 7) + 1;
        std::vector<uint8_t> ad(sealed.begin(), sealed.begin() + long(1 + n));
        for (int i = 0; i < 4; ++i) ad.push_back(uint8_t(net::kProtocolId >> (8 * i)));
        ad.push_back(uint8_t(net::kProtocolVersion));
        ad.push_back(uint8_t(net::kProtocolVersion >> 8));
        std::vector<uint8_t> nonce(12, 0);
        for (int i = 0; i < 8; ++i) nonce[size_t(i)] = uint8_t(c >> (8 * i));
        for (const char* name : {"sodium", "gcrypt"}) {
            const Backend* b = backend_named(name);
            if (!b) continue;
            ASSERT_TRUE(open_ietf(*b, crypto::Bytes(sealed).subspan(1 + n), ad, nonce, key, got)) << name << " counter " << c;
            EXPECT_EQ(got, inner);
        }
    }
}

// ---- The gcrypt backend says what it lacks ----

// What a server or token issuer needs, and libgcrypt 1.10 lacks: XChaCha20-Poly1305, SipHash and
// 16-byte BLAKE2b (no GCRY_MD_BLAKE2B_128).
TEST(CryptoGcrypt, XChaChaSipHashAndBlake2b128RefuseNamingTheBackend) {
    const Backend* g = backend_named("gcrypt");
    if (!g) GTEST_SKIP() << "the gcrypt crypto backend is not in this build";
    std::array<uint8_t, 32> key{};
    std::array<uint8_t, 24> nonce{};
    std::array<uint8_t, 16> out{}, sip_key{};
    std::array<uint8_t, 8> sip{};
    const auto message_of = [](auto&& f) {
        try {
            f();
        } catch (const crypto::Unsupported& e) {
            return std::string(e.what());
        }
        return std::string("no exception");
    };
    EXPECT_EQ(message_of([&] { g->aead_x_seal(out.data(), {}, {}, nonce, key); }),
              "crypto backend 'gcrypt': XChaCha20-Poly1305 is not in the libgcrypt build (client-only)");
    EXPECT_EQ(message_of([&] { (void)g->aead_x_open(out.data(), out, {}, nonce, key); }),
              "crypto backend 'gcrypt': XChaCha20-Poly1305 is not in the libgcrypt build (client-only)");
    EXPECT_EQ(message_of([&] { g->short_hash(sip, out, sip_key); }),
              "crypto backend 'gcrypt': SipHash-2-4 is not in the libgcrypt build (client-only)");
    std::vector<uint8_t> proof(16);
    EXPECT_EQ(message_of([&] { g->keyed_hash(proof, {}, sip_key); }),
              "crypto backend 'gcrypt': BLAKE2b with 16 output bytes is not in libgcrypt (it has 20, 32, 48 and 64)");
}

// ---- The operating system's random source ----

TEST(CryptoRandom, TwoDrawsDifferAndALargeDrawIsNotAllZero) {
    std::array<uint8_t, 32> a{}, b{};
    platform::random_bytes(a);
    platform::random_bytes(b);
    EXPECT_NE(a, b);
    std::vector<uint8_t> big(1 << 20);
    platform::random_bytes(big);
    EXPECT_FALSE(std::all_of(big.begin(), big.end(), [](uint8_t v) { return v == 0; }));
    EXPECT_NE(net::random_key(), net::random_key());
    platform::random_bytes({});  // nothing asked, nothing done
}

TEST(CryptoDefault, IsTheBackendTheBuildChose) {
    const Backend& d = crypto::backend();
    EXPECT_EQ(crypto::find_backend(d.name), &d);
#if defined(KS_TEST_CRYPTO_DEFAULT)
    EXPECT_STREQ(d.name, KS_TEST_CRYPTO_DEFAULT);
#endif
}
