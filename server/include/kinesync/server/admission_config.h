#pragma once
// How a server admits newcomers (schema/PROTOCOL.md, "Admission"). A handshake has two stages:
// the ConnectRequest, answered by a stateless cookie without opening any token, and the
// ChallengeResponse, whose cookie proves that its sender receives at its address. Limits apply per
// address and per network prefix (IPv4 /24, IPv6 /64), and every rate is a token bucket (a rate
// per second and a burst). Loopback peers are exempt from the per-address and per-prefix limits
// unless StreamServerConfig::limit_loopback.

#include <cstdint>

namespace ks {

struct AdmissionConfig {
    // ConnectRequests answered per second per prefix (before any proof: counted in fixed memory,
    // never per address) and by all peers together.
    double prefix_challenge_rate = 50, prefix_challenge_burst = 100;
    double challenge_rate = 20000, challenge_burst = 2000;
    // ChallengeResponses with a good cookie (the sender receives at its address) taken further
    // per second, per address and per prefix; then tokens opened per second by all together.
    double handshake_rate = 10, handshake_burst = 20;
    double prefix_handshake_rate = 40, prefix_handshake_burst = 80;
    double open_rate = 2000, open_burst = 500;
    // Sessions one prefix may hold; -1: half of max_clients (at least 8). (Per address:
    // StreamServerConfig::max_sessions_per_address.)
    int max_sessions_per_prefix = -1;
    // Sessions opened per second by all peers together (loopback included); -1 burst: the larger
    // of 64 and max_clients.
    double session_open_rate = 20, session_open_burst = -1;
    // A token whose expiry lies further ahead than this is refused. With session_open_rate it sizes
    // the table of used tokens: burst + rate x lifetime entries, each kept until its token expires.
    uint32_t max_token_lifetime_s = 3600;
};

}  // namespace ks
