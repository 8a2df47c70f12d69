#pragma once
// StreamClient: what a game's client links to show a kinesync server's characters.
//
//   ks::StreamClientConfig cfg;            // host, port, reconstruction strategy, I/O mode
//   ks::StreamClient client(cfg);          // resolves the host; throws if it cannot
//   client.connect();
//   every render frame:
//       client.update();                   // network (when pumped), then every character rendered
//       for (const ks::ClientEvent& e : client.take_events()) ...   // connected, added, teleport, ...
//       for (const ks::RemoteCharacter* c : client.characters())
//           if (c->ready) draw(c->skeleton, c->global);            // world-space kforms with velocities
//
// Threads. With IoMode::Pumped (the default) nothing happens between calls: update() moves the
// datagrams first (poll() may be called more often, e.g. from a fixed-rate loop). With
// IoMode::OwnThread a thread of the client's own receives, acknowledges and pings as datagrams
// arrive; update() then only takes what it received and renders. Either way the public functions
// are called from one thread (the game's); they are not meant to be called concurrently.
//
// Ownership and lifetimes. The client owns everything it hands out. A RemoteCharacter (with its
// skeleton and poses) stays valid until the update() that reports it removed (its
// CharacterRemoved event), until a disconnect, or until the client is destroyed; its poses change
// only inside update(). The vector characters() returns is rebuilt by update().
//
// Time. Characters are rendered at the server's clock as estimated from ping/pong (slewed, never
// stepped); the strategy decides how (the default extrapolates with velocities and corrects with
// C1 offsets; see kinesync/client/reconstruct_config.h).

#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kinesync/client/connection.h>
#include <kinesync/client/reconstruct_config.h>
#include <kinesync/common/anim/pose.h>
#include <kinesync/common/errors.h>
#include <kinesync/common/anim/skeleton.h>
#include <kinesync/common/net/io_mode.h>
#include <kinesync/common/net/net_profile.h>

