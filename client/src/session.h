#pragma once
// The client side of the protocol without any I/O: feed it datagrams and the time, and it tells
// you what to send. StreamClient (kinesync/client/stream_client.h) drives it over UDP; the offline replay
// drives the same code through the network simulator.
//
// It does the handshake (ConnectRequest padded to a full datagram, resent until a Challenge;
// ChallengeResponse until Accept), assembles the skeleton definitions and character assignments
// (acknowledging each reliable message), decodes snapshots against its own history
// (SnapshotDecoder), acknowledges packets (envelope ack + ack bits, and an Ack message at least
// every `ack_interval_s`), measures the round trip and the server clock with ping/pong, and keeps
// teleport/reset/removal events (a removed character is forgotten). Malformed datagrams are counted
// and dropped. A snapshot entry that does not decode (check failed, baseline missing, skeleton not
// yet known) is refused alone: the others in its datagram are applied, the datagram is
// acknowledged, and a Resync asks the server for a full update of that character's part.
//
// With a connect token (set_connect_token) the handshake presents it, the Challenge's cookie is
// opened with the token's server-to-client key, and every packet after it is sealed and checked
// (common/src/net/secure_channel.h): a datagram that does not authenticate, or is replayed, is
// dropped, and clear datagrams other than a Challenge are ignored (a clear Disconnect during the
// handshake is only noted: it may be a refusal, or a spoof).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <kinesync/client/connection.h>

#include "client/src/challenge_sample.h"
#include "common/src/net/clock_filter.h"
#include "client/src/character_assembly.h"
#include "client/src/loss_counter.h"
#include "client/src/resync_throttle.h"
#include "common/src/codec/snapshot_codec.h"
#include "common/src/net/connect_token.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"

namespace ks {

struct ClientSessionConfig {
    // A handshake round: ConnectRequests (and answers to Challenges) are resent this often until
    // accepted. Under a flood the server answers a share of everyone's requests; ten tries a second
    // get through a share of 1/10 within 5 s with odds of 0.995 (12 kB/s upstream while it lasts).
    double connect_resend_s = 0.1;
    // Distinct Challenges (for our salt, verified) a round answers. More than one: whoever sees
    // our ConnectRequest can resend it from an address of its own and relay the server's genuine
    // Challenge to that address; unless the Challenge names our own address (set_local_addresses),
    // we cannot tell it from ours, so each is answered, and the one bound to our address gets in.
    // Beyond this many in a round, a fair sample is answered (client/src/challenge_sample.h).
    int challenges_per_round = 8;
    // Tests only: where a handshake's sample draws from, given the handshake's salt (a generator
    // seeded with it is the broken variant an observer predicts). Empty, as it must be anywhere
    // else: the operating system's random source.
    std::function<ChallengeSample::Draw(uint64_t salt)> sample_draw_for_tests;
    double ack_interval_s = 0.05;   // an Ack message at least this often once connected
    double ping_interval_s = 0.5;
    double viewpoint_interval_s = 0.25;
    double timeout_s = 5.0;         // no datagram from the server for this long: disconnected
};

// A skeleton the client already holds (its store: client/src/skeleton_cache.h), offered to the
// server by hash in the handshake.
struct KnownSkeleton {
    net::SkeletonHash hash{};  // net::skeleton_hash(skeleton, metres_per_unit)
    Skeleton skeleton;
    float metres_per_unit = 1.0f;
};

struct ReceivedCharacterState {
    uint16_t id;
    uint32_t tick;
    const QCharacter* state;  // in the session's decoder history, within `joints`: valid until the next datagram
    bool full;
    JointRange joints;        // every joint, or one part of a large character
};


class ClientSession {
public:
    using State = ConnectionState;

