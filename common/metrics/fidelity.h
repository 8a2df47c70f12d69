#pragma once
// Motion-fidelity metrics of ../shared/EVALUATION.md, accumulated one render frame of one
// character at a time (kinesync-replay feeds every strategy's display through one accumulator
// per strategy).
//
// Inputs are in metres (positions) and seconds; outputs in centimetres, degrees and
// milliseconds. Frames of one character must come in time order, one per render frame, without
// gaps (a character may start late); characters may be interleaved freely.
//
// Definitions (where EVALUATION.md leaves room, the choice made here is stated):
//
//  - present_err_cm = |D(t) - G(t)| per joint and character-frame; shape_err_cm = |D(t) - G(t-d)|
//    with G(t-d) as the caller passes it (truth_delayed). mean, p95, max over every joint of every
//    character-frame.
//  - rot_err_deg: the angle of displayed * true^-1 (global rotations), short way, in [0, 180].
//  - Percentiles are nearest-rank: the value of rank ceil(p/100 * N) in ascending order (integer
//    arithmetic, no rounding ambiguity). Values are kept in a histogram (see ValueHistogram): mean
//    and max are exact; a percentile is interpolated by rank between the smallest and largest
//    value of the histogram bin holding that rank, so it is within 0.1 % (relative) of the exact
//    nearest-rank value, and exact when it is the bin's smallest or largest value or the bin's
//    values are equal (e.g. a constant error). Memory is fixed (~1 MB per metric, allocated at
//    the first value), whatever the duration.
//  - display_delay_ms: mean of d over character-frames.
//  - frames: character-frames added (add_frame calls); pops and smear frames also count
//    character-frames (two characters popping in the same render frame are two pops).
//
//  Teleports. T = TeleportMark::time_s, the true time of the jump (the first frame with t >= T
//  shows the truth after it). The display's own rendition of a teleport comes later: at T + d for
//  a delayed strategy, and a network latency later for an extrapolating one (d = 0), so "frames
//  near a true teleport" must cover the display's jump too, or every strategy would be charged a
//  pop and a huge second difference for showing a teleport correctly. Hence:
//  - Reference root at a frame: R(t - d), the true root at the strategy's display time (true_root
//    history, linear between frames, never across a teleport; R(t) when d = 0). What a delayed
//    display legitimately shows.
//  - The display has "arrived" at the first frame t >= T with t - d >= T and
//    |displayed_root - R(t - d)| <= smear_threshold_m (25 cm).
//  - A frame is in the teleport window when T - E/render_hz <= t (E = teleport_exclusion_frames)
//    and it is before or at most E frames after the arrival frame. If the display has not arrived
//    smear_window_s after T, the window closes there (a display that shows the teleport later
//    than that pops like anything else).
//  - accel_rms_ratio = sqrt(sum |D(j+1) - 2 D(j) + D(j-1)|^2 / sum |G(j+1) - 2 G(j) + G(j-1)|^2),
//    both sums over the same joints and centre frames j: those where frames j-1, j, j+1 exist for
//    the character and neither j nor j+1 is in a teleport window (so with E = 0 exactly the
//    second differences that contain a jump are left out; E adds E frames on each side). 0/0 is
//    1 (a still truth shown still); x/0 with x > 0 is +inf.
//  - pops: character-frames j, not in a teleport window, with a previous frame, where some joint
//    has |(D(j) - D(j-1)) - (G(j) - G(j-1))| > pop_threshold_m (5 cm). As written, this counts
//    render frames, not events: a displayed jump that persists is one pop; a one-frame spike out
//    and back is two (the frame it jumps out and the frame it jumps back both have a wrong step).
//    Also as written, the true step is G(t)'s even for a delayed strategy, so a delay d adds the
//    truth's change of step over d (|G''| d / render_hz: 2.2 cm for 13 m/s^2 at d = 100 ms, 60 Hz).
//  - teleport_smear_frames: character-frames t with T <= t < T + smear_window_s (2 s) while the
//    display is in transit (before it has arrived, see above; a settled display has arrived) and
//    before the character's next teleport, where the displayed root p is
//    "on the way": with a = origin, b = destination, its projection parameter
//    u = (p - a).(b - a) / |b - a|^2 is strictly inside (0, 1), its distance to the segment line is
//    <= smear_threshold_m (25 cm), it is more than smear_threshold_m from both a and b, and it is
//    also more than smear_threshold_m from R(t), from R(t - d) and from every true root position
//    of the second before T (so a display showing where the truth really was - a late snapshot of
//    a character walking across the line just before the teleport, 26 cm past a - is not a
//    smear; the letter of EVALUATION.md counted those). Still as written, a display that lags
//    more than 25 cm behind a character running back along the teleport's path, and so never
//    arrives, counts.
//  - teleport_settle_ms: from T to the start of the first run of consecutive frames, all with
//    t - d >= T and |displayed_root - R(t - d)| <= settle_radius_m (5 cm), spanning at least
//    settle_hold_s (first to last frame time; 7 frames at 60 Hz for 100 ms). "The truth" is the
//    truth at the display time, so a delay d counts in full (a pure delay settles in d), but a
//    display still showing the pre-teleport truth never counts as settled. A teleport that has not
//    settled when the data ends (or when the character's next teleport comes) counts the time
//    from T to its last frame. A teleport with no frame at or after its time (or before the next
//    teleport) is not counted. mean and max over teleports of all characters.
//  - No data: statistics with no samples are NaN (written as null in JSON), e.g. settle with no
//    teleports, percentiles with no frames.
//  - bytes_per_s = sum bytes / sum seconds of add_bytes; bits_per_joint = sum bits / sum joints of
//    add_joint_bits (NaN when nothing was added).
//
// Teleports of a character must be added before its frames reach T - E/render_hz (simplest: add
// them all before the first frame); add_teleport throws std::logic_error otherwise. render_hz
// must be the rate at which frames are actually fed.

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "common/math/quat.h"
#include "common/math/vec3.h"

