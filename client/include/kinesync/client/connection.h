#pragma once
// A client's connection to a kinesync server: its state and its traffic counters.

#include <cstdint>

#include <kinesync/common/net/disconnect_code.h>

namespace ks {

enum class ConnectionState { Idle, Connecting, Challenged, Connected, Disconnected };



struct ClientSessionStats {
    uint64_t datagrams_in = 0, bytes_in = 0, datagrams_out = 0, bytes_out = 0;
    uint64_t malformed = 0, unexpected = 0;
    uint64_t snapshot_errors = 0;  // snapshot datagrams whose framing is unreadable (dropped whole)
    uint64_t forged = 0, replayed = 0, unauthenticated = 0;  // with a token: dropped datagrams
    uint64_t snapshot_datagrams = 0, characters_decoded = 0;  // entries: whole characters or parts
    uint64_t entries_refused = 0;  // snapshot entries refused alone (check, baseline, joint range)
    // Entries of characters whose skeleton this client does not hold (yet): snapshots travel right
    // behind the definitions, so a few are expected while joining or when a definition is lost.
    uint64_t entries_early = 0;
    uint64_t resyncs_sent = 0;     // full updates of a character's part asked for after a refusal
    uint64_t resyncs_held = 0;     // requests held back by the rate limit (20 a second)
    // The server's datagrams lost on the way, from the connection's Accept on: gaps in their
    // sequence numbers, less those that came late (reordered, within the last 256 datagrams).
    uint64_t datagrams_lost = 0, datagrams_late = 0;
    // Snapshot ticks: received (distinct ticks), lost and late. The server skips ticks on purpose
    // (nothing moved, its budget, definitions being resent), so a skipped tick counts as lost only
    // where datagrams are missing between the snapshots either side of it, and no more of them than
    // are missing there (over when a datagram lost there carried something else; under when the
    // stretch between two snapshots is over 256 datagrams long).
    uint64_t snapshots_received = 0;
    uint64_t snapshots_lost = 0;
    uint64_t snapshots_late = 0;  // arrived after a newer one (reordered), not lost
    // The handshake, over every attempt: ConnectRequests sent, Challenges taken (for our salt and,
    // with a token, made with its keys), Challenges refused because their mac did not check
    // (forged: someone who sees the link answered for the server), ChallengeResponses sent.
    // challenges / connect_requests is the share of requests answered. challenges_own: of the
    // Challenges taken, those naming one of this client's own addresses (answered before any other;
    // none behind a NAT, see StreamClient's set-up).
    uint64_t connect_requests = 0, challenges = 0, challenges_forged = 0, challenge_responses = 0;
    uint64_t challenges_own = 0;
    // Skeletons: offered to the server as already held (at most 24 a connection attempt), taken from the
    // client's own store because the server referred to them, and received in full. Skeleton
    // errors: definitions or references refused (a part that contradicts another, a reference to
    // a skeleton this client did not offer); their characters are never shown.
    uint64_t skeletons_offered = 0, skeletons_by_reference = 0, skeletons_in_full = 0, skeleton_errors = 0;
    // Whole poses dropped unshown because the program did not take them (over 4 of a character waiting).
    uint64_t poses_dropped = 0;
    // The rate the server says it sends this client at (wire bits per second, its newest Pong):
    // it follows the path between the server's floor and its budget. 0 until it says.
    double server_rate_bps = 0;
};

}  // namespace ks
