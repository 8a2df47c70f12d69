#pragma once
// What kinesync-replay --view records of a replay, and the viewer it writes: per render frame, the
// global joint positions and rotations of the truth and of every strategy, each strategy's error,
// and the timeline's events. The file format (replay.ksview) is docs/VIEWER.md's; the page that
// reads it is programs/testbench/viewer/.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <kinesync/common/math/kform.h>

namespace ks {

// One character's root, truth and strategies, at a render frame (full precision, metres): what
// the replay's JSON reports as "view_roots", for checking the viewer against.
struct ViewRootSample {
    int frame = 0;
    double t = 0;
    int character = 0;                             // index in the recording's characters
    std::vector<std::pair<std::string, vec3>> roots;  // stream name ("truth", a strategy) -> root
};

class ViewCapture {
public:
    // Frames at server times in [from_s, from_s + span_s) are kept (a minute of 6 characters costs
    // about 40 MB here); `streams` = "truth" then the strategies, in render order.
    ViewCapture(std::vector<std::string> streams, std::vector<int> joints_per_character, double from_s, double span_s);

    // A render frame at server time t; false when outside the window (nothing is kept of it).
    bool begin_frame(double t);
    // The same render frames again from the first (another run over the same recording, adding
    // other streams): begin_frame counts frames from the start; past the first pass's last one
    // nothing is kept.
    void begin_second_pass();
    // The pose stream `s` shows for character `c` at the frame begun (positions in metres). error_cm:
    // mean over joints of |shown - true| (0 for the truth).
    void add(size_t s, size_t c, std::span<const vec3> pos_m, std::span<const quat> rot, float error_cm);
    void add_snapshot(double tick_time_s, double arrival_s);

    size_t frames() const { return frames_; }
    double t0() const { return t0_; }
    bool clipped() const { return clipped_; }  // frames after the window were left out
    const std::vector<ViewRootSample>& root_samples() const { return samples_; }
    const std::vector<std::pair<double, double>>& snapshots() const { return snapshots_; }

    // The planes of docs/VIEWER.md (delta-coded), before compression.
    std::vector<uint8_t> planes() const;
    // What stream `s` showed in the first `frames` frames, every character (present flags and
    // poses, quantized as in the planes; errors left out): two replays showed the same there
    // exactly when these are equal.
    std::vector<uint8_t> shown(size_t s, size_t frames) const;

private:
    struct Track {  // one stream's view of one character, quantized, absolute values
        std::vector<uint8_t> present;
        std::vector<float> error_cm;
        std::vector<int32_t> root;  // mm
        std::vector<int16_t> pos;   // mm from the root
        std::vector<int8_t> rot;    // quaternion * 127, w >= 0
        size_t filled = 0;          // frames written
    };
    void fill_to(Track& tr, size_t c, size_t frames) const;

    std::vector<std::string> streams_;
    std::vector<int> joints_;
    double from_s_, span_s_;
    std::vector<Track> tracks_;  // stream-major
    size_t frames_ = 0;  // in the first pass
    size_t cur_ = 0;     // frames begun in this pass (the frame being added to is cur_ - 1)
    bool second_pass_ = false;
    double t0_ = 0, t_ = 0;
    bool in_frame_ = false, clipped_ = false;
    std::vector<ViewRootSample> samples_;
    std::vector<std::pair<double, double>> snapshots_;
};

// Everything written besides the frames (the JSON "meta" of the file, built by the caller).
struct ViewFiles {
    std::string meta_json;
    std::string three_dir;  // where three.min.js and examples/js/controls/OrbitControls.js are
};

// The directory of the viewer: index.html, viewer.js, viewer.css, three.js's two files,
// replay.ksview and replay.ksview.js (the same bytes in base64, for a page opened from disk).
// Throws std::runtime_error naming what failed. Returns replay.ksview's size in bytes.
size_t write_viewer(const std::string& dir, const ViewCapture& capture, const ViewFiles& files);

// The three.js directory: $KINESYNC_THREE_DIR, else the build's default (Debian's libjs-three).
std::string default_three_dir();

}  // namespace ks
