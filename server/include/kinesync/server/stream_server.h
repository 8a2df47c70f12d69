#pragma once
// StreamServer: what a game's dedicated server links to stream its characters.
//
//   ks::StreamServerConfig cfg;                 // port, tick and snapshot rates, budget, ...
//   ks::StreamServer server(cfg);               // binds now; throws if it cannot
//   uint16_t sk = server.add_skeleton("hero", skeleton, 0.01f);
//   uint16_t id = server.add_character(sk, "player 1");
//   every game tick:
//       server.set_pose(id, pose);              // local kforms with velocities, joint 0 in the world
//       if (respawned) server.teleport(id);     // a new epoch: clients snap instead of blending
//       server.end_tick();                      // publishes the tick (and records it)
//
// Threads. Every public function is safe to call from the game's thread while the server's I/O
// runs: with IoMode::OwnThread on a thread of its own (datagrams answered as they arrive), with
// IoMode::Pumped on the caller's thread inside end_tick() and poll() (nothing happens between
// calls; call poll() every frame or so, so pings are answered promptly). Calls from several game
// threads at once are also safe (one internal lock), though a game normally has one.
//
// Ownership. Skeletons and poses are copied in: nothing the caller passes must outlive the call.
// Ids are small integers handed out in order and never reused by one server.
//
// Errors. Bad arguments (an unknown id, a pose whose size is not its skeleton's, a skeleton that
// does not validate or has more than 1024 joints, a value out of range in the configuration) throw
// ks::Error (kinesync/common/errors.h) with its code, field, joint and a message naming the value;
// a pose is checked in full (finite values, unit quaternions, positive scales) by set_pose.
// Network trouble after the bind never throws into the game (it is counted in stats()).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/errors.h>
#include <kinesync/common/anim/skeleton.h>
#include <kinesync/common/net/io_mode.h>
#include <kinesync/common/net/key.h>
#include <kinesync/server/admission_config.h>
#include <kinesync/server/server_stats.h>

namespace ks {

struct StreamServerConfig {
    bool network = true;         // false: no socket at all (an offline run that only records every tick: end_tick waits for the disk)
    // Loopback by default: serving a public address needs a private key (or insecure_dev).
    std::string bind = "127.0.0.1";
    uint16_t port = 40000;       // 0: any free port (see port())
    float tick_hz = 60.0f;       // how often the game calls end_tick(): a whole number (it travels as one)
    float snapshot_hz = 30.0f;   // snapshots per second to each client: a whole divisor of tick_hz
    float bandwidth_bps = 256000.0f;  // per-client budget, bits per second on the wire (UDP payload + 28 bytes of IPv4/UDP headers per datagram)
    // Each client's rate follows its path between min_bandwidth_bps (or the budget, when that is
    // lower) and bandwidth_bps: queueing delay, loss and silence lower it (docs/NETWORK.md "The
    // rate follows the link"). false: every client gets bandwidth_bps whatever its path carries.
    bool follow_path = true;
    float min_bandwidth_bps = 32000.0f;
    int max_clients = 32;
    double timeout_s = 5.0;      // a client silent this long is dropped
    double reliable_timeout_s = 10.0;  // a client that leaves a reliable message unacknowledged this long is dropped
    int max_sessions_per_address = -1; // -1: a quarter of max_clients (at least 4), no limit on loopback
    AdmissionConfig admission;   // handshake rates per prefix, per address and for all; sessions per prefix; token lifetime
    IoMode io = IoMode::OwnThread;
    int worker_threads = -1;     // extra threads building clients' snapshots: -1 one per other core, 0 none
    size_t receive_buffer_bytes = size_t(4) << 20;  // the UDP socket's receive buffer; 0: the kernel's default (Linux caps it at net.core.rmem_max)
    RelevanceConfig relevance;   // how a client's viewpoint orders its characters (kinesync/server/server_stats.h)
    std::string record_path;     // non-empty: record the session there (see RecordingWriter)
    std::string record_scenario; // free text stored in the recording (e.g. a command line)
    uint64_t record_seed = 0;    // stored in the recording
    // The recording is written on its own thread; ticks wait for it in a queue of at most this many
    // bytes. When the disk falls behind, ticks that do not fit are dropped from the recording
    // (counted in recording_frames_dropped, logged, and marked in the file), never stalling the
    // stream or growing memory further.
    size_t record_queue_bytes = size_t(64) << 20;
    uint64_t secret_seed = 0;    // cookie key seed, for reproducible tests only; 0: a random key
    // Connect tokens (schema/PROTOCOL.md): the private key this server shares with the game's
    // backend, which issues tokens (net::issue_connect_token, kinesync-token). With it, only token
    // holders get in and every session packet is sealed (ChaCha20-Poly1305 AEAD). Without it the server is
    // in dev mode, unauthenticated: allowed on a loopback bind, elsewhere only with insecure_dev.
    std::optional<net::Key> private_key;
    bool insecure_dev = false;
    // Dev mode on a non-loopback address needs this too: a second, explicit yes to anyone on the
    // network connecting, spoofing and reading every stream.
    bool insecure_dev_public = false;
    std::string public_address;  // "address:port" tokens name; "": bind:port (bind must then be specific)
    // Loopback peers count against the per-address limits too (off: local test bots are exempt).
    // For tests of the limits, which cannot otherwise run without a network namespace.
    bool limit_loopback = false;
};

struct StreamServerStats {
    net::ServerStats net;
    uint32_t tick = 0;
    size_t characters = 0;
    // The recording: ticks dropped because its writer fell behind (or failed), and its queue.
    uint64_t recording_frames_dropped = 0;
    size_t recording_queue_bytes = 0, recording_queue_peak_bytes = 0;
    // Ticks end_tick() did not hand to the network thread because it was 32 ticks behind (an
    // overloaded machine): not sent nor recorded; their roster changes and events go with the next.
    uint64_t ticks_not_published = 0;
    std::vector<net::ClientReport> clients;
};

class StreamServer {
public:
    // Checks cfg (Errc::InvalidConfig), binds the socket (when cfg.network) and opens the recording
    // (when cfg.record_path): throws ks::Error (Errc::Network, Errc::Io) naming the address or the
    // file when either fails.
    explicit StreamServer(const StreamServerConfig& cfg);
    // close(), swallowing its errors.
    ~StreamServer();
    StreamServer(const StreamServer&) = delete;
    StreamServer& operator=(const StreamServer&) = delete;

