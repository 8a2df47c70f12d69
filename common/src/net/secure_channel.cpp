#include "common/src/net/secure_channel.h"

#include <cstring>
#include <stdexcept>

#include "common/src/crypto/crypto.h"
#include "common/src/net/protocol.h"
#include "common/src/platform/random.h"

namespace ks::net {

namespace {

// Associated data of a sealed datagram: its prefix and counter bytes, the protocol id, version.
size_t sealed_ad(const uint8_t* head, size_t head_len, uint8_t* ad) {
    std::copy(head, head + head_len, ad);
    for (int i = 0; i < 4; ++i) ad[head_len + size_t(i)] = uint8_t(kProtocolId >> (8 * i));
    ad[head_len + 4] = uint8_t(kProtocolVersion);
    ad[head_len + 5] = uint8_t(kProtocolVersion >> 8);
    return head_len + 6;
}

std::array<uint8_t, crypto::kIetfNonceBytes> counter_nonce(uint64_t counter) {
    std::array<uint8_t, crypto::kIetfNonceBytes> nonce{};
    for (int i = 0; i < 8; ++i) nonce[size_t(i)] = uint8_t(counter >> (8 * i));
    return nonce;
}

}  // namespace

static_assert(kSealTagBytes == crypto::kTagBytes && kRandomNonceBytes == crypto::kXNonceBytes);

void ensure_crypto() { crypto::init(); }

void random_bytes(std::span<uint8_t> out) { platform::random_bytes(out); }

Key random_key() {
    Key k;
    random_bytes(k);
    return k;
}

bool looks_sealed(std::span<const uint8_t> bytes) {
    if (bytes.empty() || (bytes[0] & 0xF8) != kSealPrefixBase) return false;
    const size_t n = size_t(bytes[0] & 7) + 1;
    return bytes.size() >= 1 + n + kSealTagBytes && bytes.size() <= kMaxDatagram;
}

bool ReplayWindow::fresh(uint64_t counter) const {
    if (!any_ || counter > newest_) return true;
    if (newest_ - counter >= kSize) return false;
    return !(seen_[(counter % kSize) / 64] >> (counter % 64) & 1);
}

void ReplayWindow::accept(uint64_t counter) {
    if (!any_ || counter > newest_) {
        // Slide: clear the bits of counters that fall between the old newest and the new one.
        const uint64_t from = any_ ? newest_ + 1 : counter;
        if (!any_ || counter - newest_ >= kSize) seen_.fill(0);
        else
            for (uint64_t c = from; c <= counter; ++c) seen_[(c % kSize) / 64] &= ~(uint64_t(1) << (c % 64));
        newest_ = counter;
        any_ = true;
    }
    seen_[(counter % kSize) / 64] |= uint64_t(1) << (counter % 64);
}

std::vector<uint8_t> PacketSealer::seal(std::span<const uint8_t> inner) {
    ensure_crypto();
    if (inner.size() + kMaxSealOverhead > kMaxDatagram)
        throw std::invalid_argument("sealed datagram would exceed " + std::to_string(kMaxDatagram) + " bytes");
    const uint64_t c = counter_++;
    size_t n = 1;
    while (n < 8 && (c >> (8 * n)) != 0) ++n;
    std::vector<uint8_t> out(1 + n + inner.size() + kSealTagBytes);
    out[0] = uint8_t(kSealPrefixBase | (n - 1));
    for (size_t i = 0; i < n; ++i) out[1 + i] = uint8_t(c >> (8 * i));
    uint8_t ad[16];
    const size_t ad_len = sealed_ad(out.data(), 1 + n, ad);
    crypto::aead_ietf_seal(out.data() + 1 + n, inner, {ad, ad_len}, counter_nonce(c), key_);
    return out;
}

PacketOpener::Result PacketOpener::open(std::span<const uint8_t> bytes, std::vector<uint8_t>& inner) {
    ensure_crypto();
    if (!looks_sealed(bytes)) return Result::NotSealed;
    const size_t n = size_t(bytes[0] & 7) + 1;
    uint64_t c = 0;
    for (size_t i = 0; i < n; ++i) c |= uint64_t(bytes[1 + i]) << (8 * i);
    // Cheap refusal of a replay before spending a decryption on it.
    if (!window_.fresh(c)) return Result::Replayed;
    uint8_t ad[16];
    const size_t ad_len = sealed_ad(bytes.data(), 1 + n, ad);
    inner.resize(bytes.size() - 1 - n - kSealTagBytes);
    if (!crypto::aead_ietf_open(inner.data(), bytes.subspan(1 + n), {ad, ad_len}, counter_nonce(c), key_)) {
        inner.clear();
        return Result::Forged;
    }
    window_.accept(c);
    return Result::Ok;
}

const char* seal_result_name(PacketOpener::Result r) {
    switch (r) {
        case PacketOpener::Result::Ok: return "ok";
        case PacketOpener::Result::NotSealed: return "not sealed";
        case PacketOpener::Result::Forged: return "forged";
        case PacketOpener::Result::Replayed: return "replayed";
    }
    return "?";
}

std::vector<uint8_t> seal_random_nonce(const Key& key, std::span<const uint8_t> plain, std::span<const uint8_t> ad) {
    ensure_crypto();
    std::vector<uint8_t> out(kRandomNonceBytes + plain.size() + kSealTagBytes);
    const std::span<uint8_t, kRandomNonceBytes> nonce(out.data(), kRandomNonceBytes);
    platform::random_bytes(nonce);
    crypto::aead_x_seal(out.data() + kRandomNonceBytes, plain, ad, nonce, key);
    return out;
}

bool open_random_nonce(const Key& key, std::span<const uint8_t> sealed, std::span<const uint8_t> ad, std::vector<uint8_t>& plain) {
    ensure_crypto();
    if (sealed.size() < kRandomNonceBytes + kSealTagBytes) return false;
    plain.resize(sealed.size() - kRandomNonceBytes - kSealTagBytes);
    if (!crypto::aead_x_open(plain.data(), sealed.subspan(kRandomNonceBytes), ad, sealed.first<kRandomNonceBytes>(), key)) {
        plain.clear();
        return false;
    }
    return true;
}

namespace {
// BLAKE2b-256 cut to 16 bytes, keyed, of context || cookie || salt || tail: libgcrypt (the Windows build)
// has no 16-byte BLAKE2b, whose output length is part of the hash, so both backends compute the
// 32-byte one.
std::array<uint8_t, 16> handshake_hash(const char* context, const Key& key, std::span<const uint8_t> cookie, uint64_t salt,
                                       std::span<const uint8_t> tail = {}) {
    ensure_crypto();
    std::vector<uint8_t> msg(context, context + std::strlen(context) + 1);
    msg.insert(msg.end(), cookie.begin(), cookie.end());
    for (int i = 0; i < 8; ++i) msg.push_back(uint8_t(salt >> (8 * i)));
    msg.insert(msg.end(), tail.begin(), tail.end());
    std::array<uint8_t, 32> full{};
    crypto::keyed_hash(full, msg, key);
    std::array<uint8_t, 16> out{};
    std::copy_n(full.begin(), out.size(), out.begin());
    return out;
}
}  // namespace

std::array<uint8_t, 16> handshake_proof(const Key& client_to_server, std::span<const uint8_t> cookie, uint64_t salt,
                                        std::span<const uint8_t> known_skeletons) {
    return handshake_hash("kinesync handshake proof", client_to_server, cookie, salt, known_skeletons);
}

bool check_handshake_proof(const Key& client_to_server, std::span<const uint8_t> cookie, uint64_t salt,
                           std::span<const uint8_t> proof, std::span<const uint8_t> known_skeletons) {
    const std::array<uint8_t, 16> expect = handshake_proof(client_to_server, cookie, salt, known_skeletons);
    return crypto::equal_constant_time(proof, expect);
}

std::array<uint8_t, 16> challenge_mac(const Key& server_to_client, uint64_t salt, std::span<const uint8_t> cookie,
                                      std::span<const uint8_t> observed) {
    return handshake_hash("kinesync challenge", server_to_client, cookie, salt, observed);
}

bool check_challenge_mac(const Key& server_to_client, uint64_t salt, std::span<const uint8_t> cookie,
                         std::span<const uint8_t> mac, std::span<const uint8_t> observed) {
    const std::array<uint8_t, 16> expect = challenge_mac(server_to_client, salt, cookie, observed);
    return crypto::equal_constant_time(mac, expect);
}

}  // namespace ks::net
