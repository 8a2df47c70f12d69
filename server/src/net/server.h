#pragma once
// The network side of a stream server: one UDP socket and every client session. Internal to
// StreamServer (kinesync/server/stream_server.h), which owns it and calls it on one thread only (its I/O
// thread, or the game's thread in pumped mode).
//
// On snapshot ticks (publish) every character is quantized once and each client gets its own
// delta-compressed snapshot from its SnapshotBuilder. Handshake: ConnectRequest (padded to a full
// datagram) -> Challenge (a stateless cookie) -> ChallengeResponse -> Accept; skeleton definitions,
// characters added later and events are sent reliably (resent until acknowledged). A client gets
// snapshots of a character right behind its definition and skeletons (sent once, not yet again);
// what it acknowledges of them becomes a baseline only once it has acknowledged the definition.
// Malformed or unexpected datagrams are counted and dropped; they never reach another client's
// state.

#include <array>
#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/skeleton.h>
#include "common/src/codec/snapshot_codec.h"
#include "server/src/net/snapshot_builder.h"
#include "common/src/net/connect_token.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"
#include "common/src/util/worker_pool.h"
#include "server/src/net/admission.h"
#include "server/src/net/cookie.h"
#include "server/src/net/relevance.h"
#include <kinesync/common/net/disconnect_code.h>
#include <kinesync/server/server_stats.h>