    // A skeleton in its own units: metres_per_unit converts them (0.01 for centimetres).
    uint16_t add_skeleton(const std::string& name, const Skeleton& skeleton, float metres_per_unit = 1.0f);
    // A character of a registered skeleton. Clients learn of it with the next end_tick(); it is
    // streamed once it has a pose. Characters added after the first end_tick() are streamed but
    // not recorded (a recording's character list is fixed when it starts).
    uint16_t add_character(uint16_t skeleton, const std::string& name = {});
    // The character leaves: clients are told and forget it.
    void remove_character(uint16_t character);
    // This tick's pose: local kforms with velocities, joint 0 (the root) in the world. Kept until
    // replaced, so a character that does not move needs no new call.
    void set_pose(uint16_t character, const Pose& pose);
    // Optional, after set_pose in the same tick: the look-ahead, the pose `seconds` (0..2] from
    // now that the game's animation would reach if nothing were decided meanwhile (its graph run
    // forward with the current inputs held: clips playing on, transitions in progress completing,
    // procedural targets moving on their course; no new choice, no teleport or reset). It is
    // sent to clients instead of the pose (they show it as it comes due: docs/FIDELITY.md,
    // "Look-ahead") and recorded beside the pose (RecordedCharacter::ahead). set_pose clears it.
    // `plan`: a number the game increments (wrapping) whenever it decides something its earlier
    // look-aheads could not know; clients then drop what they said of the time after this tick. The
    // plan stays the character's until the next call (set_pose keeps it). After a decision, pass a
    // shorter `seconds` that grows back a tick per tick (the demo server restarts at 0.15 s): the
    // new plan then comes due about when it arrives (docs/FIDELITY.md, "Look-ahead").
    // The contract (docs/FIDELITY.md, "Honesty"): what is passed at tick t is computed from the
    // game's state at t alone, never from a decision taken later (a scripted event, an AI's next
    // choice, input not yet read). Two runs identical up to a decision at tick T must pass
    // bit-identical look-aheads at every tick before T; record both (StreamServerConfig::
    // record_path) and `kinesync-replay A.ksrec --honesty B.ksrec --decision-tick T` checks it.
    // Throws ks::Error like set_pose, and InvalidArgument for seconds outside (0, 2].
    void set_look_ahead(uint16_t character, const Pose& pose, float seconds, uint16_t plan);
    // A discontinuity at this tick: the character jumped (teleport) or its animation restarted
    // (reset). Opens a new epoch: clients show the new pose at once, never a blend across. Call
    // with the pose of the new epoch (set_pose before or after, within the same tick). Returns the
    // new epoch.
    uint16_t teleport(uint16_t character);
    uint16_t reset(uint16_t character);
    uint16_t epoch(uint16_t character) const;
    // Publishes the tick: every character's pose, events and roster changes since the last call.
    // Returns the tick number (1 for the first call).
    uint32_t end_tick();
    // IoMode::Pumped: handles whatever arrived (non-blocking). Does nothing with OwnThread.
    void poll();
    // Says goodbye to every client, stops the I/O thread, closes the recording (rethrowing its
    // error, e.g. a full disk). Idempotent; nothing else may be called after.
    void close();

    uint16_t port() const { return port_; }  // the bound port (0 without network)
    uint32_t tick() const;
    // Counters and clients as of the last end_tick() (final after close()).
    StreamServerStats stats() const;
    // Percentiles (microseconds) of the time the I/O side spent per tick (quantizing, building and
    // sending snapshots, recording) since the last call.
    void take_tick_times(double& p50_us, double& p99_us);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    uint16_t port_ = 0;
};

}  // namespace ks
