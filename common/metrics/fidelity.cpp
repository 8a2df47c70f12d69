#include "common/metrics/fidelity.h"

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
        !(cfg_.settle_hold_s >= 0) || !(cfg_.smear_window_s > 0) || cfg_.teleport_exclusion_frames < 0)
        throw std::invalid_argument("FidelityConfig: thresholds, radius, hold and window must be >= 0 (window > 0)");
}

void FidelityAccumulator::add_teleport(int character, const TeleportMark& t) {
    if (!std::isfinite(t.time_s) || !isfinite(t.origin_m) || !isfinite(t.destination_m))
        throw std::invalid_argument("add_teleport: non-finite teleport mark");
    Character& c = chars_[character];
    const double pre = double(cfg_.teleport_exclusion_frames) / cfg_.render_hz;
    if (c.frames > 0 && c.last_t >= t.time_s - pre - kTimeTol)
        throw std::logic_error("add_teleport: character " + std::to_string(character) + "'s teleport at " +
                               std::to_string(t.time_s) + " s added after its frames reached " + std::to_string(c.last_t) +
                               " s; add teleports before the frames around them");
    const auto it = std::upper_bound(c.teleports.begin(), c.teleports.end(), t.time_s,
                                     [](double v, const Teleport& tp) { return v < tp.mark.time_s; });
    Teleport tp;
    tp.mark = t;
    c.teleports.insert(it, tp);
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
    // Never interpolate across a teleport: take the side t is on.
    for (const Teleport& tp : c.teleports) {
        const double T = tp.mark.time_s;
        if (T > ta + kTimeTol && T <= tb + kTimeTol) return t >= T - kTimeTol ? it->second : prev->second;
    }
    const double f = (t - ta) / (tb - ta);
    const d3 a = D(prev->second), b = D(it->second);
    const d3 r = a + (b - a) * f;
    return vec3(float(r.x), float(r.y), float(r.z));
}

void FidelityAccumulator::close_teleport(Teleport& tp) {
    if (tp.frames == 0) return;
    const double s = tp.settled ? tp.settle_s : tp.last_t - tp.mark.time_s;
    settle_sum_ += s;
    settle_max_ = settle_n_ == 0 ? s : std::max(settle_max_, s);
    ++settle_n_;
}

