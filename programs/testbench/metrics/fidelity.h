#pragma once
// Motion-fidelity metrics (the evaluation protocol: docs/FIDELITY.md), accumulated one
// render frame of one character at a time (kinesync-replay feeds every strategy's display through one accumulator
// per strategy).
//
// Inputs are in metres (positions) and seconds; outputs in centimetres, degrees and
// milliseconds. Frames of one character must come in time order, one per render frame, without
// gaps (a character may start late); characters may be interleaved freely.
//
// The protocol is written out in docs/FIDELITY.md; the choices it leaves open are
// made here:
//
//  Epoch changes (teleports and resets, add_epoch_change). T = EpochMark::time_s, the true time
//  of the jump (the first frame with t >= T shows the truth after it). A = the time the first
//  snapshot taken at or after T reached the client (news_arrived). A character's frames with
//  T <= t < A are its blackout: they count in blackout_frames and in nothing else (no error, no
//  second difference, no pop). An epoch change whose news never arrives blacks out the rest of
//  the character's frames and is left out of blackout_ms and settle.
//
//  Jump frames. The truth's jump frame is the first frame with t >= T. The display's rendition
//  is the first frame at or after A at which the caller's display_epoch changes to the change's
//  epoch (EpochMark::epoch) or a later one (the strategy switching to it; two changes whose news
//  arrives together get a switch each), or, when the caller passes display_epoch < 0 (unknown)
//  or the mark's epoch is unknown, the first such switch (or frame) at or after A. A switch of display_epoch with no news pending is not a jump frame: a
//  display cannot hide a kink by declaring an epoch of its own.
//
//  Second differences are evaluated two frames late, once the frames around them are known: a
//  frame e counts for pops and accel only if e is not a blackout frame, no jump frame lies in
//  [e-2, e+2], and the frames the difference uses are not blackout frames. The last two frames of
//  each character are not evaluated.
//  - accel_rms_ratio = sqrt(sum |D(e+1) - 2 D(e) + D(e-1)|^2 / sum |G(e+1) - 2 G(e) + G(e-1)|^2)
//    over joints and counted frames e (G is the truth now). 0/0 is 1; x/0 with x > 0 is +inf.
//  - pops: counted frames e where some joint has
//    |D(e) - 2 D(e-1) + D(e-2)| > |Gd(e) - 2 Gd(e-1) + Gd(e-2)| + pop_threshold_m (2 cm), Gd being
//    the truth at the display time (truth_delayed). Frames, not events: a snap is one or two
//    frames depending on how the kink spreads.
//  - present_err_cm = |D(t) - G(t)|, shape_err_cm = |D(t) - Gd(t)|, rot_err_deg (angle of
//    displayed * true^-1, short way) per joint over non-blackout character-frames.
//  - Percentiles are nearest-rank: the value of rank ceil(p/100 * N) in ascending order. Values
//    are kept in a histogram (see ValueHistogram): mean and max are exact; a percentile is
//    interpolated by rank within its bin, so it is within 0.1 % (relative) of the exact value.
//  - display_delay_ms: mean of d over non-blackout character-frames.
//  - teleport_settle_ms: from A to the start of the first run of frames, all with t - d >= T and
//    |displayed_root - R(t - d)| <= settle_radius_m (5 cm), spanning settle_hold_s (first to last
//    frame time), where R is the true root (linear between frames, never across a jump). A change
//    not settled when the data ends or the character's next change comes counts the time from A
//    to its last frame. mean and max over epoch changes with news.
//  - teleport_smear_frames: frames with A <= t < T + smear_window_s (2 s) while the display has
//    not yet "arrived" (come within smear_threshold_m of R(t - d) at a frame with t - d >= T),
//    where the displayed root p is on the way between origin a and destination b: projection
//    u = (p - a).(b - a) / |b - a|^2 strictly inside (0, 1), within smear_threshold_m (25 cm) of the
//    line, more than 25 cm from a, b, R(t), R(t - d) and every true root from a second before T
//    up to t (a late view of where the character truly was, before the change or after it, is not
//    a smear). Blackout frames do not count: before the news no display knows the destination,
//    and what it shows then (the old motion carried on) is the network's share.
//  - blackout_ms: A - T, mean and max over epoch changes with news.
//  - No data: statistics with no samples are NaN (written as null in JSON).
//  - bytes_per_s = sum bytes / sum seconds of add_bytes; bits_per_joint = sum bits / sum joints of
//    add_joint_bits (NaN when nothing was added).
//
// Epoch changes of a character must be added before its frames reach T - 2 frames (simplest: all
// before the first frame), and news before its frames reach A; std::logic_error otherwise.
// render_hz must be the rate at which frames are actually fed.

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <kinesync/common/math/quat.h>
#include <kinesync/common/math/vec3.h>

