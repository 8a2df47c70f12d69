#include "common/src/codec/character_codec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "common/src/codec/det_math.h"
#include "common/src/codec/range_coder.h"

namespace ks {

namespace {

// One implementation for both directions: Enc writes the values it is given, Dec returns what it
// reads. The coding function below is written once against this interface, so the two sides can
// never disagree about what is coded when or with which probabilities.
// Ideal cost, in 1/256 bit, of coding a symbol of probability p/4096: where the bits go.
const std::array<uint16_t, kProbOne>& cost_table() {
    static const std::array<uint16_t, kProbOne> t = [] {
        std::array<uint16_t, kProbOne> c{};
        for (uint32_t p = 1; p < kProbOne; ++p) c[p] = uint16_t(std::lround(-std::log2(double(p) / kProbOne) * 256.0));
        c[0] = c[1];
        return c;
    }();
    return t;
}

struct Enc {
    static constexpr bool kEncodes = true;
    RangeEncoder rc;
    CodingCost* cost;
    int category = 0;
    Enc(std::vector<uint8_t>& out, CodingCost* c) : rc(out), cost(c) {}
    void account(uint32_t p0, int b) {
        if (cost) cost->bits256[category] += cost_table()[b ? kProbOne - p0 : p0];
    }
    void set_category(int c) { category = c; }
    int bit(int b, uint32_t p0) {
        account(p0, b);
        rc.encode_bit(p0, b);
        return b;
    }
    uint32_t bypass(uint32_t v, int n) {
        for (int i = 0; i < n; ++i) account(kProbOne / 2, 0);
        rc.encode_bypass(v, n);
        return v;
    }
    int32_t laplace(int32_t v, const LaplaceModel& m) {
        if (cost) {
            account(m.p_zero, v != 0);
            if (v != 0) {
                account(kProbOne / 2, 0);
                const uint64_t mag = v < 0 ? uint64_t(-int64_t(v)) : uint64_t(v);
                for (uint64_t k = 1; k < mag && k <= 24; ++k) account(m.p_stop, 1);
                if (mag <= 24) account(m.p_stop, 0);
                else for (uint64_t x = mag - 25 + 4; x > 1; x >>= 1) cost->bits256[category] += 2 * 256;  // escape
            }
        }
        encode_laplace(rc, v, m);
        return v;
    }
    int32_t signed_exp_golomb(int32_t v, int k) {
        const uint32_t z = v >= 0 ? uint32_t(v) << 1 : (uint32_t(-(int64_t(v))) << 1) - 1;  // zigzag
        encode_exp_golomb(rc, z, k);
        return v;
    }
};

struct Dec {
    static constexpr bool kEncodes = false;  // what the encoder alone can know is not computed
    RangeDecoder rc;
    explicit Dec(std::span<const uint8_t> in) : rc(in) {}
    void set_category(int) {}
    int bit(int, uint32_t p0) { return rc.decode_bit(p0); }
    uint32_t bypass(uint32_t, int n) { return rc.decode_bypass(n); }
    int32_t laplace(int32_t, const LaplaceModel& m) { return decode_laplace(rc, m); }
    int32_t signed_exp_golomb(int32_t, int k) {
        const uint32_t z = decode_exp_golomb(rc, k);
        return (z & 1u) ? -int32_t(z >> 1) - 1 : int32_t(z >> 1);
    }
};

constexpr float kPStillStays = 0.98f;   // P(a still joint is unchanged)
constexpr uint32_t kPSameFlags = 4000;    // P(flags as in the baseline)
constexpr uint32_t kPSameLargest = 3968;  // P(largest component as predicted)

int32_t add_sat(int64_t a, int64_t b) { return int32_t(std::clamp<int64_t>(a + b, INT32_MIN + 1, INT32_MAX)); }

// Codes v as a residual against `pred`; returns the (decoded) value.
template <class IO>
int32_t residual(IO& io, int32_t v, int32_t pred, const LaplaceModel& m, double& abs_sum) {
    const int64_t r = int64_t(v) - int64_t(pred);
    const int32_t rr = io.laplace(int32_t(std::clamp<int64_t>(r, INT32_MIN + 1, INT32_MAX)), m);
    abs_sum += std::fabs(double(rr));
    return add_sat(pred, rr);
}

// Adaptive correction of a predicted scale: follows how wrong the predictions have been.
struct Adapt {
    float factor = 1.0f;
    void update(double abs_mean, float sigma) {
        const float ratio = float((abs_mean + 0.5) / (double(sigma) + 0.5));
        factor = std::clamp(0.75f * factor + 0.25f * ratio, 0.25f, 8.0f);
    }
};

// The probability that every residual coded with these models is zero.
double p_zero(std::span<const LaplaceModel> models) {
    double p = 1.0;
    for (const LaplaceModel& m : models) p *= double(m.p_zero) / kProbOne;
    return p;
}

uint32_t to_p0(double p) { return uint32_t(std::clamp<long>(std::lround(p * kProbOne), 64, long(kProbOne) - 64)); }

// A yes/no whose probability is the share of "yes" so far in this payload (Krichevsky-Trofimov):
// a full state's flags cost what the character's joints make them cost.
struct AdaptiveBit {
    int64_t yes = 0, seen = 0;
    template <class IO>
    bool code(IO& io, bool v) {
        const uint32_t p0 = uint32_t(std::clamp<int64_t>((2 * (seen - yes) + 1) * kProbOne / (2 * seen + 2), 64, kProbOne - 64));
        const bool b = io.bit(v, p0) != 0;
        yes += b, ++seen;
        return b;
    }
};

template <class IO>
void code_full(IO& io, QCharacter& c, const SkeletonPrecision& prec, JointRange range) {
    io.set_category(CodingCost::kFlags);
    c.epoch = uint16_t(io.bypass(c.epoch, 16));
    const LaplaceModel ang_m = laplace_model(16.0f), pos_m = laplace_model(500.0f), vel_m = laplace_model(200.0f);
    // Which joints move, scale, turn, and are charted on w: a rig's fingers and face at rest cost a
    // fraction of a bit for each instead of a bit, or three zeros.
    AdaptiveBit moved, scaled, turns, off_w;
    for (size_t j = range.first; j < range.end(); ++j) {
        QJoint& q = c.joints[j];
        if constexpr (!IO::kEncodes) q = QJoint{};  // what is not coded is zero
        const JointPrecision& p = prec.joints[j];
        io.set_category(CodingCost::kFlags);
        q.moved = j == 0 ? true : moved.code(io, q.moved);
        q.scaled = scaled.code(io, q.scaled);
        io.set_category(CodingCost::kAngular);
        if (turns.code(io, q.ang[0] != 0 || q.ang[1] != 0 || q.ang[2] != 0)) {
            for (int k = 0; k < 3; ++k) q.ang[k] = io.laplace(q.ang[k], ang_m);
        } else {
            std::fill(std::begin(q.ang), std::end(q.ang), 0);
        }
        io.set_category(CodingCost::kRotation);
        q.largest = off_w.code(io, q.largest != 0) ? uint8_t(1 + io.bypass(uint32_t(q.largest - 1) % 3u, 2) % 3u) : 0;
        for (int k = 0; k < 3; ++k) q.rot[k] = int32_t(io.bypass(uint32_t(q.rot[k]), p.rot_bits));
        io.set_category(CodingCost::kPosition);
        if (q.moved) {
            for (int k = 0; k < 3; ++k) q.pos[k] = j == 0 ? io.signed_exp_golomb(q.pos[k], 12) : io.laplace(q.pos[k], pos_m);
            for (int k = 0; k < 3; ++k) q.vel[k] = io.laplace(q.vel[k], vel_m);
        }
        if (q.scaled) {
            for (int k = 0; k < 3; ++k) q.lscl[k] = io.laplace(q.lscl[k], pos_m);
            for (int k = 0; k < 3; ++k) q.svl[k] = io.laplace(q.svl[k], vel_m);
        }
    }
}

// A residual scale mixed on the Laplace table's log grid: in effect sigma = C x1^w1 x2^w2 x3^w3,
// each feature's bucket weighted in integer 1/64ths (no logarithm and no rounding of ties: the
// same on every machine, whatever the compiler fuses).
struct GridMix {
    int32_t c, w1, w2, w3;  // 1/64ths of a bucket
};
float grid_mix(const GridMix& m, float x1, float x2, float x3 = 1.0f) {
    const int32_t i = m.c + m.w1 * laplace_bucket(x1) + m.w2 * laplace_bucket(x2) + m.w3 * laplace_bucket(x3);
    return laplace_bucket_sigma((i + 32) >> 6);
}
// Fitted on the walk clip's residuals (log |residual| regressed on the logs of the features).
constexpr GridMix kAngularMix{447, 19, 35, 0};    // acceleration, angular velocity
constexpr GridMix kRotationMix{1342, 10, 8, 20};  // acceleration, angular velocity, angular-velocity residual

// The Laplace scales a joint's residuals are coded with, per component for the angular velocity
// and the rotation (a knee turns about one axis: its residuals are wide on that one, narrow on the
// others): from the baseline's angular velocity and its acceleration against the context, and for
// the rotation the angular velocity's own residual; positions from the linear acceleration; each
// times its quantity's running adaptation.
struct DeltaScales {
    float sw[3], sv[3], sp[3];
    float acc[3], spd[3];  // |baseline angular acceleration| and |angular velocity| per component
    LaplaceModel mw[3], mp[3], mv[3];
};

struct DeltaAdapt {
    Adapt aw, ar, ap, av;
};

float rotation_scale(const DeltaScales& d, int k, int64_t ang_residual, const JointPrecision& p, float dt) {
    return grid_mix(kRotationMix, 0.3f + d.acc[k] * dt * dt / p.rot_step, 0.3f + d.spd[k] * dt / p.rot_step,
                    0.3f + float(ang_residual < 0 ? -ang_residual : ang_residual));
}

DeltaScales delta_scales(const CharacterBaseline& b, size_t j, const JointPrecision& p, vec3 wb, const DeltaAdapt& ad) {
    const QJoint& bq = b.state->joints[j];
    const float dt = float(b.age_s);
    const bool have_ctx = b.context != nullptr && b.context_age_s > 0.0;
    const vec3 acc = have_ctx ? (wb - dequantize_angular(b.context->joints[j], p)) / float(b.context_age_s) : vec3{};
    DeltaScales d;
    const float accs[3] = {acc.x, acc.y, acc.z}, ws[3] = {wb.x, wb.y, wb.z};
    for (int k = 0; k < 3; ++k) {
        d.acc[k] = std::fabs(accs[k]), d.spd[k] = std::fabs(ws[k]);
        d.sw[k] = grid_mix(kAngularMix, 0.3f + d.acc[k] * dt / p.ang_step, 0.3f + d.spd[k] / p.ang_step) * ad.aw.factor;
        d.mw[k] = laplace_model(d.sw[k]);
    }
    // Positions: the same idea with the baseline's linear acceleration (root and animated joints).
    float lin_acc[3] = {};
    if (have_ctx && bq.moved && b.context->joints[j].moved) {
        const QJoint& cq = b.context->joints[j];
        for (int k = 0; k < 3; ++k) lin_acc[k] = std::fabs(float(int64_t(bq.vel[k]) - cq.vel[k])) * p.vel_step / float(b.context_age_s);
    }
    for (int k = 0; k < 3; ++k) {
        d.sv[k] = (have_ctx ? 0.6f + 0.8f * lin_acc[k] * dt / p.vel_step : 8.0f) * ad.av.factor;
        d.sp[k] = (have_ctx ? 0.6f + 0.3f * lin_acc[k] * dt * dt / p.pos_step : 8.0f) * ad.ap.factor;
        d.mp[k] = laplace_model(d.sp[k]), d.mv[k] = laplace_model(d.sv[k]);
    }
    return d;
}

// The baseline's values a joint is predicted from: zero where it did not move or scale.
struct BaseValues {
    const QJoint& bq;
    int32_t pos(int k) const { return bq.moved ? bq.pos[k] : 0; }
    int32_t vel(int k) const { return bq.moved ? bq.vel[k] : 0; }
    int32_t lscl(int k) const { return bq.scaled ? bq.lscl[k] : 0; }
    int32_t svl(int k) const { return bq.scaled ? bq.svl[k] : 0; }
};

// The rotation predicted from the baseline's and the current angular velocity, as grid indices in
// its own chart (returns the chart): the trapezoid, or the baseline's own indices when neither
// turns (a joint at rest costs no trigonometry and never drifts by a rounding).
int predict_rotation(const QJoint& bq, const JointPrecision& p, vec3 wb, vec3 wc, float dt, int32_t idx[3], int chart = -1) {
    const bool still = wb.x == 0.0f && wb.y == 0.0f && wb.z == 0.0f && wc.x == 0.0f && wc.y == 0.0f && wc.z == 0.0f;
    if (still && (chart < 0 || chart == bq.largest)) {
        std::copy(std::begin(bq.rot), std::end(bq.rot), idx);
        return bq.largest;
    }
    const quat pred = det::integrate(dequantize_rotation(bq, p), wb, wc, dt);
    const int lp = chart < 0 ? largest_component(pred) : chart;
    rotation_indices(pred, lp, p, idx);
    return lp;
}

// A delta predicts each angular velocity as a share of the baseline's, in eighths, at one of these
// levels the encoder chooses per payload. Over a few ticks, or on smooth curves, the baseline's own
// value predicts best; at a 100 ms round trip a captured limb's angular velocity has mostly turned
// over since the baseline (a step's sway at 2-3 Hz, the capture's frame-to-frame jitter) and a
// prediction near zero costs less (docs/NETWORK.md, "Angular velocity").
constexpr int32_t kAngularShare[4] = {8, 6, 3, 0};

int32_t predict_angular(int32_t base, int level) {
    const int64_t v = int64_t(base) * kAngularShare[level];
    return int32_t(v >= 0 ? (v + 4) / 8 : -((-v + 4) / 8));  // rounded half away from zero
}

// The level whose predictions leave the smallest residuals (summed magnitudes): what the encoder
// alone can compute, before coding anything.
int choose_angular_level(const QCharacter& c, const CharacterBaseline& b, const SkeletonPrecision& prec, JointRange range) {
    uint64_t cost[4] = {};
    for (size_t j = range.first; j < range.end(); ++j) {
        if (b.hold_depth >= 0 && prec.joints[j].depth > b.hold_depth) continue;
        const QJoint& q = c.joints[j];
        const QJoint& bq = b.state->joints[j];
        for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 4; ++l) {
                const int64_t r = int64_t(q.ang[k]) - predict_angular(bq.ang[k], l);
                cost[l] += uint64_t(r < 0 ? -r : r);
            }
    }
    return int(std::min_element(std::begin(cost), std::end(cost)) - std::begin(cost));
}

// Is everything exactly as predicted? Only meaningful when encoding (the decoder reads the bit).
bool predicted_exactly(const QJoint& q, const BaseValues& base, const JointPrecision& p, const SkeletonPrecision& prec, vec3 wb,
                       const int32_t pa[3], float dt) {
    const QJoint& bq = base.bq;
    bool same = std::equal(std::begin(q.ang), std::end(q.ang), pa);
    if (same) {
        int32_t idx[3];
        const vec3 wp = vec3{float(pa[0]), float(pa[1]), float(pa[2])} * p.ang_step;  // as dequantize_angular
        const int lp = predict_rotation(bq, p, wb, wp, dt, idx);
        same = q.largest == lp && q.rot[0] == idx[0] && q.rot[1] == idx[1] && q.rot[2] == idx[2];
    }
    for (int k = 0; same && q.moved && k < 3; ++k) {
        const int32_t pv = base.vel(k);
        const int32_t pp = add_sat(base.pos(k), std::llround(double(base.vel(k)) * p.vel_step / p.pos_step * dt));
        same = q.vel[k] == pv && q.pos[k] == pp;
    }
    for (int k = 0; same && q.scaled && k < 3; ++k) {
        const int32_t ps = add_sat(base.lscl(k), std::llround(double(base.svl(k)) * prec.svl_step / prec.log_scale_step * dt));
        same = q.svl[k] == base.svl(k) && q.lscl[k] == ps;
    }
    return same;
}

// Flags: usually as in the baseline.
template <class IO>
void code_delta_flags(IO& io, QJoint& q, const QJoint& bq, size_t j) {
    io.set_category(CodingCost::kFlags);
    const bool flags_same = io.bit(!(q.moved == bq.moved && q.scaled == bq.scaled), kPSameFlags) == 0;
    if (flags_same) {
        q.moved = bq.moved;
        q.scaled = bq.scaled;
    } else {
        q.moved = j == 0 ? true : io.bit(q.moved, kProbOne / 2) != 0;
        q.scaled = io.bit(q.scaled, kProbOne / 2) != 0;
    }
}

// Rotation: trapezoidal integration of the baseline's and the current angular velocity.
template <class IO>
void code_delta_rotation(IO& io, QJoint& q, const QJoint& bq, const JointPrecision& p, vec3 wb, float dt, bool unchanged,
                         const LaplaceModel (&mr)[3], double& sum_r) {
    const vec3 wc = dequantize_angular(q, p);
    int32_t idx[3];
    const int lp = predict_rotation(bq, p, wb, wc, dt, idx);
    io.set_category(CodingCost::kRotation);
    if (unchanged) {
        q.largest = uint8_t(lp);
        std::copy(idx, idx + 3, q.rot);
        return;
    }
    if (io.bit(q.largest != lp, kPSameLargest) == 0) q.largest = uint8_t(lp);
    else q.largest = uint8_t(io.bypass(q.largest, 2));
    if (q.largest != lp) predict_rotation(bq, p, wb, wc, dt, idx, q.largest);
    const int32_t max_index = int32_t((1u << p.rot_bits) - 1u);
    for (int k = 0; k < 3; ++k) q.rot[k] = std::clamp(residual(io, q.rot[k], idx[k], mr[k], sum_r), 0, max_index);
}

// Positions: velocity, then position by the trapezoid; scales the same way.
template <class IO>
void code_delta_linear(IO& io, QJoint& q, const BaseValues& base, const JointPrecision& p, const SkeletonPrecision& prec, float dt,
                       bool unchanged, const DeltaScales& d, double& sum_p, double& sum_v) {
    io.set_category(CodingCost::kPosition);
    if (q.moved) {
        for (int k = 0; k < 3; ++k) q.vel[k] = unchanged ? base.vel(k) : residual(io, q.vel[k], base.vel(k), d.mv[k], sum_v);
        for (int k = 0; k < 3; ++k) {
            const double drift = 0.5 * (double(base.vel(k)) + double(q.vel[k])) * p.vel_step / p.pos_step * dt;
            const int32_t pp = add_sat(base.pos(k), std::llround(unchanged ? double(base.vel(k)) * p.vel_step / p.pos_step * dt : drift));
            q.pos[k] = unchanged ? pp : residual(io, q.pos[k], pp, d.mp[k], sum_p);
        }
    } else {
        std::fill(std::begin(q.pos), std::end(q.pos), 0);
        std::fill(std::begin(q.vel), std::end(q.vel), 0);
    }
    if (q.scaled) {
        for (int k = 0; k < 3; ++k) q.svl[k] = unchanged ? base.svl(k) : residual(io, q.svl[k], base.svl(k), d.mv[k], sum_v);
        for (int k = 0; k < 3; ++k) {
            const double drift = 0.5 * (double(base.svl(k)) + double(q.svl[k])) * prec.svl_step / prec.log_scale_step * dt;
            const int32_t ps = add_sat(base.lscl(k), std::llround(drift));
            q.lscl[k] = unchanged ? ps : residual(io, q.lscl[k], ps, d.mp[k], sum_p);
        }
    } else {
        std::fill(std::begin(q.lscl), std::end(q.lscl), 0);
        std::fill(std::begin(q.svl), std::end(q.svl), 0);
    }
}

template <class IO>
void code_delta_joint(IO& io, QJoint& q, const CharacterBaseline& b, size_t j, const SkeletonPrecision& prec, int angular_level,
                      DeltaAdapt& ad) {
    const QJoint& bq = b.state->joints[j];
    const JointPrecision& p = prec.joints[j];
    const float dt = float(b.age_s);
    code_delta_flags(io, q, bq, j);
    const vec3 wb = dequantize_angular(bq, p);
    const BaseValues base{bq};
    // A joint that was still (no angular velocity, and as in the context) usually stays so:
    // faces, fingers and correctives at rest cost a small fraction of a bit, and no model is
    // computed for them unless they move.
    const bool have_ctx = b.context != nullptr;
    const bool was_still = bq.ang[0] == 0 && bq.ang[1] == 0 && bq.ang[2] == 0 && (!have_ctx || b.context->joints[j] == bq);
    // Set by delta_scales before anything reads it: a joint that stays still reads none of it (not
    // zeroed here: clearing it for every joint cost a tenth of the decoder's time).
    DeltaScales d;
    LaplaceModel mr[3] = {};
    float sr_k[3] = {};  // rotation scales, before adaptation
    bool have_model[3] = {};
    int64_t modelled[3] = {};  // the angular-velocity residual each scale was made for
    auto rotation_models = [&] {
        for (int k = 0; k < 3; ++k) {
            const int64_t r = int64_t(q.ang[k]) - bq.ang[k];
            if (have_model[k] && r == modelled[k]) continue;
            have_model[k] = true;
            modelled[k] = r;
            sr_k[k] = rotation_scale(d, k, r, p, dt);
            mr[k] = laplace_model(sr_k[k] * ad.ar.factor);
        }
    };
    int32_t pa[3];  // the angular velocity predicted
    for (int k = 0; k < 3; ++k) pa[k] = predict_angular(bq.ang[k], angular_level);
    float pz = kPStillStays;
    if (!was_still) {
        d = delta_scales(b, j, p, wb, ad);
        const int32_t saved_ang[3] = {q.ang[0], q.ang[1], q.ang[2]};
        std::copy(pa, pa + 3, std::begin(q.ang));  // scales as if the angular velocity were as predicted
        rotation_models();
        std::copy(std::begin(saved_ang), std::end(saved_ang), std::begin(q.ang));
        const LaplaceModel pv[6] = {d.mp[0], d.mp[1], d.mp[2], d.mv[0], d.mv[1], d.mv[2]};
        const double pz_rot = p_zero(d.mw) * p_zero(mr);
        pz = float(q.moved ? pz_rot * p_zero(pv) : pz_rot);
    }
    const bool exact = IO::kEncodes && predicted_exactly(q, base, p, prec, wb, pa, dt);
    const bool unchanged = io.bit(exact ? 0 : 1, to_p0(pz)) == 0;
    if (was_still && !unchanged) d = delta_scales(b, j, p, wb, ad);
    io.set_category(CodingCost::kAngular);
    double sum_w = 0, sum_r = 0, sum_p = 0, sum_v = 0;
    // Angular velocity: predicted as a share of the baseline's. (Extrapolating the baseline's own
    // recent change, even damped, costs more on the shared clips: that change is stale by then.)
    if (unchanged) {
        std::copy(pa, pa + 3, std::begin(q.ang));
    } else {
        for (int k = 0; k < 3; ++k) q.ang[k] = residual(io, q.ang[k], pa[k], d.mw[k], sum_w);
        rotation_models();
    }
    code_delta_rotation(io, q, bq, p, wb, dt, unchanged, mr, sum_r);
    code_delta_linear(io, q, base, p, prec, dt, unchanged, d, sum_p, sum_v);
    if (unchanged) return;
    ad.aw.update(sum_w / 3.0, (d.sw[0] + d.sw[1] + d.sw[2]) / 3.0f / ad.aw.factor);
    ad.ar.update(sum_r / 3.0, sr_k[0] / 3.0f + sr_k[1] / 3.0f + sr_k[2] / 3.0f);
    if (q.moved || q.scaled) {
        ad.ap.update(sum_p / 3.0, (d.sp[0] + d.sp[1] + d.sp[2]) / 3.0f / ad.ap.factor);
        ad.av.update(sum_v / 3.0, (d.sv[0] + d.sv[1] + d.sv[2]) / 3.0f / ad.av.factor);
    }
}

template <class IO>
void code_delta(IO& io, QCharacter& c, const CharacterBaseline& b, const SkeletonPrecision& prec, JointRange range) {
    const QCharacter& base = *b.state;
    c.epoch = base.epoch;
    int level = 0;
    if constexpr (IO::kEncodes) level = choose_angular_level(c, b, prec, range);
    io.set_category(CodingCost::kAngular);
    level = int(io.bypass(uint32_t(level), 2));
    DeltaAdapt ad;
    for (size_t j = range.first; j < range.end(); ++j) {
        if (b.hold_depth >= 0 && prec.joints[j].depth > b.hold_depth) {
            c.joints[j] = base.joints[j];  // level of detail: held at the baseline on both ends, nothing coded
            continue;
        }
        if constexpr (!IO::kEncodes) c.joints[j] = QJoint{};  // what is not coded is zero
        code_delta_joint(io, c.joints[j], b, j, prec, level, ad);
    }
}

// A 16-bit hash of the whole state: what the decoder rebuilt must hash to what the encoder
// coded, or the payload is refused (a desynchronised range decoder or a wrong prediction would
// otherwise be accepted as a valid state and become the baseline of later deltas). Every value,
// two at a time as 64-bit words into two independent lanes (multiply by an odd constant, fold the
// high half down), so the chains run side by side.
uint32_t state_check(const QCharacter& c, JointRange range) {
    uint64_t h[2] = {0x9E3779B97F4A7C15ull ^ c.epoch, 0xC2B2AE3D27D4EB4Full};
    auto mix = [&h](int lane, int32_t a, int32_t b) {
        uint64_t& x = h[lane];
        x = (x ^ (uint64_t(uint32_t(a)) << 32 | uint32_t(b))) * 0xFF51AFD7ED558CCDull;
        x ^= x >> 29;
    };
    for (size_t j = range.first; j < range.end(); ++j) {
        const QJoint& q = c.joints[j];
        mix(0, q.largest | (q.moved ? 4 : 0) | (q.scaled ? 8 : 0), q.rot[0]);
        mix(1, q.rot[1], q.rot[2]);
        mix(0, q.ang[0], q.ang[1]);
        mix(1, q.ang[2], q.pos[0]);
        mix(0, q.pos[1], q.pos[2]);
        mix(1, q.vel[0], q.vel[1]);
        mix(0, q.vel[2], q.lscl[0]);
        mix(1, q.lscl[1], q.lscl[2]);
        mix(0, q.svl[0], q.svl[1]);
        mix(1, q.svl[2], int32_t(j));
    }
    const uint64_t x = (h[0] ^ (h[1] * 0x9E3779B97F4A7C15ull));
    const uint64_t f = x ^ (x >> 32);
    return uint32_t(f ^ (f >> 16)) & 0xFFFFu;
}

}  // namespace