    explicit ClientSession(ClientSessionConfig cfg = {});
    // Starts (or restarts) the handshake at time now_s.
    void connect(double now_s);
    void disconnect(double now_s, const std::string& reason = "client closed");
    // Every connect() from now on presents this token (the bytes a backend issued, see
    // common/src/net/connect_token.h). False (and *error) when it is not a token. A token opens one
    // session: after a disconnect, set a fresh one before connecting again.
    bool set_connect_token(std::span<const uint8_t> token, std::string* error = nullptr);
    const std::optional<net::ConnectToken>& connect_token() const { return token_; }
    // Skeletons this client holds, most wanted first: every handshake from now on offers the first
    // kMaxKnownSkeletons of them, and the server sends those by reference. The hashes are trusted
    // (the caller made or checked them).
    void set_known_skeletons(std::vector<KnownSkeleton> known) { known_ = std::move(known); }
    // Skeletons received in full (not by reference) since the last call (taken): what a store keeps.
    std::vector<net::ReceivedSkeleton> take_new_skeletons() { return std::exchange(new_skeletons_, {}); }
    // Hashes of the known skeletons the server referred to since the last call (taken).
    std::vector<net::SkeletonHash> take_used_skeletons() { return std::exchange(used_skeletons_, {}); }
    // The first skeleton error's description ("" while none): a program logs it once.
    const std::string& first_skeleton_error() const { return first_skeleton_error_; }
    // Ends the session (no goodbye: e.g. no token could be had) with this reason.
    void fail(const std::string& reason, DisconnectCode code = DisconnectCode::NoToken) {
        state_ = State::Disconnected;
        reason_ = reason;
        code_ = code;
    }
    // Why the last session ended or the handshake failed ("" while none did); during a handshake
    // the server has refused in clear (tokens), what it said.
    std::string disconnect_reason() const {
        if ((state_ == State::Connecting || state_ == State::Challenged) && !refusal_.empty()) return "the server said: " + refusal_;
        return reason_;
    }
    // The same as a code (DisconnectCode::None while none).
    DisconnectCode disconnect_code() const {
        if ((state_ == State::Connecting || state_ == State::Challenged) && !refusal_.empty()) return refusal_code_;
        return code_;
    }
    // The addresses and ports this client sends from, as a server would see them, when it knows
    // them (no NAT between: a LAN, a public IPv6 address, the same host). A Challenge naming one of
    // them is answered at once, outside the round's sample: one relayed to another address cannot
    // crowd it out. Behind a NAT none matches and every Challenge goes to the sample.
    void set_local_addresses(std::vector<net::ObservedAddress> addresses) { local_addresses_ = std::move(addresses); }
    // Where this client watches from (metres, world): sent to the server now and then (at most
    // every viewpoint_interval_s, and at once when it moved more than a metre), so the nearest
    // characters come first.
    void set_viewpoint(vec3 metres) { viewpoint_ = metres; has_viewpoint_ = true; }
    // Feed one datagram from the server.
    void on_datagram(std::span<const uint8_t> bytes, double now_s);
    // Timers: resends, acks, pings, timeout.
    void update(double now_s);
    // Datagrams to send now (taken).
    std::vector<std::vector<uint8_t>> take_outgoing();
    // Snapshot entries decoded since the last call (taken): whole characters or parts of them.
    std::vector<ReceivedCharacterState> take_received();
    // Whole poses assembled from them (client/src/character_assembly.h) since the last call (taken).
    std::vector<SnapshotAssembler::Ready> take_poses();
    // Poses from take_poses() done with: their buffers are reused (SnapshotAssembler::recycle).
    void recycle_poses(std::vector<SnapshotAssembler::Ready>&& used) { poses_.recycle(std::move(used)); }
    // Events received since the last call (taken).
    std::vector<net::EventInfo> take_events();