namespace ks {

struct StreamClientConfig {
    std::string host = "127.0.0.1";
    uint16_t port = 40000;
    ReconstructConfig reconstruct;
    IoMode io = IoMode::Pumped;
    double timeout_s = 5.0;            // silence from the server (or an unanswered handshake) for this long: disconnected
    double reconnect_after_s = -1.0;   // >= 0: after a disconnect, connect again after this many seconds
    std::optional<NetProfile> simulate;  // development aid: a simulated network in both directions
    std::optional<NetProfile> simulate_up;  // when set, the client -> server direction's instead
    uint64_t seed = 1;                 // the simulated network's seed (handshake salts come from the OS)
    std::optional<vec3> viewpoint;     // as set_viewpoint(), from the start
    // A connect token from the game's backend (net::issue_connect_token; the bytes as issued).
    // With one, the client connects to the token's first server (host and port are not used) and
    // the session is authenticated and sealed. A token opens one session: reconnecting (including
    // reconnect_after_s) needs a fresh one, given to connect(token). Empty: a dev-mode server.
    std::vector<uint8_t> connect_token;
    // Or: asked for a fresh token before every connection attempt, automatic reconnects included
    // (e.g. a request to the game's backend). It must name host:port. A throw is reported as the
    // disconnect reason.
    std::function<std::vector<uint8_t>()> fetch_token;
    // A directory for the skeletons this client receives (created when missing; empty: none).
    // Every handshake offers the server the 24 used most recently, by hash, and the server sends
    // those by reference instead of in full: joining again, characters show as soon as their first
    // states arrive. Files that are damaged or not what their names say are skipped and counted
    // (StreamClientStats::skeleton_cache_refused) and deleted. A game may ship its rigs' files here
    // too. The offered hashes travel in clear and one directory serves every server: give servers of
    // different operators a directory each (schema/PROTOCOL.md, "Skeletons a client already holds").
    std::string skeleton_cache_dir;
};

enum class ClientEventKind { Connected, Disconnected, CharacterAdded, CharacterRemoved, Teleport, Reset };
const char* client_event_name(ClientEventKind k);

struct ClientEvent {
    ClientEventKind kind;
    uint16_t character = 0;  // character events
    uint16_t epoch = 0;      // Teleport / Reset: the epoch that starts
    uint32_t tick = 0;       // Teleport / Reset: the server tick it takes effect at
};

struct RemoteCharacter {
    uint16_t id = 0;
    std::string name;
    uint16_t skeleton_id = 0;
    std::string skeleton_name;
    Skeleton skeleton;
    float metres_per_unit = 1.0f;  // the skeleton's units
    bool ready = false;            // a snapshot has arrived: the poses below are meaningful
    uint64_t snapshots = 0;        // snapshots of it received so far
    uint32_t newest_tick = 0;      // server tick of the newest
    uint16_t epoch = 0;            // of the motion shown
    // The strategy showing it: the configured one, or its "+ahead" form (deadblend+sod+ahead,
    // hermite+ahead) once the server sends this character's look-ahead.
    Strategy strategy = Strategy::DeadBlendSod;
    bool look_ahead = false;  // the server has sent this character's look-ahead
    Pose local;                    // joint 0 in the world, the others relative to their parent
    Pose global;                   // every joint in the world (forward kinematics of local, with velocities)
};

// A character the server announced that the client cannot show whole yet: its skeleton has not
// arrived, or some of its parts (characters of more than 96 joints travel in parts) have not
// arrived in any snapshot yet. Joining a crowded server, these are what is still on the way.
struct ArrivingCharacter {
    uint16_t id = 0;
    bool skeleton = false;        // its skeleton has arrived
    uint32_t parts_received = 0;  // parts decoded at least once, of
    uint32_t parts = 1;
};

struct StreamClientStats {
    ClientSessionStats session;
    double rtt_ms = 0;
    double time_sync_error_ms = 0;         // mean |estimated one-way delay - rtt / 2| of snapshots
    double render_ns_per_character = 0;    // mean reconstruction + FK cost of update()
    // Its median over the last 1,024 frames: what a frame costs when the thread is not preempted
    // (a frame the OS interrupts moves the mean, not the median).
    double render_ns_per_character_median = 0;
    uint64_t reconnects = 0;
    // False when the socket cannot timestamp arrivals (SO_TIMESTAMPNS): datagrams are then stamped
    // when read, so a pumped client's round trip and clock are late by up to a frame.
    bool receive_timestamps = false;
    // The skeleton cache (StreamClientConfig::skeleton_cache_dir; read once when set, then kept in
    // memory as skeletons arrive): skeletons offered, over every connection attempt; files refused
    // (the first one's path and reason below); skeletons it failed to keep.
    uint64_t skeleton_cache_offered = 0, skeleton_cache_refused = 0, skeleton_cache_save_failures = 0;
    std::string skeleton_cache_problem;
    // The first skeleton error (session.skeleton_errors counts them), "" while none.
    std::string skeleton_error;
};

class StreamClient {
public:
    // Checks the configuration (ks::Error, Errc::InvalidConfig, naming the field), resolves host
    // (Errc::Network, "cannot resolve HOST: why") and opens a UDP socket.
    explicit StreamClient(const StreamClientConfig& cfg);
    // disconnect(): the server frees the slot at once instead of timing the client out.
    ~StreamClient();
    StreamClient(const StreamClient&) = delete;
    StreamClient& operator=(const StreamClient&) = delete;

    // Starts (or restarts) the handshake. Connected / Disconnected events report how it went.
    void connect();
    // The same with a fresh connect token (ks::Error, Errc::InvalidToken, when it is not a token,
    // or names another server than the one this client talks to).
    void connect(const std::vector<uint8_t>& token);
    // Why the last session ended or the handshake failed ("" while none did).
    std::string disconnect_reason() const;
    // The same as a code a program can act on (DisconnectCode::None while none).
    DisconnectCode disconnect_code() const;
    // Says goodbye (a Disconnect datagram) and forgets every character.
    void disconnect();
    // Once per render frame: poll() when pumped, then characters in and out, every ready character
    // rendered at the server time estimate.
    void update();
    // Pumped: sends and receives what is due now (non-blocking). Does nothing with OwnThread.
    void poll();
    // Where the player watches from (metres, world): the server sends the nearest characters in
    // every snapshot and the far ones less often. Until it is set, every character counts alike.
    void set_viewpoint(vec3 metres);
    // The skeleton cache (as StreamClientConfig::skeleton_cache_dir; "" for none), from the next
    // connect on. ks::Error (InvalidConfig, "skeleton_cache_dir") when the directory cannot be made.
    void set_skeleton_cache(const std::string& dir);
    // Events since the last call, oldest first.
    std::vector<ClientEvent> take_events();

    const std::vector<const RemoteCharacter*>& characters() const { return list_; }
    const RemoteCharacter* character(uint16_t id) const;
    ConnectionState state() const;
    const char* state_name() const;
    // The server time (seconds) the last update() rendered at.
    double render_time() const { return render_time_; }
    StreamClientStats stats() const;
    // Characters announced but not yet shown whole (empty once every character has arrived).
    std::vector<ArrivingCharacter> arriving() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<const RemoteCharacter*> list_;
    double render_time_ = 0;
};

}  // namespace ks