void FidelityAccumulator::add_frame(int character, double t, std::span<const vec3> truth_now,
                                    std::span<const vec3> truth_delayed, std::span<const vec3> displayed,
                                    std::span<const quat> truth_rot, std::span<const quat> displayed_rot, vec3 true_root,
                                    vec3 displayed_root, double d) {
    const size_t n = truth_now.size();
    if (truth_delayed.size() != n || displayed.size() != n || truth_rot.size() != n || displayed_rot.size() != n)
        throw std::invalid_argument("add_frame: spans of different sizes");
    if (!std::isfinite(t) || !std::isfinite(d)) throw std::invalid_argument("add_frame: non-finite time or delay");
    Character& c = chars_[character];
    if (c.joints < 0) c.joints = int(n);
    if (size_t(c.joints) != n)
        throw std::invalid_argument("add_frame: character " + std::to_string(character) + " changed joint count");
    if (c.frames > 0 && !(t > c.last_t))
        throw std::invalid_argument("add_frame: character " + std::to_string(character) + "'s frames out of time order");

    const double hz = cfg_.render_hz;
    const int E = cfg_.teleport_exclusion_frames;

    // Teleports reached by this frame: each closes the one before.
    while (c.next < c.teleports.size() && c.teleports[c.next].mark.time_s <= t + kTimeTol) {
        if (c.next > 0) close_teleport(c.teleports[c.next - 1]);
        Teleport& reached = c.teleports[c.next];
        for (const auto& [tr, r] : c.roots)
            if (tr >= reached.mark.time_s - 1.0) reached.before.push_back(r);
        ++c.next;
    }
    Teleport* cur = c.next > 0 ? &c.teleports[c.next - 1] : nullptr;

    // True root history, enough to look up t - d.
    c.roots.emplace_back(t, true_root);
    const double keep = std::max(0.0, d) + 1.0;
    while (c.roots.size() > 2 && c.roots.front().first < t - keep) c.roots.pop_front();
    const vec3 ref = d == 0.0 ? true_root : reference_root(c, t - d);

    // Teleport: smear, arrival, settle.
    if (cur) {
        Teleport& tp = *cur;
        const double T = tp.mark.time_s;
        ++tp.frames;
        tp.last_t = t;
        const bool post = t - d >= T - kTimeTol;
        const double to_ref = dist(displayed_root, ref);
        if (!tp.arrived && t - T >= cfg_.smear_window_s - kTimeTol) tp.window_expired = true;
        // Smear: while the display is in transit (not arrived, window open).
        if (!tp.arrived && !tp.window_expired) {
            const double thr = cfg_.smear_threshold_m;
            const d3 a = D(tp.mark.origin_m), b = D(tp.mark.destination_m), p = D(displayed_root);
            const d3 ab = b - a;
            const double L2 = dot(ab, ab);
            if (L2 > 0) {
                const double u = dot(p - a, ab) / L2;
                const double lateral = norm(p - (a + ab * u));
                bool where_it_was = false;
                for (const vec3& r : tp.before) where_it_was = where_it_was || dist(displayed_root, r) <= thr;
                if (u > 0 && u < 1 && lateral <= thr && norm(p - a) > thr && norm(p - b) > thr && to_ref > thr &&
                    dist(displayed_root, true_root) > thr && !where_it_was)
                    ++smear_;
            }
        }
        if (tp.arrived) {
            ++tp.since_arrival;
        } else if (!tp.window_expired && post && to_ref <= cfg_.smear_threshold_m) {
            tp.arrived = true;
            tp.since_arrival = 0;
        }
        if (!tp.settled) {
            if (post && to_ref <= cfg_.settle_radius_m) {
                if (!tp.run) {
                    tp.run = true;
                    tp.run_start = t;
                }
                if (t - tp.run_start >= cfg_.settle_hold_s - kTimeTol) {
                    tp.settled = true;
                    tp.settle_s = tp.run_start - T;
                }
            } else {
                tp.run = false;
            }
        }
    }

    // Is this frame in a teleport window?
    bool excl = false;
    if (c.next < c.teleports.size() && t >= c.teleports[c.next].mark.time_s - double(E) / hz - kTimeTol) excl = true;
    if (cur && ((!cur->arrived && !cur->window_expired) || (cur->arrived && cur->since_arrival <= E))) excl = true;

    // Pops: the displayed step against the true step.
    if (c.frames > 0 && !excl) {
        for (size_t j = 0; j < n; ++j) {
            const d3 e = (D(displayed[j]) - D(c.d1[j])) - (D(truth_now[j]) - D(c.g1[j]));
            if (norm(e) > cfg_.pop_threshold_m) {
                ++pops_;
                break;
            }
        }
    }
    // Second differences centred on the previous frame.
    if (c.frames > 1 && !excl && !c.excl1) {
        for (size_t j = 0; j < n; ++j) {
            const d3 ad = D(displayed[j]) - D(c.d1[j]) * 2.0 + D(c.d2[j]);
            const d3 ag = D(truth_now[j]) - D(c.g1[j]) * 2.0 + D(c.g2[j]);
            accel_d_ += dot(ad, ad);
            accel_g_ += dot(ag, ag);
        }
        ++accel_samples_;
    }
    c.d2.swap(c.d1);
    c.g2.swap(c.g1);
    c.d1.assign(displayed.begin(), displayed.end());
    c.g1.assign(truth_now.begin(), truth_now.end());
    c.excl1 = excl;
    c.last_t = t;
    ++c.frames;

    // Errors.
    double frame_sum = 0;
    for (size_t j = 0; j < n; ++j) {
        const double pe = dist(displayed[j], truth_now[j]) * 100.0;
        present_.add(pe);
        frame_sum += pe;
        shape_.add(dist(displayed[j], truth_delayed[j]) * 100.0);
        rot_.add(rotation_angle_deg(displayed_rot[j], truth_rot[j]));
    }
    delay_sum_ += d;
    ++frames_;

    // Error series, one entry per render frame index.
    if (n > 0) {
        const int64_t idx = std::llround(t * hz);
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
}

std::vector<double> FidelityAccumulator::teleport_times() const {
    std::vector<double> out;
    for (const auto& [id, c] : chars_)
        for (const Teleport& tp : c.teleports) out.push_back(tp.mark.time_s);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

FidelityResult FidelityAccumulator::result() const {
    FidelityResult r;
    r.present_err_cm = {present_.mean(), present_.percentile(95, 100), present_.max()};
    r.shape_err_cm = {shape_.mean(), shape_.percentile(95, 100), shape_.max()};
    r.rot_err_deg_mean = rot_.mean();
    r.rot_err_deg_p95 = rot_.percentile(95, 100);
    r.display_delay_ms = frames_ ? delay_sum_ / double(frames_) * 1000.0 : kNaN;
    if (accel_samples_ == 0) r.accel_rms_ratio = kNaN;
    else if (accel_g_ > 0) r.accel_rms_ratio = std::sqrt(accel_d_ / accel_g_);
    else r.accel_rms_ratio = accel_d_ == 0 ? 1.0 : kInf;
    r.pops = pops_;
    r.teleport_smear_frames = smear_;
    // Settle: closed teleports plus each character's open one.
    double sum = settle_sum_, mx = settle_max_;
    int64_t cnt = settle_n_;
    for (const auto& [id, c] : chars_) {
        if (c.next == 0) continue;
        const Teleport& tp = c.teleports[c.next - 1];
        if (tp.frames == 0) continue;
        const double s = tp.settled ? tp.settle_s : tp.last_t - tp.mark.time_s;
        sum += s;
        mx = cnt == 0 ? s : std::max(mx, s);
        ++cnt;
    }
    r.teleports = cnt;
    r.teleport_settle_ms_mean = cnt ? sum / double(cnt) * 1000.0 : kNaN;
    r.teleport_settle_ms_max = cnt ? mx * 1000.0 : kNaN;
    r.bytes_per_s = seconds_ > 0 ? bytes_ / seconds_ : kNaN;
    r.bits_per_joint = joints_ > 0 ? bits_ / joints_ : kNaN;
    r.frames = frames_;
    return r;
}

}  // namespace ks
