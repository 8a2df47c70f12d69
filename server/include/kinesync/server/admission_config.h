#pragma once
// How a server admits newcomers (schema/PROTOCOL.md, "Admission"). A handshake has two stages:
// the ConnectRequest, answered statelessly (the token opened, a sealed cookie and an authenticated
// Challenge sent back) from one budget shared by everyone, since its sender has proven nothing
// and may be spoofing any address; and the ChallengeResponse, whose cookie proves that its sender
// receives at its address, and only from then on limits apply per token and then, for a handshake
// that would open a session, per address and per network prefix (IPv4 /24, IPv6 /64). Every rate is a token bucket (a rate per second and a burst). Loopback
// peers are exempt from the per-address and per-prefix limits unless
// StreamServerConfig::limit_loopback.

#include <cstdint>

namespace ks {

struct AdmissionConfig {
    // ConnectRequests answered per second by all peers together. An answer opens a token: 2.4 us of
    // CPU on the reference machine, so 20,000/s is 5 % of a core (kinesync-bench
    // BM_AnsweredConnectRequest). A flood from anywhere lowers every sender's odds evenly: nothing
    // before the cookie is kept or limited per address or prefix, which a spoofer could spend.
    double challenge_rate = 20000, challenge_burst = 2000;
    // ChallengeResponses with a good cookie (the sender receives at its address) and, with tokens, a
    // good proof, taken further per second: per token (so a token whose session is refused cannot
    // spend the others' limits), then per address and per prefix.
    double token_handshake_rate = 2, token_handshake_burst = 5;
    double handshake_rate = 10, handshake_burst = 20;
    double prefix_handshake_rate = 40, prefix_handshake_burst = 80;
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
