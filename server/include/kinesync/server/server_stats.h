#pragma once
// What a StreamServer reports and how its snapshots favour a client's nearby characters.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ks {

// Relevance: how much a client cares about each character, from the distances to the client's
// viewpoint (what the snapshot builder's priorities follow).
struct RelevanceConfig {
    int near_count = 8;          // characters treated as if alone with the client
    float near_priority = 1e4f;  // ahead of any far one's accumulated priority
    float far_scale = 0.25f;     // priority of a far character at the near group's edge (or reference_m)
    float reference_m = 10.0f;   // the edge is taken at least this far (a near group at the viewer's feet)
    float min_priority = 0.005f;
    // Level of detail for the characters outside the near group: joints deeper than this are not
    // sent (the client keeps their last values); -1 sends every joint.
    int far_hold_depth = 1;
};

namespace net {

constexpr size_t kDecodeErrorKinds = 18;  // the reasons a datagram fails to decode (DecodeError)

constexpr size_t kUnsentReasons = 4;
const char* unsent_reason_name(size_t reason);  // "budget", "too_large", "no_precision", "starved"

// The admission limit a handshake datagram hit (kinesync/server/admission_config.h).
enum class AdmissionLimit : uint8_t {
    ChallengeAll,      // ConnectRequests answered (each opens a token), everyone together
    HandshakeToken,    // ChallengeResponses (cookie and proof good) for one token
    HandshakeAddress,  // ChallengeResponses (cookie and proof good) from one address
    HandshakePrefix,   // ChallengeResponses (cookie and proof good) from one prefix
    SessionOpen,       // sessions opened, everyone together
};
constexpr size_t kAdmissionLimits = 5;
// "challenge_all", "handshake_token", "handshake_address", "handshake_prefix", "session_open".
const char* admission_limit_name(size_t limit);

struct ServerStats {
    uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0;
    uint64_t send_failures = 0;  // the socket refused a datagram (buffer full): dropped
    uint64_t malformed = 0;      // failed decode_packet
    std::array<uint64_t, kDecodeErrorKinds> malformed_by_reason{};  // by DecodeError
    uint64_t unexpected = 0;  // well formed but not acceptable from that peer in its state
    uint64_t refused = 0;     // bad cookies, server full, too many from one address
    uint64_t tokens_refused = 0;   // connect tokens missing, expired, for another server, forged or used
    uint64_t unauthenticated = 0;  // with tokens: clear datagrams other than the handshake, sealed ones for no session
    uint64_t forged = 0;           // sealed datagrams that do not authenticate under the session key
    uint64_t replayed = 0;         // sealed datagrams seen before (or older than the replay window)
    uint64_t rate_limited = 0;     // over a session's datagram rate
    // Handshake datagrams dropped at an admission limit, by AdmissionLimit.
    std::array<uint64_t, kAdmissionLimits> admission_limited{};
    uint64_t tokens_opened = 0;      // connect tokens decrypted (only for ChallengeResponses with a good cookie)
    uint64_t used_tokens_full = 0;   // good tokens refused because the table of used tokens was full (logged once)
    uint64_t connects = 0, disconnects = 0, timeouts = 0;
    uint64_t stalled = 0;     // dropped for not acknowledging reliable messages
    uint64_t resyncs = 0;     // full updates of one character (or part) a client asked for
    // Skeletons sent to clients by reference (the client held them: ChallengeResponse.known_skeletons)
    // and in full.
    uint64_t skeletons_by_reference = 0, skeletons_in_full = 0;
    uint64_t echoes_refused = 0;  // Ping echoes giving no round trip (negative or over 10 s): forged or stale
    uint64_t sessions_in_use = 0;  // handshakes refused: a live session holds that address or player
    // Snapshot entries (a character, or a part of a large one) not sent, summed over clients, by
    // reason: [0] budget (left for a later snapshot), [1] too large for a datagram even alone,
    // [2] no precision plan (skeleton unknown or of another joint count), [3] starved (a part not
    // sent for over two seconds; counted once each time). Reasons 1-3 are logged once per character.
    std::array<uint64_t, kUnsentReasons> unsent_by_reason{};
    // Entries not needed, summed over clients: every joint at rest as acknowledged, or what the
    // client holds predicts them (a look-ahead curve through the entries it has); and look-ahead
    // entries sent after their tick in place of a newer one (docs/NETWORK.md, "What the budget buys").
    uint64_t entries_at_rest = 0, entries_held = 0, entries_late = 0;
    // Each client's rate follows its path (docs/NETWORK.md, "The rate follows the link"): times it
    // was lowered for queueing delay or for loss, fell because the path went silent, and came back
    // after a silence; summed over clients.
    uint64_t rate_lowered_delay = 0, rate_lowered_loss = 0, rate_silences = 0, rate_recovered = 0;
    uint64_t ticks = 0;
};

// One client's figures. Bytes are wire bytes, as the bandwidth budget counts them: each
// datagram's UDP payload plus 28 bytes of IPv4 and UDP headers.
struct ClientReport {
    uint32_t id;
    std::string endpoint;
    double bytes_per_s;  // over the last whole second or more
    // The round trip as the client measures its own: a Pong's departure to the Ping echoing it
    // (kernel receive times), less the time the client held the Pong (0 until the first echo).
    double rtt_ms;
    uint64_t snapshots_sent;
    uint64_t bytes_sent;  // since the session began
    // The rate the server sends it at now (wire bits per second, between the floor and the budget),
    // and the last change's cause: "none", "delay", "loss", "silence", "recovered" or "increase".
    double rate_bps = 0;
    std::string rate_change = "none";
    double queue_delay_ms = 0;  // the queueing delay its rate control measures on the path
};

}  // namespace net
}  // namespace ks
