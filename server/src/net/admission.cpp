#include "server/src/net/admission.h"

#include <algorithm>
#include <cmath>

#include "common/src/crypto/crypto.h"
#include "common/src/net/secure_channel.h"
#include "common/src/util/refusal_text.h"

namespace ks::net {

const char* admission_limit_name(size_t limit) {
    static const char* const names[kAdmissionLimits] = {"challenge_all", "handshake_token", "handshake_address", "handshake_prefix",
                                                         "session_open"};
    return limit < kAdmissionLimits ? names[limit] : "?";
}

bool RateBucket::take(double now_s, double rate, double burst) {
    tokens = last_s < 0 ? burst : std::min(burst, tokens + std::max(0.0, now_s - last_s) * rate);
    last_s = now_s;
    if (tokens < 1.0) return false;
    tokens -= 1.0;
    return true;
}

BucketSketch::BucketSketch(size_t slots) : slots_(slots) {
    static_assert(sizeof hash_key_ == crypto::kShortHashKeyBytes);
    ensure_crypto();
    random_bytes(hash_key_);
}

bool BucketSketch::take(std::span<const uint8_t> key, double now_s, double rate, double burst) {
    uint8_t h[crypto::kShortHashBytes];
    crypto::short_hash(h, key, hash_key_);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(h[i]) << (8 * i);
    return slots_[v % slots_.size()].take(now_s, rate, burst);
}

std::array<uint8_t, 16> address_bytes(const asio::ip::address& a) {
    if (a.is_v4()) return asio::ip::make_address_v6(asio::ip::v4_mapped, a.to_v4()).to_bytes();
    return a.to_v6().to_bytes();
}

std::array<uint8_t, 9> prefix_bytes(const asio::ip::address& a) {
    const std::array<uint8_t, 16> b = address_bytes(a);
    const bool v4 = a.is_v4() || a.to_v6().is_v4_mapped();
    std::array<uint8_t, 9> p{};
    p[0] = v4 ? 4 : 6;
    if (v4) std::copy(b.begin() + 12, b.begin() + 15, p.begin() + 1);  // the /24
    else std::copy(b.begin(), b.begin() + 8, p.begin() + 1);            // the /64
    return p;
}

bool same_prefix(const asio::ip::address& a, const asio::ip::address& b) { return prefix_bytes(a) == prefix_bytes(b); }

namespace {

void check_rate(double rate, double burst, const char* rate_field, const char* burst_field) {
    detail::check_config_field(rate > 0 && std::isfinite(rate), "Admission", rate_field, rate, "finite and > 0");
    detail::check_config_field(burst >= 1 && std::isfinite(burst), "Admission", burst_field, burst, "finite and at least 1");
}

}  // namespace

Admission::Admission(const AdmissionConfig& cfg, int max_clients, bool limit_loopback)
    : cfg_(cfg), limit_loopback_(limit_loopback), max_clients_(max_clients) {
    check_rate(cfg.challenge_rate, cfg.challenge_burst, "admission.challenge_rate", "admission.challenge_burst");
    check_rate(cfg.token_handshake_rate, cfg.token_handshake_burst, "admission.token_handshake_rate", "admission.token_handshake_burst");
    check_rate(cfg.handshake_rate, cfg.handshake_burst, "admission.handshake_rate", "admission.handshake_burst");
    check_rate(cfg.prefix_handshake_rate, cfg.prefix_handshake_burst, "admission.prefix_handshake_rate", "admission.prefix_handshake_burst");
    session_open_burst_ = cfg.session_open_burst < 0 ? std::max(64.0, double(max_clients)) : cfg.session_open_burst;
    check_rate(cfg.session_open_rate, session_open_burst_, "admission.session_open_rate", "admission.session_open_burst");
    detail::check_config_field(cfg.max_sessions_per_prefix == -1 || cfg.max_sessions_per_prefix >= 1, "Admission",
                               "admission.max_sessions_per_prefix", cfg.max_sessions_per_prefix, "-1 (automatic) or at least 1");
    detail::check_config_field(cfg.max_token_lifetime_s >= 1 && cfg.max_token_lifetime_s <= 86400, "Admission",
                               "admission.max_token_lifetime_s", cfg.max_token_lifetime_s, "1..86400 seconds");
    // Every remembered token was admitted within its lifetime, at most burst + rate x lifetime of them.
    token_capacity_ = size_t(std::ceil(session_open_burst_ + cfg.session_open_rate * cfg.max_token_lifetime_s));
    detail::check_config_field(token_capacity_ <= (size_t(1) << 24), "Admission", "admission.session_open_rate",
                               cfg.session_open_rate, "with max_token_lifetime_s, at most 16M tokens to remember");
}

std::optional<AdmissionLimit> Admission::challenge(double now_s) {
    if (!challenges_.take(now_s, cfg_.challenge_rate, cfg_.challenge_burst)) return AdmissionLimit::ChallengeAll;
    return std::nullopt;
}

std::optional<AdmissionLimit> Admission::token_handshake(const TokenTag& tag, double now_s) {
    if (!handshake_token_.take(tag, now_s, cfg_.token_handshake_rate, cfg_.token_handshake_burst)) return AdmissionLimit::HandshakeToken;
    return std::nullopt;
}

std::optional<AdmissionLimit> Admission::handshake(const asio::ip::address& from, double now_s) {
    if (!exempt(from)) {
        if (!handshake_address_.take(address_bytes(from), now_s, cfg_.handshake_rate, cfg_.handshake_burst))
            return AdmissionLimit::HandshakeAddress;
        if (!handshake_prefix_.take(prefix_bytes(from), now_s, cfg_.prefix_handshake_rate, cfg_.prefix_handshake_burst))
            return AdmissionLimit::HandshakePrefix;
    }
    return std::nullopt;
}

std::optional<AdmissionLimit> Admission::open_session(double now_s) {
    if (!sessions_.take(now_s, cfg_.session_open_rate, session_open_burst_)) return AdmissionLimit::SessionOpen;
    return std::nullopt;
}

int Admission::sessions_per_prefix(const asio::ip::address& from) const {
    if (exempt(from)) return max_clients_;
    return cfg_.max_sessions_per_prefix >= 1 ? cfg_.max_sessions_per_prefix : std::max(8, max_clients_ / 2);
}

Admission::TokenUse Admission::token_use(const TokenTag& tag) const {
    if (used_tokens_.count(tag)) return TokenUse::Used;
    return used_tokens_.size() >= token_capacity_ ? TokenUse::TableFull : TokenUse::Fresh;
}

void Admission::remember_token(const TokenTag& tag, uint64_t expire_s) { used_tokens_[tag] = expire_s; }

void Admission::forget_expired_tokens(uint64_t unix_now_s) {
    std::erase_if(used_tokens_, [&](const auto& kv) { return kv.second < unix_now_s; });
}

}  // namespace ks::net