namespace ks::net {

struct ServerConfig {
    std::string bind = "0.0.0.0";
    uint16_t port = 40000;  // 0: any free port
    float tick_hz = 60.0f;
    int max_clients = 32;
    float snapshot_hz = 30.0f;
    float bandwidth_bps = 256000.0f;  // per client, wire bits: everything sent to it, with IPv4/UDP headers
    // Each client's rate follows its path between min_bandwidth_bps and bandwidth_bps
    // (rate_control.h); false: bandwidth_bps for every client.
    bool follow_path = true;
    float min_bandwidth_bps = 32000.0f;
    double timeout_s = 5.0;
    double reliable_resend_s = 0.25;   // first resend; each next waits twice as long (2 s at most)
    double reliable_timeout_s = 10.0;  // a reliable message unacknowledged this long drops the client
    size_t max_reliable_queue = 256;   // more reliable messages waiting than this drops the client
    // Sessions one IP address may hold; -1: a quarter of max_clients (at least 4), and no limit
    // for loopback (test bots).
    int max_sessions_per_address = -1;
    uint64_t secret_seed = 0;  // cookie key seed, for reproducible tests only (0: a random key)
    // Authentication (schema/PROTOCOL.md, "Connect tokens"). With a private key only clients
    // holding a valid, unexpired, unused token naming public_address get in, and every packet
    // after the handshake is sealed both ways. Without one the server runs in dev mode (nothing
    // authenticated), which it refuses unless insecure_dev is set or it binds a loopback address
    // (or runs in-process with `transport`).
    std::optional<Key> private_key;
    bool insecure_dev = false;
    std::string public_address;       // "address:port" tokens must name; "": bind:port (needs a specific bind)
    // Who may start a handshake and how often (loopback exempt from the per-address and per-prefix
    // limits unless limit_loopback), and datagrams per second per session.
    AdmissionConfig admission;
    double session_rate = 200.0, session_burst = 400.0;
    bool limit_loopback = false;
    RelevanceConfig relevance;    // how a client's viewpoint orders the characters it gets
    bool share_encodings = true;  // code a character once per distinct baseline for all clients
    int worker_threads = -1;      // threads that build snapshots with the I/O thread; -1: one per other core, 0: none
    // The socket's receive buffer (SO_RCVBUF), so bursts of datagrams between two reads are not
    // dropped; 0: the kernel's default. Linux caps it at net.core.rmem_max (logged when it does).
    size_t receive_buffer_bytes = size_t(4) << 20;
    // In-process use (benchmarks, tests): datagrams go to this instead of a socket, none is
    // opened, and peers' datagrams come in through Server::inject. It is called until ~Server
    // returns (stop() says goodbye through it): whatever it captures must outlive the Server.
    std::function<void(const asio::ip::udp::endpoint& to, std::span<const uint8_t> bytes)> transport;
    // Tests: the server's clock in seconds (its rate limits, timeouts, round trips) as the test
    // drives it; empty: the steady clock since construction.
    std::function<double()> clock;
};

// What the server streams: skeletons and characters by id. Entries are never moved once added
// (std::map nodes), so messages may point at them.
struct Roster {
    struct SkeletonEntry {
        std::string name;
        Skeleton skeleton;
        float metres_per_unit = 1.0f;
        SkeletonPrecision precision;
    };
    struct CharacterEntry {
        uint16_t skeleton = 0;
        std::string name;
    };
    std::map<uint16_t, SkeletonEntry> skeletons;
    std::map<uint16_t, CharacterEntry> characters;
};

// One tick's data for the network: the characters' poses (joint 0 in the world) and epochs, the
// events of this tick, and the roster's changes since the previous tick (already applied to the
// roster the server was given).
struct TickFrame {
    uint32_t tick = 0;
    struct CharacterPose {
        uint16_t id = 0;
        uint16_t epoch = 0;
        const Pose* pose = nullptr;
        // The look-ahead (StreamServer::set_look_ahead): sent instead of `pose` when given; `planned`
        // once the character has had one (its entries then always carry the plan).
        const Pose* ahead = nullptr;
        float ahead_s = 0.0f;
        bool planned = false;
        uint16_t plan = 0;
    };
    std::vector<CharacterPose> characters;
    std::vector<EventInfo> events;
    std::vector<uint16_t> added_skeletons, added_characters, removed_characters;
};

// Lifetimes: the io_context, the Roster and whatever ServerConfig::transport captures must
// outlive the Server; the destructor still reads the roster and calls the transport. An owner
// holding them as members declares the Server after them (members are destroyed in reverse).
class Server {
public:
    // Binds at once: throws std::runtime_error("cannot listen on UDP HOST:PORT: why") when the
    // address is bad or the port busy (no reuse_address: a second server must not share a port).
    Server(asio::io_context& io, const ServerConfig& cfg, const Roster& roster);
    ~Server();
    // Starts receiving (handlers run on whichever thread runs the io_context).
    void start();
    // Says goodbye to every client and closes the socket; the io_context then runs out of work.
    void stop();
    // A new tick: quantize, send snapshots, definitions of added characters, events; resends,
    // timeouts.
    void publish(const TickFrame& frame);
    // A datagram from `from`, as if it arrived on the socket (with ServerConfig::transport),
    // age_s seconds ago (the kernel's receive timestamp: round trips are measured from arrivals).
    void inject(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes, double age_s = 0.0);
    uint16_t port() const { return port_; }
    // True when connect tokens are required and sessions are sealed (false: dev mode).
    bool authenticated() const { return secure_; }
    // The address connect tokens must name ("address:port").
    const std::string& public_address() const { return public_address_; }
    // The receive buffer the kernel granted (0: left at its default, or no socket).
    size_t receive_buffer_bytes() const { return receive_buffer_bytes_; }
    const ServerStats& stats() const { return stats_; }
    std::vector<ClientReport> clients() const;
    const EncodeCache& encode_cache() const { return encode_cache_; }
    const SnapshotHistory& history() const { return history_; }

private:
    struct Session;
    void receive();
    void read_socket();  // every datagram waiting, each with its arrival time
    void on_datagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> bytes);
    void resolve_security();
    void on_connect_request(const asio::ip::udp::endpoint& from, const DecodedPacket& p);
    void refuse_request(const asio::ip::udp::endpoint& from, const char* why, DisconnectCode code);
    // A ChallengeResponse's token part: the proof, the token's own budget, expiry and single use.
    std::optional<PrivateToken> check_token_handshake(const asio::ip::udp::endpoint& from, const CookieContents& c,
                                                      const Cookie& cookie, const wire::ChallengeResponse& r);
    void on_challenge_response(const asio::ip::udp::endpoint& from, const std::string& key, const DecodedPacket& p);
    // The checks that need no decryption: nullptr when the token may be opened, else why (and code).
    const char* precheck_token(uint64_t expire_s, const flatbuffers::Vector<uint8_t>* sealed, DisconnectCode& code) const;
    // Opens the token (counted in tokens_opened): nullopt with why and code set when it is no good.
    std::optional<PrivateToken> open_token(uint64_t expire_s, const flatbuffers::Vector<uint8_t>& sealed, const char*& why,
                                           DisconnectCode& code);
    bool admitted(std::optional<AdmissionLimit> limit);  // false (counted) when a limit was hit
    // Refuses a proven handshake for a live session, a used token, a full server or too many
    // sessions from one address or prefix: true when it did (and told the peer).
    bool refuse_session(const asio::ip::udp::endpoint& from, const std::optional<PrivateToken>& token);
    void send_accept(Session& s);
    void prune_admission();
    void on_session_packet(Session& s, const DecodedPacket& p);
    void on_ping_echo(Session& s, uint64_t echo_clock_us, uint64_t echo_held_us);
    double reliable_burst_bytes() const;  // what a session's reliable allowance may bank
    // Skeletons the client holds go by reference (SkeletonRef), the others in full.
    void queue_definitions(Session& s, std::span<const uint16_t> skeletons, std::span<const uint16_t> characters);
    void mark_acked(Session& s, uint32_t message_id);
    void confirm_definitions(Session& s);
    void mark_sent_definitions(Session& s);
    static std::set<uint16_t> skeletons_queued(const Session& s, bool not_once);
    static bool chain_pending(const Session& s, uint16_t skeleton, const std::set<uint16_t>& queued);
    static double chain_sent_s(const Session& s, uint16_t skeleton);
    // A plan of definitions holding its own copies of the names it sends: a character may leave
    // the roster while its message is still being resent (skeletons never leave).
    struct OwnedPlan {
        SkeletonDefsPlan plan;
        std::deque<std::string> names;
    };
    const std::vector<std::shared_ptr<const OwnedPlan>>& plans_for(std::span<const SkeletonDefInput> defs,
                                                                   std::span<const CharacterInfoInput> chars,
                                                                   std::span<const SkeletonRefInput> refs);
    const SkeletonHash& skeleton_hash_of(uint16_t skeleton);
    void quantize_frame(const TickFrame& frame);  // into now_
    void send_snapshots(uint32_t tick);
    void account_unsent(Session& s);
    void follow_paths();  // every client's rate, from what its path did
    vec3 root_metres(const CharacterSnapshot& c) const;
    void send_reliable(Session& s, bool force);
    size_t send(Session& s, const std::function<std::vector<uint8_t>(const PacketHeader&)>& build, uint64_t tag);  // bytes sent
    void send_raw(const asio::ip::udp::endpoint& to, const std::vector<uint8_t>& bytes);
    void drop(uint32_t id, const char* why);
    double now_s() const;
    // The server's clock as clients see it: the newest tick's time, advancing with the wall clock
    // for at most one tick after it (ticks are the game's, and may come late).
    uint64_t server_time_us() const;

