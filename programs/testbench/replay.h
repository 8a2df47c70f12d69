#pragma once
// kinesync-replay's engine (the evaluation protocol: docs/FIDELITY.md): re-streams a recording through the real path
// -- quantization, the per-client SnapshotBuilder with baselines and priorities, real protocol
// packets, a simulated network in both directions (snapshots down; acks and pings up), the
// SnapshotDecoder, clock estimation from ping/pong, and every reconstruction strategy -- and
// measures what the client shows against the recorded truth at 60 Hz render frames.
//
// One network run feeds all strategies (each gets the same snapshots at the same instants), so
// they are compared on identical conditions; the "+ahead" strategies get a second run with the
// same network seed, whose server sends each character's recorded look-ahead instead of its pose. Skeletons are taken from the recording (the live
// handshake and skeleton transfer are not replayed). The client's clock runs with an unknown
// offset from the server's; it only learns server time through ping/pong, as a live client does.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/src/reconstruct.h"
#include "programs/testbench/view_capture.h"
#include "programs/testbench/metrics/fidelity.h"
#include "common/src/netsim/netsim.h"
#include <kinesync/common/record/recording.h>

namespace ks {

struct ReplayConfig {
    NetProfile profile;                   // both directions, or server -> client when up_profile is set
    std::optional<NetProfile> up_profile;  // client -> server
    // The server's rate follows the path (server/src/net/rate_control.h) between a floor and
    // bandwidth_bps; false: a fixed rate of bandwidth_bps (the A/B).
    bool adapt_rate = true;
    float snapshot_hz = 30.0f;
    double render_hz = 60.0;
    uint64_t seed = 1;
    std::vector<Strategy> strategies = all_strategies();
    ReconstructConfig reconstruct;       // strategy field ignored (each strategy in `strategies` runs)
    // When not empty, these run instead of `strategies` (each its own settings, e.g. a sweep),
    // all on the same network run.
    std::vector<ReconstructConfig> variants;
    float bandwidth_bps = 256000.0f;
    std::optional<float> hold_error_m;  // the server's BuilderConfig::hold_error_m (unset: its default)
    std::optional<float> hold_ahead_error_m;
    std::function<void(double fraction)> progress;  // called now and then with 0..1
    // Crowd mode: the client watches from here (metres, world); the server's priorities follow
    // relevance (server/src/net/relevance.h), and the `crowd_near` characters nearest to it (by mean
    // distance over the recording) are measured apart from the rest.
    std::optional<vec3> viewpoint_m;
    int crowd_near = 8;
    bool only_near = false;  // stream only those nearest (what they get with the crowd away)
    int far_hold_depth = 1;  // level of detail of the others: joints deeper are not sent (-1: all)
    // When set, every render frame's truth and shown poses (and the snapshots' arrivals) are
    // recorded here for the viewer (--view); streams: "truth", then the present variants in order,
    // then the "+ahead" ones (recorded in a second pass over the same frames).
    ViewCapture* view = nullptr;
    size_t view_stream_base = 0;  // this run's first variant is stream 1 + this (its truth and snapshots: pass 1's)
};

struct CrowdResult {
    std::vector<uint16_t> near;   // the nearest characters' ids
    FidelityResult near_result, rest_result;
};

struct ReplayStrategyResult {
    Strategy strategy;
    ReconstructConfig config;
    FidelityResult result;
    std::vector<std::pair<double, double>> series;  // (time s, mean present error cm)
    std::vector<double> pop_times_s;
    std::vector<int> pop_characters;  // the id of the character of each pop
    std::optional<CrowdResult> crowd;  // crowd mode only
};

// The path server -> client in one run, and the server's rate on it.
struct PathReport {
    // Datagrams the bottleneck's queue dropped, bytes delivered per second (with IP/UDP headers),
    // each datagram's delay from send to delivery and its wait in the bottleneck's queue (until
    // its first byte is carried), ms.
    uint64_t queue_dropped = 0;
    double delivered_bytes_per_s = 0, delay_mean_ms = 0, delay_p95_ms = 0, queue_wait_mean_ms = 0, queue_wait_p95_ms = 0;
    // The sender's rate: its mean over the run (bit/s), its last, and its changes by cause.
    double rate_mean_bps = 0, rate_last_bps = 0;
    uint64_t rate_lowered_delay = 0, rate_lowered_loss = 0, rate_silences = 0, rate_recovered = 0;
    std::vector<std::pair<double, double>> rate_series;  // the rate every 0.1 s (time s, bit/s)
};

struct ReplayResult {
    std::vector<ReplayStrategyResult> strategies;
    std::vector<double> epoch_times_s;                           // teleports and resets, all characters
    std::vector<std::pair<double, double>> blackout_spans_s;     // [T, A) per epoch change and character
    double bytes_per_s = 0;       // per client, UDP payload + 28 B IP/UDP per datagram
    double ahead_bytes_per_s = 0; // the same for the "+ahead" strategies' run (its server sends look-ahead; 0: none ran)
    double bits_per_joint = 0;    // coded character bits per joint per snapshot
    double clock_error_ms = 0;    // mean |estimated - true| server time at render frames
    // Counted from the datagrams written (not the coder's estimate): snapshot payload bytes per
    // character sent (its framing included), and the envelope (packet header and message framing
    // around the payload, IP/UDP not included) per snapshot datagram.
    double payload_bytes_per_character = 0, envelope_bytes_per_datagram = 0;
    uint64_t snapshot_datagrams = 0, datagrams_lost = 0;
    PathReport path, ahead_path;  // the present strategies' run, and the "+ahead" ones' (when it ran)
};

// Replays a recording held whole in memory.
ReplayResult run_replay(const RecordingReadResult& rec, const ReplayConfig& cfg);

// A recording to replay from its file in bounded memory: what a replay must know before it
// starts, from one pass over the file (a chunk at a time, nothing of the frames kept but the
// epoch changes, a few per character per minute). Errors and the truncation warning are
// read_recording()'s.
struct RecordingScan {
    std::string path;
    RecordingHeader header;
    size_t frames = 0, chunks = 0;
    uint32_t first_tick = 0, last_tick = 0;
    bool ticks_increase = true;  // strictly, frame after frame (as the server writes them)
    bool truncated = false;
    std::string warning;
    // Where the server could not record (its writer fell behind): (tick, ticks missing before it).
    std::vector<std::pair<uint32_t, uint32_t>> holes;
    bool has_look_ahead = false;  // some frame carries a look-ahead (the "+ahead" strategies can run)
    // (character, mark) of every teleport and reset, in file order: the root just before (the
    // previous frame) and at the event's frame.
    std::vector<std::pair<uint16_t, EpochMark>> epoch_changes;
};
RecordingScan scan_recording(const std::string& path);

struct ReplayStreamStats {
    size_t frames_read = 0;         // frames read from the file by the replay (its scan not counted)
    size_t most_window_frames = 0;  // most frames held at once around the render time
    size_t most_frames_held = 0;    // the same plus the frames left of the chunk being read
};

// The same replay as run_replay(read_recording(scan.path), cfg), the same figures to the bit,
// streaming the file: it holds the frames from the render time less the longest display delay
// to the newest tick asked for, and one chunk, whatever the recording's length. Crowd mode
// reads the file once more first (the nearest characters over the whole recording). A
// recording whose ticks do not increase is read whole instead.
ReplayResult run_replay(const RecordingScan& scan, const ReplayConfig& cfg, ReplayStreamStats* stats = nullptr);

}  // namespace ks
