#pragma once
// Who may start a handshake, and how often (kinesync/server/admission_config.h): token buckets
// for everyone, and per address and network prefix once a peer has proven it receives at its
// address (the cookie round trip), and the table of connect tokens already used. The per-address
// and per-prefix buckets live in fixed arrays indexed by a keyed hash.

#include <array>
#include <asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include <kinesync/server/admission_config.h>
#include <kinesync/server/server_stats.h>

namespace ks::net {

// Refills at `rate` per second up to `burst`; starts full.
struct RateBucket {
    double tokens = 0, last_s = -1;
    bool take(double now_s, double rate, double burst);  // true, and one token spent, when one is there
};

// A fixed number of buckets indexed by a keyed hash (SipHash-2-4, random key) of an address or
// prefix: memory does not grow with the number of peers, and without the key no one can aim at
// another's bucket. Peers that share a slot share its rate.
class BucketSketch {
public:
    explicit BucketSketch(size_t slots);
    bool take(std::span<const uint8_t> key, double now_s, double rate, double burst);

private:
    std::array<uint8_t, 16> hash_key_{};
    std::vector<RateBucket> slots_;
};

// The address as 16 bytes (IPv4 as IPv4-mapped IPv6), and its prefix: the /24 of an IPv4 address,
// the /64 of an IPv6 one, tagged so the two families never share a value.
std::array<uint8_t, 16> address_bytes(const asio::ip::address& a);
std::array<uint8_t, 9> prefix_bytes(const asio::ip::address& a);
bool same_prefix(const asio::ip::address& a, const asio::ip::address& b);

using TokenTag = std::array<uint8_t, 16>;

class Admission {
public:
    // Throws ks::Error (InvalidConfig) naming the field of a nonsense configuration.
    Admission(const AdmissionConfig& cfg, int max_clients, bool limit_loopback);

    // Stage one, a ConnectRequest (or anything else answered before a cookie came back): nullopt
    // when it may be answered, else the limit it hit. One budget for everyone.
    std::optional<AdmissionLimit> challenge(double now_s);
    // Stage two, a ChallengeResponse whose cookie (and proof) checked out: may the token's handshake
    // go on (before anything that replies or counts sessions), and may its address's?
    std::optional<AdmissionLimit> token_handshake(const TokenTag& tag, double now_s);
    std::optional<AdmissionLimit> handshake(const asio::ip::address& from, double now_s);
    // May a session open now (everyone together)?
    std::optional<AdmissionLimit> open_session(double now_s);
    // Sessions one prefix may hold (max_sessions_per_prefix resolved; loopback unlimited unless limited).
    int sessions_per_prefix(const asio::ip::address& from) const;

    enum class TokenUse { Fresh, Used, TableFull };
    TokenUse token_use(const TokenTag& tag) const;
    void remember_token(const TokenTag& tag, uint64_t expire_s);  // only after token_use said Fresh
    void forget_expired_tokens(uint64_t unix_now_s);
    size_t token_capacity() const { return token_capacity_; }
    size_t tokens_remembered() const { return used_tokens_.size(); }
    uint32_t max_token_lifetime_s() const { return cfg_.max_token_lifetime_s; }

private:
    bool exempt(const asio::ip::address& a) const { return a.is_loopback() && !limit_loopback_; }

    AdmissionConfig cfg_;
    bool limit_loopback_;
    double session_open_burst_;
    size_t token_capacity_;
    BucketSketch handshake_token_{16384}, handshake_address_{16384}, handshake_prefix_{4096};
    RateBucket challenges_, sessions_;
    std::map<TokenTag, uint64_t> used_tokens_;  // tag -> expiry (unix s)
    int max_clients_;
};

}  // namespace ks::net