namespace ks {

struct FidelityConfig {
    double render_hz = 60;
    double pop_threshold_m = 0.02;  // kink beyond the truth's, per frame^2 (72 m/s^2 at 60 Hz)
    double smear_threshold_m = 0.25;
    double settle_radius_m = 0.05;
    double settle_hold_s = 0.1;
    int jump_exclusion_frames = 2;  // frames left out on each side of a jump (truth's and display's)
    double smear_window_s = 2.0;    // smear is looked for this long after an epoch change
};

enum class EpochKind : uint8_t { Teleport = 0, Reset = 1 };

// A true epoch change: the character's root position just before and just after it (metres).
struct EpochMark {
    double time_s;
    vec3 origin_m;
    vec3 destination_m;
    EpochKind kind = EpochKind::Teleport;
    int epoch = -1;  // the epoch the change starts (as display_epoch counts); < 0: unknown
};

struct Stat3 {
    double mean = 0, p95 = 0, max = 0;
    double p50 = 0, p99 = 0;  // filled for present_err_cm only
};

// The frame where present_err_cm.max was reached (the first such frame) and the character's latest
// epoch change at that frame: what the table's note says of the figure.
struct WorstFrame {
    double time_s = std::numeric_limits<double>::quiet_NaN();  // NaN: no frame counted
    int64_t character = -1, joint = -1;
    double snapshot_age_s = std::numeric_limits<double>::quiet_NaN();  // FidelityFrame's
    double change_s = std::numeric_limits<double>::quiet_NaN();  // its T (NaN: no change yet)
    double news_s = std::numeric_limits<double>::quiet_NaN();    // its A
    double jump_m = 0;                                           // |destination - origin|
    int64_t kind = -1;                                           // EpochKind
    int64_t old_place = 0;  // 1: after the news, the display had not yet switched to the change
};

struct FidelityResult {
    Stat3 present_err_cm, shape_err_cm;
    double rot_err_deg_mean = 0, rot_err_deg_p95 = 0;
    double display_delay_ms = 0;
    double accel_rms_ratio = 0;
    int64_t pops = 0;
    int64_t teleport_smear_frames = 0;
    double teleport_settle_ms_mean = 0, teleport_settle_ms_max = 0;
    double bytes_per_s = 0;
    double bits_per_joint = 0;
    int64_t blackout_frames = 0;  // character-frames left out as blackout
    double blackout_ms_mean = 0, blackout_ms_max = 0;
    int64_t frames = 0;         // character-frames added, blackout included
    int64_t teleports = 0;      // epoch changes counted in the settle statistics
    int64_t epoch_changes = 0;  // added (teleports and resets)
    WorstFrame worst;           // where present_err_cm.max was reached
};

// Non-negative values in log-linear bins: 1024 bins per octave over [2^-20, 2^24), one bin below
// (zero included) and one above (also +inf and NaN, which count as +inf). Exact count, sum and
// max; each bin keeps its count, smallest and largest value; percentiles as described above.
class ValueHistogram {
public:
    void add(double v);
    int64_t count() const { return n_; }
    double mean() const;
    double max() const;
    // Nearest rank: rank ceil(num/den * N) (1-based). NaN when empty.
    double percentile(int64_t num, int64_t den) const;

private:
    static constexpr int kSubBits = 10, kSub = 1 << kSubBits, kMinExp = -20, kMaxExp = 24;
    static constexpr int kBins = 2 + (kMaxExp - kMinExp) * kSub;
    static int bin_of(double v);
    std::vector<int64_t> counts_;
    std::vector<double> lo_, hi_;
    int64_t n_ = 0;
    double total_ = 0, max_ = 0;
};

// One render frame of one character, as the caller passes it. Positions in metres.
struct FidelityFrame {
    double time_s = 0;                    // true server time of the frame
    std::span<const vec3> truth_now;      // G(t), global joint positions
    std::span<const vec3> truth_delayed;  // G(t - d)
    std::span<const vec3> displayed;      // D(t)
    std::span<const quat> truth_rot, displayed_rot;
    double display_delay_s = 0;  // d
    int display_epoch = -1;      // epoch the display shows (any counter that changes when it switches); < 0: unknown
    // t less the server time of the newest snapshot of the character the client has (NaN: not
    // known); only reported with the worst frame.
    double snapshot_age_s = std::numeric_limits<double>::quiet_NaN();
};

class FidelityAccumulator {
public:
    explicit FidelityAccumulator(FidelityConfig cfg = {});