    State state() const { return state_; }
    const char* state_name() const;
    uint32_t client_id() const { return client_id_; }
    float tick_hz() const { return tick_hz_; }
    float snapshot_hz() const { return snapshot_hz_; }
    bool skeletons_ready() const;
    // Skeleton of a character (-1 unknown), and the skeleton's data.
    int skeleton_of(uint16_t character) const;
    const net::ReceivedSkeleton* skeleton(uint16_t id) const;
    const SkeletonPrecision* precision(uint16_t skeleton) const;
    std::vector<uint16_t> characters() const;
    std::string character_name(uint16_t character) const;
    // Characters announced but not yet shown whole: the skeleton has not arrived, or some of the
    // character's parts (snapshot_codec.h) have not been decoded in any snapshot yet.
    struct Arriving {
        uint16_t character;
        bool skeleton;            // its skeleton has arrived
        uint32_t parts_received;  // distinct parts decoded at least once
        uint32_t parts;
    };
    std::vector<Arriving> arriving() const;
    // Round trip (ms, smoothed), and the server clock estimate: server_time_us ~ offset + local us.
    double rtt_ms() const { return rtt_ms_; }
    // Estimated server tick at local time now_s (fractional), from pongs and snapshot ticks.
    double server_tick_at(double now_s) const;
    double clock_offset_s() const { return clock_.offset_s(); }
    bool clock_valid() const { return clock_.valid(); }  // a pong has been received
    const ClientSessionStats& stats() const { return stats_; }
    const SnapshotDecoder& decoder() const { return decoder_; }

private:
    void send(const std::function<std::vector<uint8_t>(const net::PacketHeader&)>& build, bool handshake = false);
    void on_packet(const net::DecodedPacket& p, double now_s, bool sealed);
    bool admit_clear(const net::DecodedPacket& p);  // with a token: what may come unsealed
    bool on_handshake(const net::DecodedPacket& p, double now_s);  // true once connected: go on
    bool challenge_verified(const net::wire::Challenge& c) const;   // with a token: made with its keys (and address)
    void on_challenge(const net::wire::Challenge& c, double now_s);
    bool names_local_address(const net::wire::Challenge& c) const;
    void send_challenge_response(const net::Cookie& cookie);
    void handshake_round(double now_s);  // resend: a ConnectRequest, and answers to this round's Challenges
    void on_refusal(const net::DecodedPacket& p);
    void on_skeleton_defs(const net::DecodedPacket& p);
    void take_completed_skeletons(const net::SkeletonAssembler::HeldSkeletons& held);
    void on_skeleton_ref(const net::wire::SkeletonRef& r);
    void skeleton_error(const std::string& why);
    void add_skeleton(net::ReceivedSkeleton s);
    void on_events(const net::DecodedPacket& p);
    void count_snapshot(uint16_t sequence, uint32_t tick);
    void copy_loss_counts();
    void on_pong(const net::DecodedPacket& p, double now_s);
    void send_ack();
    bool on_snapshot(const net::DecodedPacket::SnapshotView& m, double now_s);

    ClientSessionConfig cfg_;
    State state_ = State::Idle;
    uint64_t salt_ = 0;
    // This round's Challenges (cookies) to answer: the first challenges_per_round at once and again
    // at the round's end, later ones sampled into their places.
    ChallengeSample sample_;
    std::vector<net::ObservedAddress> local_addresses_;
    std::vector<net::Cookie> own_cookies_;  // this round's Challenges that named a local address
    std::optional<net::ConnectToken> token_;
    std::optional<net::PacketSealer> sealer_;
    std::optional<net::PacketOpener> opener_;
    std::vector<uint8_t> opened_;
    std::string reason_;
    DisconnectCode code_ = DisconnectCode::None;
    DisconnectCode refusal_code_ = DisconnectCode::None;
    std::string refusal_;  // a clear Disconnect during a token handshake (maybe spoofed)
    double last_connect_send_ = -1e9, last_heard_ = 0, last_ack_ = -1e9, last_ping_ = -1e9, connect_started_ = 0;
    uint16_t next_sequence_ = 0;
    net::AckTracker received_;
    std::vector<std::vector<uint8_t>> outgoing_;
    uint32_t client_id_ = 0;
    float tick_hz_ = 60.0f, snapshot_hz_ = 30.0f;
    net::SkeletonAssembler assembler_;
    std::vector<KnownSkeleton> known_;
    size_t offered_ = 0;  // how many of known_ this handshake offered
    std::vector<net::ReceivedSkeleton> new_skeletons_;
    std::vector<net::SkeletonHash> used_skeletons_;
    std::string first_skeleton_error_;
    std::map<uint16_t, net::ReceivedSkeleton> skeletons_;
    std::map<uint16_t, SkeletonPrecision> precisions_;
    std::map<uint16_t, uint16_t> character_skeleton_;
    std::map<uint16_t, std::string> character_names_;
    std::map<uint16_t, std::set<uint32_t>> parts_seen_;  // per character: first joints of the parts decoded once
    std::set<uint32_t> reliable_seen_;
    std::vector<uint32_t> reliable_to_ack_;
    SnapshotDecoder decoder_;
    std::vector<ReceivedCharacterState> received_states_;
    SnapshotAssembler poses_;
    ResyncThrottle resyncs_;
    std::vector<net::EventInfo> events_;
    uint32_t newest_tick_ = 0;
    bool any_tick_ = false;
    LossCounter loss_;
    vec3 viewpoint_, viewpoint_sent_;
    bool has_viewpoint_ = false;
    double last_viewpoint_ = -1e9;
    // Time sync.
    uint32_t next_ping_id_ = 1;
    double rtt_ms_ = 0;
    uint64_t pong_server_clock_us_ = 0;  // the newest Pong's server clock, echoed in the next Ping
    double pong_arrived_s_ = 0;          // and when it arrived
    net::ClockOffsetFilter clock_;  // server time (s) - local time (s)
    ClientSessionStats stats_;
};

}  // namespace ks