namespace ks {

struct FidelityConfig {
    double render_hz = 60;
    double pop_threshold_m = 0.05;
    double smear_threshold_m = 0.25;
    double settle_radius_m = 0.05;
    double settle_hold_s = 0.1;
    int teleport_exclusion_frames = 2;
    double smear_window_s = 2.0;  // smear is looked for this long after a teleport (and the pop/accel window ends)
};

// A true teleport: the character's root position just before and just after it (metres).
struct TeleportMark {
    double time_s;
    vec3 origin_m;
    vec3 destination_m;
};

struct Stat3 {
    double mean = 0, p95 = 0, max = 0;
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
    int64_t frames = 0;     // character-frames
    int64_t teleports = 0;  // teleports counted in the settle statistics
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

class FidelityAccumulator {
public:
    explicit FidelityAccumulator(FidelityConfig cfg = {});

    // One render frame of one character (see the header comment). All six spans have the
    // character's joint count (fixed per character); std::invalid_argument on mismatched sizes,
    // non-finite time or delay, or frames out of time order (equal times included).
    void add_frame(int character, double time_s, std::span<const vec3> truth_now, std::span<const vec3> truth_delayed,
                   std::span<const vec3> displayed, std::span<const quat> truth_rot, std::span<const quat> displayed_rot,
                   vec3 true_root, vec3 displayed_root, double display_delay_s);
    void add_teleport(int character, const TeleportMark& t);
    void add_bytes(double bytes, double seconds);
    void add_joint_bits(double bits, double joints);

    FidelityResult result() const;
    // Per render frame: (time s, mean present error in cm over the joints of every character
    // shown at that frame), in time order. Frames of different characters are matched by render
    // frame index round(t * render_hz); the time is the first one seen for that index.
    const std::vector<std::pair<double, double>>& error_series() const { return series_; }
    // Times of every teleport added (all characters), ascending, duplicates kept once.
    std::vector<double> teleport_times() const;

private:
    struct Teleport {
        TeleportMark mark;
        int64_t frames = 0;  // frames seen in its window (t >= T, before the next teleport)
        double last_t = 0;
        bool arrived = false;
        int since_arrival = 0;
        bool window_expired = false;
        bool settled = false;
        bool run = false;
        double run_start = 0;
        double settle_s = 0;
        std::vector<vec3> before;  // the true root over the second before T
    };
    struct Character {
        int joints = -1;
        int64_t frames = 0;
        double last_t = 0;
        std::vector<vec3> d1, g1, d2, g2;  // displayed / true positions one and two frames back
        bool excl1 = false;                // previous frame in a teleport window
        std::deque<std::pair<double, vec3>> roots;  // (time, true root), recent history
        std::vector<Teleport> teleports;            // by time
        size_t next = 0;                            // first teleport not yet reached by a frame
    };

    vec3 reference_root(const Character& c, double t) const;
    void close_teleport(Teleport& tp);

    FidelityConfig cfg_;
    std::map<int, Character> chars_;
    ValueHistogram present_, shape_, rot_;
    double delay_sum_ = 0;
    int64_t frames_ = 0;
    double accel_d_ = 0, accel_g_ = 0;
    int64_t accel_samples_ = 0;
    int64_t pops_ = 0, smear_ = 0;
    double settle_sum_ = 0, settle_max_ = 0;  // over closed teleports
    int64_t settle_n_ = 0;
    double bytes_ = 0, seconds_ = 0, bits_ = 0, joints_ = 0;
    std::vector<std::pair<double, double>> series_;
    std::vector<int64_t> series_index_;
    std::vector<double> series_sum_;
    std::vector<int64_t> series_n_;
};

}  // namespace ks