void encode_character(std::vector<uint8_t>& out, const QCharacter& cur, const CharacterBaseline* base,
                      const SkeletonPrecision& prec, JointRange range, CodingCost* cost, QCharacter* coded) {
    Enc enc(out, cost);
    QCharacter c = cur;  // the coding functions write back what they code (identical for the encoder)
    if (base) code_delta(enc, c, *base, prec, range);
    else code_full(enc, c, prec, range);
    enc.set_category(CodingCost::kFlags);
    enc.bypass(state_check(c, range), 16);
    enc.rc.finish();
    if (coded) *coded = std::move(c);
}

bool decode_character(std::span<const uint8_t> in, QCharacter& out, const CharacterBaseline* base,
                      const SkeletonPrecision& prec, JointRange range) {
    if (range.count == 0 || range.first >= prec.joints.size() || range.count > prec.joints.size() - range.first) return false;
    if (out.joints.size() != prec.joints.size()) out.joints.assign(prec.joints.size(), QJoint{});
    if (base && (base->state == nullptr || base->state->joints.size() != prec.joints.size())) return false;
    if (base && base->context && base->context->joints.size() != prec.joints.size()) return false;
    Dec dec(in);
    if (base) code_delta(dec, out, *base, prec, range);
    else code_full(dec, out, prec, range);
#ifndef KS_CODEC_NO_STATE_CHECK  // defined only for a test build of kinesync-codec-decode (tests/codec_check)
    if (dec.bypass(0, 16) != state_check(out, range)) return false;
#else
    (void)dec.bypass(0, 16);
#endif
    // A well-formed payload ends within the bytes it was given (the encoder trims only zeros of
    // its final flush, so at most kMaxImpliedBytes may be implied).
    if (dec.rc.overrun() > kMaxImpliedBytes) return false;
    for (size_t j = range.first; j < range.end(); ++j) {
        const QJoint& q = out.joints[j];
        const int32_t max_index = int32_t((1u << prec.joints[j].rot_bits) - 1u);
        if (q.largest > 3) return false;
        for (int k = 0; k < 3; ++k)
            if (q.rot[k] < 0 || q.rot[k] > max_index) return false;
    }
    return true;
}

}  // namespace ks
