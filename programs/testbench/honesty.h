#pragma once
// The look-ahead's honesty as an A/B check (docs/FIDELITY.md, "Honesty"): two recordings of one
// server, identical up to a decision at tick T and different after it. A look-ahead computed at a
// tick before T from that tick's state alone is bit for bit the same in both, those whose horizon
// reaches past T included; replayed over the same simulated network, every strategy shows the
// same poses in both until the snapshot of T can arrive. A look-ahead that knows of T before T
// (peeks at the future, or is told of the decision) fails one check or both. The server's
// recording holds what went through StreamServer::set_look_ahead, so the check is the same for
// the demo's look-ahead and for one a game supplies (`kinesync-replay --honesty A B --decision-tick T`).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kinesync/common/record/recording.h>

namespace ks {

class ViewCapture;

struct HonestyOptions {
    std::string profile = "broadband";  // the simulated network both replays cross
    uint64_t seed = 3;
};

// Entries computed before T: compared, with a horizon reaching T or past it, not bit-identical.
struct EntryCheck {
    size_t compared = 0, reaching = 0, differing = 0;
    uint32_t first_differing_tick = UINT32_MAX;
};
EntryCheck compare_entries(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t decision_tick);

// What every strategy ("+ahead" ones included) showed in a replay of one recording, in its first
// `span_s` seconds (what compare_shown needs: up to the decision's snapshot's arrival). Poses as
// the viewer keeps them (positions to the millimetre, rotations to 1/127): the entry check is the
// bit-exact one.
struct ShownReplay {
    std::vector<std::string> streams;  // "truth", then the strategies in the replay's order
    std::unique_ptr<ViewCapture> view;
    ShownReplay();
    ShownReplay(ShownReplay&&) noexcept;
    ~ShownReplay();
};
ShownReplay replay_shown(const RecordingReadResult& rec, const HonestyOptions& options = {}, double span_s = 1e9);

// Render frames before the snapshot of T (or a later one) first arrives in either replay; the
// strategies compared, and those that showed something else in those frames.
struct ShownCheck {
    size_t frames = 0, strategies = 0, differing = 0;
    std::vector<std::string> differing_names;
};
ShownCheck compare_shown(const ShownReplay& a, const ShownReplay& b, uint32_t decision_tick, float tick_hz);

// The first tick whose truth (a pose or an epoch of any character) differs, or where the shorter
// recording ends (UINT32_MAX: none, and the same length).
uint32_t first_truth_difference(const RecordingReadResult& a, const RecordingReadResult& b);

struct HonestyReport {
    uint32_t decision_tick = 0, truth_parts_at = UINT32_MAX;
    EntryCheck entries;
    ShownCheck shown;
    bool honest() const { return entries.differing == 0 && shown.differing == 0; }
};
// Both checks; refuses (std::invalid_argument, naming it) a pair whose truths differ before T,
// whose recordings hold different characters, or in which no look-ahead entry computed before T
// reaches T (nothing to judge: no look-ahead, or T outside the recordings).
HonestyReport check_honesty(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t decision_tick,
                            const HonestyOptions& options = {});
std::string honesty_summary(const HonestyReport& r);

}  // namespace ks