    // One render frame of one character (see the header comment); joint 0 is the root. All spans
    // have the character's joint count (fixed per character); std::invalid_argument on mismatched
    // sizes, non-finite time or delay, or frames out of time order (equal times included).
    void add_frame(int character, const FidelityFrame& f);
    void add_epoch_change(int character, const EpochMark& m);
    // A snapshot of `character` taken at server time snapshot_time_s reached the client at
    // arrival_time_s: news of every epoch change with T <= snapshot_time_s not yet known.
    void news_arrived(int character, double snapshot_time_s, double arrival_time_s);
    void add_bytes(double bytes, double seconds);
    void add_joint_bits(double bits, double joints);

    FidelityResult result() const;
    // Per render frame: (time s, mean present error in cm over the joints of every character
    // shown outside a blackout at that frame), in time order. Frames of different characters are
    // matched by render frame index round(t * render_hz); the time is the first one seen.
    const std::vector<std::pair<double, double>>& error_series() const { return series_; }
    // Times of every epoch change added (all characters), ascending, duplicates kept once.
    std::vector<double> epoch_times() const;
    // Blackout spans [T, A) of every epoch change (A = the character's last frame when the news
    // never came), in the order added.
    std::vector<std::pair<double, double>> blackout_spans() const;
    // Times of the frames counted as pops, ascending per character.
    const std::vector<double>& pop_times() const { return pop_times_; }
    const std::vector<int>& pop_characters() const { return pop_characters_; }  // the character of each pop

private:
    struct Epoch {
        EpochMark mark;
        double news = kNever;      // A
        bool reached = false;      // a frame with t >= T has been seen
        bool rendered = false;     // the display's rendition frame has been seen
        int64_t frames = 0;        // frames from T on, before the next change
        double last_t = 0;
        bool arrived = false, window_expired = false;  // smear bookkeeping
        bool settled = false, run = false;
        double run_start = 0, settle_s = 0;
        std::vector<vec3> path;    // true root from a second before T on, while smear is looked for
    };
    struct Slot {  // one frame kept for the delayed second differences
        double t = 0;
        bool blackout = false, jump = false;
        std::vector<vec3> d, g, gd;
    };
    struct Character {
        int id = -1;
        int joints = -1;
        int64_t frames = 0;
        double last_t = 0;
        int last_display_epoch = -1;
        Slot ring[5];  // frame i in ring[i % 5]
        std::deque<std::pair<double, vec3>> roots;  // (time, true root), recent history
        std::vector<Epoch> epochs;                  // by time
        size_t next = 0;                            // first epoch change not yet reached by a frame
        size_t open = 0;                            // first reached change not yet rendered
    };
    static constexpr double kNever = 1e300;

    vec3 reference_root(const Character& c, double t) const;
    void close_epoch(Epoch& e);
    void evaluate(Character& c, int64_t e);  // second differences centred on frame e
    Character& checked_character(int character, const FidelityFrame& f);
    bool advance_epochs(Character& c, double t, int display_epoch, bool& jump);  // true: in blackout
    bool smeared(const Epoch& ep, vec3 shown_root, vec3 true_root, double to_ref) const;
    void follow_epoch(Character& c, double t, double d, vec3 true_root, vec3 shown_root, vec3 ref);
    void add_to_series(double t, double frame_sum, size_t n);
    void note_worst(const Character& c, const FidelityFrame& f, size_t joint, double err_cm);

    FidelityConfig cfg_;
    std::map<int, Character> chars_;
    ValueHistogram present_, shape_, rot_;
    double delay_sum_ = 0;
    int64_t frames_ = 0, counted_frames_ = 0, blackout_frames_ = 0;
    double accel_d_ = 0, accel_g_ = 0;
    int64_t accel_samples_ = 0;
    int64_t pops_ = 0, smear_ = 0;
    double settle_sum_ = 0, settle_max_ = 0;  // over closed epoch changes
    int64_t settle_n_ = 0;
    double bytes_ = 0, seconds_ = 0, bits_ = 0, joints_ = 0;
    double worst_err_cm_ = -1;
    WorstFrame worst_;
    std::vector<double> pop_times_;
    std::vector<int> pop_characters_;
    std::vector<std::pair<double, double>> series_;
    std::vector<int64_t> series_index_;
    std::vector<double> series_sum_;
    std::vector<int64_t> series_n_;
};

}  // namespace ks
