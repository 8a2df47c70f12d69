#include "programs/testbench/metrics/fidelity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ks {

namespace {

constexpr double kTimeTol = 1e-6;  // s; frames are milliseconds apart, clocks agree far better
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct d3 {
    double x, y, z;
};
inline d3 D(vec3 v) { return {double(v.x), double(v.y), double(v.z)}; }
inline d3 operator-(d3 a, d3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline d3 operator+(d3 a, d3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline d3 operator*(d3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double dot(d3 a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double norm(d3 a) { return std::sqrt(dot(a, a)); }
inline double dist(vec3 a, vec3 b) { return norm(D(a) - D(b)); }

// Angle (degrees, [0, 180]) of a * b^-1, computed in double; needs no normalisation.
double rotation_angle_deg(quat a, quat b) {
    const double aw = a.w, ax = a.x, ay = a.y, az = a.z;
    const double bw = b.w, bx = -double(b.x), by = -double(b.y), bz = -double(b.z);
    const double w = aw * bw - ax * bx - ay * by - az * bz;
    const double x = aw * bx + ax * bw + ay * bz - az * by;
    const double y = aw * by - ax * bz + ay * bw + az * bx;
    const double z = aw * bz + ax * by - ay * bx + az * bw;
    const double v = std::sqrt(x * x + y * y + z * z);
    return 2.0 * std::atan2(v, std::fabs(w)) * (180.0 / 3.14159265358979323846);
}

}  // namespace

// ---- ValueHistogram ----

int ValueHistogram::bin_of(double v) {
    if (!(v < std::ldexp(1.0, kMaxExp))) return kBins - 1;  // also +inf, NaN
    if (v < std::ldexp(1.0, kMinExp)) return 0;
    int e = 0;
    const double m = std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
    int sub = int((m - 0.5) * (2.0 * kSub));
    sub = std::clamp(sub, 0, kSub - 1);
    return 1 + (e - kMinExp - 1) * kSub + sub;
}

void ValueHistogram::add(double v) {
    if (std::isnan(v)) v = kInf;
    if (v < 0) v = 0;
    if (counts_.empty()) {
        counts_.assign(kBins, 0);
        lo_.assign(kBins, 0.0);
        hi_.assign(kBins, 0.0);
    }
    const int b = bin_of(v);
    if (counts_[b] == 0) {
        lo_[b] = hi_[b] = v;
    } else {
        lo_[b] = std::min(lo_[b], v);
        hi_[b] = std::max(hi_[b], v);
    }
    ++counts_[b];
    max_ = n_ == 0 ? v : std::max(max_, v);
    total_ += v;
    ++n_;
}

double ValueHistogram::mean() const { return n_ ? total_ / double(n_) : kNaN; }
double ValueHistogram::max() const { return n_ ? max_ : kNaN; }

double ValueHistogram::percentile(int64_t num, int64_t den) const {
    if (n_ == 0) return kNaN;
    int64_t rank = (num * n_ + den - 1) / den;  // ceil(num/den * n), 1-based
    rank = std::clamp<int64_t>(rank, 1, n_);
    int64_t below = 0;
    for (int b = 0; b < kBins; ++b) {
        const int64_t c = counts_[b];
        if (below + c < rank) {
            below += c;
            continue;
        }
        // The rank's value lies in [lo, hi] of this bin: interpolate by rank within the bin
        // (exact at the bin's smallest and largest value, and when all its values are equal).
        if (c == 1 || lo_[b] == hi_[b]) return lo_[b];
        const double f = double(rank - below - 1) / double(c - 1);
        return lo_[b] + (hi_[b] - lo_[b]) * f;
    }
    return max_;
}

// ---- FidelityAccumulator ----

FidelityAccumulator::FidelityAccumulator(FidelityConfig cfg) : cfg_(cfg) {
    if (!(cfg_.render_hz > 0) || !std::isfinite(cfg_.render_hz)) throw std::invalid_argument("FidelityConfig: render_hz must be > 0");
    if (!(cfg_.pop_threshold_m >= 0) || !(cfg_.smear_threshold_m >= 0) || !(cfg_.settle_radius_m >= 0) ||
        !(cfg_.settle_hold_s >= 0) || !(cfg_.smear_window_s > 0) || cfg_.jump_exclusion_frames < 0 ||
        cfg_.jump_exclusion_frames > 2)
        throw std::invalid_argument("FidelityConfig: thresholds, radius and hold must be >= 0, window > 0, exclusion 0..2 frames");
}

void FidelityAccumulator::add_epoch_change(int character, const EpochMark& m) {
    if (!std::isfinite(m.time_s) || !isfinite(m.origin_m) || !isfinite(m.destination_m))
        throw std::invalid_argument("add_epoch_change: non-finite mark");
    Character& c = chars_[character];
    c.id = character;
    const double pre = double(cfg_.jump_exclusion_frames) / cfg_.render_hz;
    if (c.frames > 0 && c.last_t >= m.time_s - pre - kTimeTol)
        throw std::logic_error("add_epoch_change: character " + std::to_string(character) + "'s change at " +
                               std::to_string(m.time_s) + " s added after its frames reached " + std::to_string(c.last_t) +
                               " s; add epoch changes before the frames around them");
    const auto it = std::upper_bound(c.epochs.begin(), c.epochs.end(), m.time_s,
                                     [](double v, const Epoch& e) { return v < e.mark.time_s; });
    Epoch e;
    e.mark = m;
    c.epochs.insert(it, e);
}

void FidelityAccumulator::news_arrived(int character, double snapshot_time_s, double arrival_time_s) {
    if (!std::isfinite(snapshot_time_s) || !std::isfinite(arrival_time_s))
        throw std::invalid_argument("news_arrived: non-finite time");
    Character& c = chars_[character];
    c.id = character;
    for (Epoch& e : c.epochs) {
        if (e.mark.time_s > snapshot_time_s + kTimeTol) break;
        if (e.news != kNever) continue;
        if (c.frames > 0 && c.last_t >= arrival_time_s + kTimeTol)
            throw std::logic_error("news_arrived: character " + std::to_string(character) + "'s news at " +
                                   std::to_string(arrival_time_s) + " s given after its frames reached " +
                                   std::to_string(c.last_t) + " s");
        e.news = std::max(arrival_time_s, e.mark.time_s);  // a snapshot cannot arrive before it was taken
    }
}

void FidelityAccumulator::add_bytes(double bytes, double seconds) {
    bytes_ += bytes;
    seconds_ += seconds;
}

void FidelityAccumulator::add_joint_bits(double bits, double joints) {
    bits_ += bits;
    joints_ += joints;
}

vec3 FidelityAccumulator::reference_root(const Character& c, double t) const {
    const auto& h = c.roots;  // never empty here; ascending times
    if (t >= h.back().first - kTimeTol) return h.back().second;
    if (t <= h.front().first + kTimeTol) return h.front().second;
    const auto it = std::lower_bound(h.begin(), h.end(), t - kTimeTol,
                                     [](const std::pair<double, vec3>& e, double v) { return e.first < v; });
    if (std::fabs(it->first - t) <= kTimeTol) return it->second;
    const auto prev = it - 1;
    const double ta = prev->first, tb = it->first;
    // Never interpolate across a jump: take the side t is on.
    for (const Epoch& e : c.epochs) {
        const double T = e.mark.time_s;
        if (T > ta + kTimeTol && T <= tb + kTimeTol) return t >= T - kTimeTol ? it->second : prev->second;
    }
    const double f = (t - ta) / (tb - ta);
    const d3 a = D(prev->second), b = D(it->second);
    const d3 r = a + (b - a) * f;
    return vec3(float(r.x), float(r.y), float(r.z));
}

void FidelityAccumulator::close_epoch(Epoch& e) {
    if (e.news == kNever || e.last_t < e.news - kTimeTol) return;  // no news, or no frame after it
    const double s = e.settled ? e.settle_s : e.last_t - e.news;
    settle_sum_ += s;
    settle_max_ = settle_n_ == 0 ? s : std::max(settle_max_, s);
    ++settle_n_;
}

void FidelityAccumulator::evaluate(Character& c, int64_t e) {
    // Frame e is evaluated once frame e + 2 exists: jump frames in [e - 2, e + 2] are known.
    const int E = cfg_.jump_exclusion_frames;
    auto slot = [&](int64_t i) -> const Slot& { return c.ring[size_t(i % 5)]; };
    const Slot& s = slot(e);
    if (s.blackout) return;
    for (int64_t i = std::max<int64_t>(0, e - E); i <= e + E; ++i)
        if (slot(i).jump) return;
    const size_t n = size_t(c.joints);
    // Pop: the display's backward second difference against the delayed truth's.
    if (e >= 2 && !slot(e - 1).blackout && !slot(e - 2).blackout) {
        const Slot &a = slot(e - 2), &b = slot(e - 1);
        for (size_t j = 0; j < n; ++j) {
            const double kd = norm(D(s.d[j]) - D(b.d[j]) * 2.0 + D(a.d[j]));
            const double kg = norm(D(s.gd[j]) - D(b.gd[j]) * 2.0 + D(a.gd[j]));
            if (kd > kg + cfg_.pop_threshold_m) {
                ++pops_;
                pop_times_.push_back(s.t);
                pop_characters_.push_back(c.id);
                break;
            }
        }
    }
    // Accel: centred second differences of display and truth over the same frames.
    if (e >= 1 && !slot(e - 1).blackout && !slot(e + 1).blackout) {
        const Slot &a = slot(e - 1), &b = slot(e + 1);
        for (size_t j = 0; j < n; ++j) {
            const d3 ad = D(b.d[j]) - D(s.d[j]) * 2.0 + D(a.d[j]);
            const d3 ag = D(b.g[j]) - D(s.g[j]) * 2.0 + D(a.g[j]);
            accel_d_ += dot(ad, ad);
            accel_g_ += dot(ag, ag);
        }
        ++accel_samples_;
    }
}

FidelityAccumulator::Character& FidelityAccumulator::checked_character(int character, const FidelityFrame& f) {
    const size_t n = f.truth_now.size();
    if (n == 0 || f.truth_delayed.size() != n || f.displayed.size() != n || f.truth_rot.size() != n ||
        f.displayed_rot.size() != n)
        throw std::invalid_argument("add_frame: spans empty or of different sizes");
    if (!std::isfinite(f.time_s) || !std::isfinite(f.display_delay_s)) throw std::invalid_argument("add_frame: non-finite time or delay");
    Character& c = chars_[character];
    c.id = character;
    if (c.joints < 0) c.joints = int(n);
    if (size_t(c.joints) != n)
        throw std::invalid_argument("add_frame: character " + std::to_string(character) + " changed joint count");
    if (c.frames > 0 && !(f.time_s > c.last_t))
        throw std::invalid_argument("add_frame: character " + std::to_string(character) + "'s frames out of time order");
    return c;
}

bool FidelityAccumulator::advance_epochs(Character& c, double t, int display_epoch, bool& jump) {
    // Epoch changes reached by this frame: each closes the one before; the first frame after T is
    // the truth's jump frame.
    jump = false;
    while (c.next < c.epochs.size() && c.epochs[c.next].mark.time_s <= t + kTimeTol) {
        if (c.next > 0) close_epoch(c.epochs[c.next - 1]);
        Epoch& reached = c.epochs[c.next];
        reached.reached = true;
        jump = true;
        for (const auto& [tr, r] : c.roots)
            if (tr >= reached.mark.time_s - 1.0) reached.path.push_back(r);
        ++c.next;
    }
    // Only the reached changes from c.open on can still be in blackout or await their rendition
    // (the ones before are both known and rendered), so a long session costs no more per frame.
    // Blackout: some reached change whose news has not arrived by t.
    bool blackout = false;
    for (size_t i = c.open; i < c.next; ++i) blackout = blackout || c.epochs[i].news > t + kTimeTol;
    // The display's rendition: its first epoch switch (or, unknown, its first frame) at or after
    // the news of a change it has not yet rendered.
    bool pending = false;
    for (size_t i = c.open; i < c.next; ++i) pending = pending || (!c.epochs[i].rendered && c.epochs[i].news <= t + kTimeTol);
    const bool switched = display_epoch < 0 || (c.frames > 0 && display_epoch != c.last_display_epoch);
    if (pending && switched) {
        auto reached_by = [&](const Epoch& e) {  // the display shows e's epoch or a later one
            return e.mark.epoch < 0 || display_epoch < 0 || int16_t(uint16_t(display_epoch - e.mark.epoch)) >= 0;
        };
        for (size_t i = c.open; i < c.next; ++i)
            if (!c.epochs[i].rendered && c.epochs[i].news <= t + kTimeTol && reached_by(c.epochs[i])) c.epochs[i].rendered = jump = true;
    }
    while (c.open < c.next && c.epochs[c.open].rendered) ++c.open;
    c.last_display_epoch = display_epoch;
    return blackout;
}

// The display's root on the way between an epoch change's origin and destination, far from both,
// from the truth, from the reference and from every place the character was since a second before.
bool FidelityAccumulator::smeared(const Epoch& ep, vec3 shown_root, vec3 true_root, double to_ref) const {
    const double thr = cfg_.smear_threshold_m;
    const d3 a = D(ep.mark.origin_m), b = D(ep.mark.destination_m), p = D(shown_root);
    const d3 ab = b - a;
    const double L2 = dot(ab, ab);
    if (L2 <= 0) return false;
    const double u = dot(p - a, ab) / L2;
    const double lateral = norm(p - (a + ab * u));
    bool where_it_was = false;
    for (const vec3& r : ep.path) where_it_was = where_it_was || dist(shown_root, r) <= thr;
    return u > 0 && u < 1 && lateral <= thr && norm(p - a) > thr && norm(p - b) > thr && to_ref > thr &&
           dist(shown_root, true_root) > thr && !where_it_was;
}

// The current epoch change: smear (from the news), arrival, settle (from A).
void FidelityAccumulator::follow_epoch(Character& c, double t, double d, vec3 true_root, vec3 shown_root, vec3 ref) {
    if (c.next == 0) return;
    Epoch& ep = c.epochs[c.next - 1];
    const double T = ep.mark.time_s;
    ++ep.frames;
    ep.last_t = t;
    const bool post = t - d >= T - kTimeTol;
    const double to_ref = dist(shown_root, ref);
    if (!ep.arrived && t - T >= cfg_.smear_window_s - kTimeTol) ep.window_expired = true;
    if (!ep.arrived && !ep.window_expired) {
        ep.path.push_back(true_root);
        if (ep.news <= t + kTimeTol && smeared(ep, shown_root, true_root, to_ref)) ++smear_;
        if (post && to_ref <= cfg_.smear_threshold_m) ep.arrived = true;
        if (ep.arrived || ep.window_expired) std::vector<vec3>().swap(ep.path);
    }
    if (ep.settled || ep.news > t + kTimeTol) return;
    if (!(post && to_ref <= cfg_.settle_radius_m)) {
        ep.run = false;
        return;
    }
    if (!ep.run) {
        ep.run = true;
        ep.run_start = t;
    }
    if (t - ep.run_start >= cfg_.settle_hold_s - kTimeTol) {
        ep.settled = true;
        ep.settle_s = std::max(0.0, ep.run_start - ep.news);
    }
}

// The frame's mean error in the series, one entry per render frame index.
void FidelityAccumulator::add_to_series(double t, double frame_sum, size_t n) {
    const int64_t idx = std::llround(t * cfg_.render_hz);
    size_t i;
    if (series_index_.empty() || idx > series_index_.back()) {
        i = series_index_.size();
        series_index_.push_back(idx);
        series_.emplace_back(t, 0.0);
        series_sum_.push_back(0.0);
        series_n_.push_back(0);
    } else {
        const auto it = std::lower_bound(series_index_.begin(), series_index_.end(), idx);
        i = size_t(it - series_index_.begin());
        if (*it != idx) {
            series_index_.insert(it, idx);
            series_.insert(series_.begin() + std::ptrdiff_t(i), {t, 0.0});
            series_sum_.insert(series_sum_.begin() + std::ptrdiff_t(i), 0.0);
            series_n_.insert(series_n_.begin() + std::ptrdiff_t(i), 0);
        }
    }
    series_sum_[i] += frame_sum;
    series_n_[i] += int64_t(n);
    series_[i].second = series_sum_[i] / double(series_n_[i]);
}

void FidelityAccumulator::note_worst(const Character& c, const FidelityFrame& f, size_t joint, double err_cm) {
    const double t = f.time_s;
    worst_err_cm_ = err_cm;
    worst_ = WorstFrame{};
    worst_.time_s = t;
    worst_.character = c.id;
    worst_.joint = int64_t(joint);
    worst_.snapshot_age_s = f.snapshot_age_s;
    if (c.next == 0) return;
    const Epoch& e = c.epochs[c.next - 1];
    worst_.change_s = e.mark.time_s;
    worst_.news_s = e.news;
    worst_.jump_m = dist(e.mark.origin_m, e.mark.destination_m);
    worst_.kind = int64_t(e.mark.kind);
    worst_.old_place = !e.rendered && e.news <= t + kTimeTol;
}

void FidelityAccumulator::add_frame(int character, const FidelityFrame& f) {
    Character& c = checked_character(character, f);
    const double t = f.time_s, d = f.display_delay_s;
    const size_t n = f.truth_now.size();
    const vec3 true_root = f.truth_now[0], shown_root = f.displayed[0];
    bool jump = false;
    const bool blackout = advance_epochs(c, t, f.display_epoch, jump);

    // True root history, enough to look up t - d.
    c.roots.emplace_back(t, true_root);
    const double keep = std::max(0.0, d) + 1.0;
    while (c.roots.size() > 2 && c.roots.front().first < t - keep) c.roots.pop_front();
    follow_epoch(c, t, d, true_root, shown_root, d == 0.0 ? true_root : reference_root(c, t - d));

    // Keep the frame for the delayed second differences, then evaluate the one two frames back.
    Slot& s = c.ring[size_t(c.frames % 5)];
    s.t = t;
    s.blackout = blackout;
    s.jump = jump;
    s.d.assign(f.displayed.begin(), f.displayed.end());
    s.g.assign(f.truth_now.begin(), f.truth_now.end());
    s.gd.assign(f.truth_delayed.begin(), f.truth_delayed.end());
    if (c.frames >= 2) evaluate(c, c.frames - 2);
    c.last_t = t;
    ++c.frames;
    ++frames_;
    if (blackout) {
        ++blackout_frames_;
        return;
    }
    double frame_sum = 0;
    for (size_t j = 0; j < n; ++j) {
        const double pe = dist(f.displayed[j], f.truth_now[j]) * 100.0;
        present_.add(pe);
        if (pe > worst_err_cm_) note_worst(c, f, j, pe);
        frame_sum += pe;
        shape_.add(dist(f.displayed[j], f.truth_delayed[j]) * 100.0);
        rot_.add(rotation_angle_deg(f.displayed_rot[j], f.truth_rot[j]));
    }
    delay_sum_ += d;
    ++counted_frames_;
    add_to_series(t, frame_sum, n);
}

std::vector<double> FidelityAccumulator::epoch_times() const {
    std::vector<double> out;
    for (const auto& [id, c] : chars_)
        for (const Epoch& e : c.epochs) out.push_back(e.mark.time_s);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::pair<double, double>> FidelityAccumulator::blackout_spans() const {
    std::vector<std::pair<double, double>> out;
    for (const auto& [id, c] : chars_)
        for (const Epoch& e : c.epochs)
            if (e.reached) out.emplace_back(e.mark.time_s, e.news != kNever ? e.news : std::max(e.mark.time_s, c.last_t));
    return out;
}

FidelityResult FidelityAccumulator::result() const {
    FidelityResult r;
    r.present_err_cm = {present_.mean(), present_.percentile(95, 100), present_.max(), present_.percentile(50, 100),
                        present_.percentile(99, 100)};
    r.shape_err_cm = {shape_.mean(), shape_.percentile(95, 100), shape_.max(), kNaN, kNaN};
    r.rot_err_deg_mean = rot_.mean();
    r.rot_err_deg_p95 = rot_.percentile(95, 100);
    r.display_delay_ms = counted_frames_ ? delay_sum_ / double(counted_frames_) * 1000.0 : kNaN;
    if (accel_samples_ == 0) r.accel_rms_ratio = kNaN;
    else if (accel_g_ > 0) r.accel_rms_ratio = std::sqrt(accel_d_ / accel_g_);
    else r.accel_rms_ratio = accel_d_ == 0 ? 1.0 : kInf;
    r.pops = pops_;
    r.teleport_smear_frames = smear_;
    // Settle: closed changes plus each character's open one; blackout over changes with news.
    double sum = settle_sum_, mx = settle_max_;
    int64_t cnt = settle_n_;
    double bsum = 0, bmax = 0;
    int64_t bn = 0;
    for (const auto& [id, c] : chars_) {
        for (const Epoch& e : c.epochs) {
            r.epoch_changes++;
            if (!e.reached || e.news == kNever) continue;
            const double b = e.news - e.mark.time_s;
            bsum += b;
            bmax = bn == 0 ? b : std::max(bmax, b);
            ++bn;
        }
        if (c.next == 0) continue;
        const Epoch& e = c.epochs[c.next - 1];
        if (e.news == kNever || e.last_t < e.news - kTimeTol) continue;
        const double s = e.settled ? e.settle_s : e.last_t - e.news;
        sum += s;
        mx = cnt == 0 ? s : std::max(mx, s);
        ++cnt;
    }
    r.teleports = cnt;
    r.teleport_settle_ms_mean = cnt ? sum / double(cnt) * 1000.0 : kNaN;
    r.teleport_settle_ms_max = cnt ? mx * 1000.0 : kNaN;
    r.blackout_frames = blackout_frames_;
    r.blackout_ms_mean = bn ? bsum / double(bn) * 1000.0 : kNaN;
    r.blackout_ms_max = bn ? bmax * 1000.0 : kNaN;
    r.bytes_per_s = seconds_ > 0 ? bytes_ / seconds_ : kNaN;
    r.bits_per_joint = joints_ > 0 ? bits_ / joints_ : kNaN;
    r.frames = frames_;
    r.worst = worst_;
    return r;
}

}  // namespace ks
