#pragma once
// Authenticated encryption of a session's packets (common/src/crypto/crypto.h), once a connect token has been
// accepted. A sealed datagram is
//
//   prefix (1 byte: 0xA0 | (n - 1))  counter (n = 1..8 bytes, little-endian)  ciphertext  tag (16)
//
// where the counter counts the sender's datagrams on this session from 0 (each direction has its
// own key, so the 96-bit ChaCha20-Poly1305-IETF nonce is just the counter: it never repeats under
// one key). The associated data is the prefix and counter bytes with the protocol id and
// version, so neither can be altered. The inner bytes are an ordinary datagram (a FlatBuffers
// Packet or a raw snapshot) of at most kMaxDatagram - kMaxSealOverhead bytes.
//
// The receiver opens with the peer's key and then checks the counter against a replay window
// (the newest counter seen and the 256 before it): a duplicate or older datagram is refused, so a
// recorded packet cannot be played again.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <kinesync/common/net/key.h>
#include <kinesync/common/net/tokens.h>
#include <vector>

namespace ks::net {

constexpr size_t kSealTagBytes = 16;
constexpr size_t kMaxSealOverhead = 1 + 8 + kSealTagBytes;  // prefix, counter, tag
constexpr uint8_t kSealPrefixBase = 0xA0;

// Initialises the crypto backend once (thread-safe); throws std::runtime_error when it cannot.
void ensure_crypto();
// Fills `out` from the operating system's secure random source.
void random_bytes(std::span<uint8_t> out);

// True when the bytes can be a sealed datagram (prefix byte and length); says nothing of the key.
bool looks_sealed(std::span<const uint8_t> bytes);

class ReplayWindow {
public:
    static constexpr uint64_t kSize = 256;
    // True when `counter` is new: above the window's floor and not seen.
    bool fresh(uint64_t counter) const;
    // Records `counter` (call only after the datagram authenticated).
    void accept(uint64_t counter);

private:
    uint64_t newest_ = 0;
    bool any_ = false;
    std::array<uint64_t, kSize / 64> seen_{};  // bit (c % kSize) for counters newest - 255 .. newest
};

// Seals this side's datagrams.
class PacketSealer {
public:
    explicit PacketSealer(const Key& key) : key_(key) {}
    std::vector<uint8_t> seal(std::span<const uint8_t> inner);
    uint64_t sent() const { return counter_; }

private:
    Key key_;
    uint64_t counter_ = 0;
};

// Opens the peer's datagrams.
class PacketOpener {
public:
    enum class Result { Ok, NotSealed, Forged, Replayed };
    explicit PacketOpener(const Key& key) : key_(key) {}
    // On Ok, `inner` holds the datagram inside.
    Result open(std::span<const uint8_t> bytes, std::vector<uint8_t>& inner);

private:
    Key key_;
    ReplayWindow window_;
};

const char* seal_result_name(PacketOpener::Result r);

// XChaCha20-Poly1305 with a random 24-byte nonce (written first): for messages sent without a
// session counter (the Challenge's cookie, connect tokens). Returns nonce + ciphertext + tag.
// The libgcrypt build has no XChaCha20: there both throw crypto::Unsupported.
std::vector<uint8_t> seal_random_nonce(const Key& key, std::span<const uint8_t> plain, std::span<const uint8_t> ad);
// Opens what seal_random_nonce made; false when it does not authenticate.
bool open_random_nonce(const Key& key, std::span<const uint8_t> sealed, std::span<const uint8_t> ad,
                       std::vector<uint8_t>& plain);
constexpr size_t kRandomNonceBytes = 24;

// The ChallengeResponse's proof that its sender holds the token's keys: a keyed hash (BLAKE2b-256,
// its first 16 bytes) under the client-to-server key of the Challenge's cookie, the handshake's salt
// and the skeleton hashes the response offers (ChallengeResponse.known_skeletons, as sent).
std::array<uint8_t, 16> handshake_proof(const Key& client_to_server, std::span<const uint8_t> cookie, uint64_t salt,
                                        std::span<const uint8_t> known_skeletons = {});
// The proof matches (compared in constant time).
bool check_handshake_proof(const Key& client_to_server, std::span<const uint8_t> cookie, uint64_t salt,
                           std::span<const uint8_t> proof, std::span<const uint8_t> known_skeletons = {});

// The Challenge's proof that its sender opened the client's token: the same hash under the
// server-to-client key, of the salt, the cookie and the address the server saw the request come
// from (Challenge.observed, empty when not said), in another context. Without the token's keys no
// one can make a Challenge the client accepts, nor change the address a genuine one names.
std::array<uint8_t, 16> challenge_mac(const Key& server_to_client, uint64_t salt, std::span<const uint8_t> cookie,
                                      std::span<const uint8_t> observed = {});
bool check_challenge_mac(const Key& server_to_client, uint64_t salt, std::span<const uint8_t> cookie,
                         std::span<const uint8_t> mac, std::span<const uint8_t> observed = {});

}  // namespace ks::net