    ServerConfig cfg_;
    const Roster& roster_;
    asio::ip::udp::socket socket_;
    uint16_t port_ = 0;
    size_t receive_buffer_bytes_ = 0;
    std::chrono::steady_clock::time_point start_;
    CookieJar cookies_;
    std::array<uint8_t, 2048> rx_{};
    double rx_at_s_ = 0;  // when the datagram being handled arrived (now_s's clock)
    std::map<std::string, std::unique_ptr<Session>> sessions_;  // by endpoint text
    uint32_t next_client_id_ = 1;
    uint32_t next_message_id_ = 1;
    ServerStats stats_;
    bool secure_ = false;
    std::string public_address_;
    Admission admission_;
    bool token_table_full_logged_ = false;
    double last_prune_s_ = 0;
    std::vector<uint8_t> opened_;  // receive buffer of an opened sealed datagram
    SnapshotHistory history_;
    std::map<uint16_t, SkeletonHash> skeleton_hashes_;  // of roster skeletons, computed when first needed
    // The last definitions planned (plans_for): skeletons by id (ids are never reused), characters
    // as assigned.
    struct PlanKey {
        std::vector<uint16_t> defs, refs;
        std::vector<std::tuple<uint16_t, uint16_t, std::string>> characters;
        bool operator==(const PlanKey&) const = default;
    };
    PlanKey plan_key_;
    std::vector<std::shared_ptr<const OwnedPlan>> plans_;
    EncodeCache encode_cache_;  // one tick's character encodings, shared by clients with the same baseline
    std::vector<CharacterSnapshot> now_;
    std::unique_ptr<WorkerPool> pool_;
    uint32_t tick_ = 0;
    std::set<std::pair<uint16_t, int>> unsent_logged_;  // (character, Unsent) already logged
    double tick_wall_s_ = 0;
    bool running_ = false;
};

}  // namespace ks::net
