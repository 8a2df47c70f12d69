#include "programs/testbench/honesty.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "programs/testbench/replay.h"
#include "programs/testbench/view_capture.h"

namespace ks {

namespace {

bool same_bits(const Pose& a, const Pose& b) {
    auto eq = [](const auto& x, const auto& y) {
        return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof x[0]) == 0);
    };
    return eq(a.pos, b.pos) && eq(a.rot, b.rot) && eq(a.scl, b.scl) && eq(a.vel, b.vel) && eq(a.ang, b.ang) && eq(a.svl, b.svl);
}

void check_same_cast(const RecordingReadResult& a, const RecordingReadResult& b) {
    if (a.header.characters.size() != b.header.characters.size() || a.header.tick_hz != b.header.tick_hz)
        throw std::invalid_argument("honesty: the two recordings hold different characters or tick rates");
    for (size_t c = 0; c < a.header.characters.size(); ++c)
        if (a.header.characters[c].id != b.header.characters[c].id || a.header.characters[c].skeleton != b.header.characters[c].skeleton)
            throw std::invalid_argument("honesty: character " + std::to_string(c) + " differs between the recordings");
}

}  // namespace

uint32_t first_truth_difference(const RecordingReadResult& a, const RecordingReadResult& b) {
    const size_t common = std::min(a.frames.size(), b.frames.size());
    for (size_t f = 0; f < common; ++f) {
        if (a.frames[f].tick != b.frames[f].tick) return std::min(a.frames[f].tick, b.frames[f].tick);
        if (a.frames[f].characters.size() != b.frames[f].characters.size()) return a.frames[f].tick;
        for (size_t c = 0; c < a.frames[f].characters.size(); ++c) {
            const RecordedCharacter& x = a.frames[f].characters[c];
            const RecordedCharacter& y = b.frames[f].characters[c];
            if (x.id != y.id || x.epoch != y.epoch || !same_bits(x.pose, y.pose)) return a.frames[f].tick;
        }
    }
    if (a.frames.size() == b.frames.size()) return UINT32_MAX;
    return common == 0 ? 0 : (a.frames.size() > common ? a : b).frames[common].tick;  // the longer one's next tick
}

EntryCheck compare_entries(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t decision_tick) {
    EntryCheck k;
    const double hz = double(a.header.tick_hz);
    for (size_t f = 0; f < std::min(a.frames.size(), b.frames.size()) && a.frames[f].tick < decision_tick; ++f)
        for (size_t c = 0; c < std::min(a.frames[f].characters.size(), b.frames[f].characters.size()); ++c) {
            const RecordedCharacter& x = a.frames[f].characters[c];
            const RecordedCharacter& y = b.frames[f].characters[c];
            if (x.ahead_s == 0.0f && y.ahead_s == 0.0f) continue;
            ++k.compared;
            const double reach = double(a.frames[f].tick) + double(std::max(x.ahead_s, y.ahead_s)) * hz;
            k.reaching += reach >= double(decision_tick) - 1e-6;
            const bool differs = std::memcmp(&x.ahead_s, &y.ahead_s, sizeof x.ahead_s) != 0 || x.ahead_plan != y.ahead_plan ||
                                 !same_bits(x.ahead, y.ahead);
            if (!differs) continue;
            ++k.differing;
            k.first_differing_tick = std::min(k.first_differing_tick, a.frames[f].tick);
        }
    return k;
}

ShownReplay::ShownReplay() = default;
ShownReplay::ShownReplay(ShownReplay&&) noexcept = default;
ShownReplay::~ShownReplay() = default;

ShownReplay replay_shown(const RecordingReadResult& rec, const HonestyOptions& options, double span_s) {
    ReplayConfig cfg;
    cfg.profile = net_profile(options.profile);
    cfg.seed = options.seed;
    cfg.strategies = all_strategies();
    cfg.strategies.insert(cfg.strategies.end(), ahead_strategies().begin(), ahead_strategies().end());
    ShownReplay out;
    out.streams.push_back("truth");
    for (bool ahead : {false, true})  // the replay's order: the present strategies' run, then the +ahead one's
        for (Strategy s : cfg.strategies)
            if (uses_look_ahead(s) == ahead) out.streams.push_back(strategy_name(s));
    std::vector<int> joints;
    for (const auto& c : rec.header.characters) joints.push_back(rec.header.skeletons[c.skeleton].size());
    double span = 1.0;
    if (!rec.frames.empty()) span += double(rec.frames.back().tick) / double(rec.header.tick_hz);
    out.view = std::make_unique<ViewCapture>(out.streams, joints, 0.0, std::min(span, span_s));
    cfg.view = out.view.get();
    run_replay(rec, cfg);
    return out;
}

ShownCheck compare_shown(const ShownReplay& a, const ShownReplay& b, uint32_t decision_tick, float tick_hz) {
    if (a.streams != b.streams) throw std::invalid_argument("honesty: the two replays showed different strategies");
    // The snapshot of tick T is sent at T / tick_hz; the earliest arrival of it or a later one.
    double arrival = 1e300;
    for (const ShownReplay* r : {&a, &b})
        for (const auto& [tick_s, at] : r->view->snapshots())
            if (tick_s >= double(decision_tick) / double(tick_hz) - 1e-9) arrival = std::min(arrival, at);
    ShownCheck k;
    const double frame_s = 1.0 / 60.0;  // the replay renders at 60 Hz
    while (k.frames < std::min(a.view->frames(), b.view->frames()) && a.view->t0() + double(k.frames) * frame_s < arrival - 1e-9) ++k.frames;
    for (size_t s = 1; s < a.streams.size(); ++s) {
        ++k.strategies;
        if (a.view->shown(s, k.frames) == b.view->shown(s, k.frames)) continue;
        ++k.differing;
        k.differing_names.push_back(a.streams[s]);
    }
    return k;
}

HonestyReport check_honesty(const RecordingReadResult& a, const RecordingReadResult& b, uint32_t decision_tick,
                            const HonestyOptions& options) {
    check_same_cast(a, b);
    HonestyReport r;
    r.decision_tick = decision_tick;
    r.truth_parts_at = first_truth_difference(a, b);
    if (r.truth_parts_at < decision_tick)
        throw std::invalid_argument("honesty: the runs' truths part at tick " + std::to_string(r.truth_parts_at) +
                                    ", before the decision tick " + std::to_string(decision_tick));
    r.entries = compare_entries(a, b, decision_tick);
    if (r.entries.reaching == 0)
        throw std::invalid_argument("honesty: no look-ahead entry computed before tick " + std::to_string(decision_tick) +
                                    " reaches it (the recordings hold no look-ahead there): nothing to judge");
    // The replays are compared until the decision's snapshot arrives: a few seconds past it suffice.
    const double span = double(decision_tick) / double(a.header.tick_hz) + 5.0;
    r.shown = compare_shown(replay_shown(a, options, span), replay_shown(b, options, span), decision_tick, a.header.tick_hz);
    return r;
}

std::string honesty_summary(const HonestyReport& r) {
    std::string s = "decision at tick " + std::to_string(r.decision_tick) + " (truths part at " +
                    (r.truth_parts_at == UINT32_MAX ? std::string("no tick") : std::to_string(r.truth_parts_at)) + "): " +
                    std::to_string(r.entries.compared) + " look-ahead entries before it (" + std::to_string(r.entries.reaching) +
                    " reaching it), " + std::to_string(r.entries.differing) + " differ";
    if (r.entries.differing) s += " (the first computed at tick " + std::to_string(r.entries.first_differing_tick) + ")";
    s += "; " + std::to_string(r.shown.frames) + " render frames before its snapshot arrives, " + std::to_string(r.shown.differing) +
         " of " + std::to_string(r.shown.strategies) + " strategies show something else there";
    for (size_t i = 0; i < r.shown.differing_names.size(); ++i) s += (i ? ", " : " (") + r.shown.differing_names[i];
    if (!r.shown.differing_names.empty()) s += ")";
    s += r.honest() ? ": honest" : ": NOT honest";
    return s;
}

}  // namespace ks
