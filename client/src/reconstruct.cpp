#include "client/src/reconstruct.h"

#include <algorithm>
#include <cmath>

#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include "common/src/anim/ops_simd.h"
#include "common/src/math/derivatives.h"

namespace ks {

const char* strategy_name(Strategy s) {
    switch (s) {
        case Strategy::Snap: return "snap";
        case Strategy::Interp: return "interp";
        case Strategy::Hermite: return "hermite";
        case Strategy::Extrap: return "extrap";
        case Strategy::DeadBlend: return "deadblend";
        case Strategy::DeadBlendSod: return "deadblend+sod";
        case Strategy::HermiteAhead: return "hermite+ahead";
        case Strategy::DeadBlendSodAhead: return "deadblend+sod+ahead";
    }
    return "?";
}

bool strategy_from_name(const std::string& name, Strategy& out) {
    for (const auto* list : {&all_strategies(), &ahead_strategies()})
        for (Strategy s : *list)
            if (name == strategy_name(s)) return out = s, true;
    return false;
}

const std::vector<Strategy>& ahead_strategies() {
    static const std::vector<Strategy> all = {Strategy::HermiteAhead, Strategy::DeadBlendSodAhead};
    return all;
}

bool uses_look_ahead(Strategy s) { return s == Strategy::HermiteAhead || s == Strategy::DeadBlendSodAhead; }

Strategy base_strategy(Strategy s) {
    if (s == Strategy::HermiteAhead) return Strategy::Hermite;
    if (s == Strategy::DeadBlendSodAhead) return Strategy::DeadBlendSod;
    return s;
}

Strategy ahead_form(Strategy s) {
    if (s == Strategy::Hermite) return Strategy::HermiteAhead;
    if (s == Strategy::DeadBlendSod) return Strategy::DeadBlendSodAhead;
    return s;
}

const std::vector<Strategy>& all_strategies() {
    static const std::vector<Strategy> all = {Strategy::Snap, Strategy::Interp, Strategy::Hermite,
                                              Strategy::Extrap, Strategy::DeadBlend, Strategy::DeadBlendSod};
    return all;
}

CharacterReconstructor::CharacterReconstructor(const Skeleton& skeleton, const ReconstructConfig& cfg, float metres_per_unit)
    : skeleton_(skeleton), cfg_(cfg), metres_per_unit_(metres_per_unit > 0 ? metres_per_unit : 1.0f) {
    const int n = skeleton.size();
    out_.resize(n);
    target_.resize(n);
    transition_.resize(n);
    scratch_.resize(n);
    motion_.resize(n);
    root_in_.resize(1);
    root_out_.resize(1);
    offset_.resize(size_t(n));
    dirs_.assign(size_t(n), quat{});
    omega_.assign(size_t(n), 0.0f);
    omega_pos_.assign(size_t(n), 0.0f);
    bone_.assign(size_t(n), 0.0f);
    for (int j = 1; j < n; ++j) bone_[size_t(j)] = length(skeleton.offsets[size_t(j)]);
    cum_x_.assign(size_t(n), 0.0f);
    lengths_.assign(4 * size_t(n), 0.0f);
    cum_v_.assign(size_t(n), 0.0f);
    turn_x_.assign(size_t(n), 0.0f);
    turn_v_.assign(size_t(n), 0.0f);
    for (int j = 0; j < n; ++j) out_.pos[size_t(j)] = skeleton.offsets[size_t(j)];
}

double CharacterReconstructor::display_delay() const {
    return cfg_.strategy == Strategy::Interp || cfg_.strategy == Strategy::Hermite ? cfg_.interp_delay_s : 0.0;
}

bool CharacterReconstructor::predict(Pose& out, const Snap& newest, double when) {
    if (uses_look_ahead(cfg_.strategy)) {
        // The newest epoch's snapshots around `when`: interpolated with their velocities.
        size_t b = 0;
        while (b < snaps_.size() && snaps_[b].t <= when) ++b;
        const bool before_ok = b > 0 && snaps_[b - 1].epoch == newest.epoch, after_ok = b < snaps_.size() && snaps_[b].epoch == newest.epoch;
        if (before_ok && after_ok) {
            interpolate(out, when, true);
            return true;
        }
        if (before_ok) {  // they ran out: the newest at or before `when`, extrapolated
            extrapolate(out, snaps_[b - 1], when, cfg_.predict_halflife_s, cfg_.predict_root_halflife_s);
            return false;
        }
        if (after_ok) {  // the epoch's entries all lie ahead (it just began): the first, carried back
            carry_back(out, snaps_[b], when);
            return false;
        }
    }
    extrapolate(out, newest, when, cfg_.predict_halflife_s, cfg_.predict_root_halflife_s);
    return false;
}

void CharacterReconstructor::add_snapshot(double t, const Pose& pose, uint16_t epoch, uint16_t plan, double computed_at) {
    // Epochs only move forward (16-bit, wrapping). A newer epoch computed at `from` began by then: it
    // voids what older ones said of that time and after (look-ahead snapshots of the old motion reach
    // past the change), and an older epoch's snapshot of that time or after is void on arrival.
    const double from = computed_at > -1e299 ? std::min(computed_at, t) : t;
    auto older = [](uint16_t a, uint16_t b) { return int16_t(uint16_t(a - b)) < 0; };
    for (const Snap& s : snaps_)
        if (older(epoch, s.epoch) && t >= s.from) return;
    changes_ += std::erase_if(snaps_, [&](const Snap& s) { return older(s.epoch, epoch) && s.t >= from; });
    // Plans the same way, from the moment the newer one was computed: a decision there changed the
    // future the older look-aheads described.
    if (any_plan_ && older(plan, newest_plan_) && t > newest_plan_from_) return;
    if (!any_plan_ || older(newest_plan_, plan)) {
        newest_plan_ = plan;
        newest_plan_from_ = computed_at;
        any_plan_ = true;
    } else if (plan == newest_plan_) {
        newest_plan_from_ = std::min(newest_plan_from_, computed_at);
    }
    changes_ += std::erase_if(snaps_, [&](const Snap& s) { return older(s.plan, newest_plan_) && s.t > newest_plan_from_; });
    auto it = std::lower_bound(snaps_.begin(), snaps_.end(), t, [](const Snap& s, double v) { return s.t < v; });
    if (it != snaps_.end() && it->t == t) return;  // a duplicate
    // The pose is copied into the storage of one dropped from the history (no allocation).
    Pose kept = std::move(spare_pose_);
    kept = pose;
    snaps_.insert(it, Snap{t, epoch, std::move(kept), plan, from, ++serials_});
    ++changes_;
    // Keep about a second of history (the interpolating strategies look back 100 ms).
    while (snaps_.size() > 2 && snaps_.back().t - snaps_.front().t > 1.0) {
        spare_pose_ = std::move(snaps_.front().pose);
        snaps_.pop_front();
    }
}

// An entry still ahead of `when` (the first of an epoch or of the stream) moved back to it along
// its velocities: held, it would show where the character will be, not where it is.
// Never to before the entry was computed (its epoch may have begun only then).
void CharacterReconstructor::carry_back(Pose& out, const Snap& s, double when) {
    op_extrapolate_decayed(out, s.pose, float(std::max(when, s.from) - s.t), 1e9f);
}

void CharacterReconstructor::extrapolate(Pose& out, const Snap& s, double now, float halflife, float root_halflife) {
    const double te = std::max(now - s.t, -0.05);  // a little backwards if the clock estimate runs ahead
    op_extrapolate_decayed(out, s.pose, float(std::min(te, cfg_.extrap_cap_s)), halflife);
    if (root_halflife != halflife) {
        root_in_.set(0, s.pose.get(0));
        op_extrapolate_decayed(root_out_, root_in_, float(std::min(te, cfg_.extrap_cap_s)), root_halflife);
        out.set(0, root_out_.get(0));
    }
    if (te > cfg_.extrap_cap_s) {
        // Past the cap: the velocities decay, so long loss ends in a gentle stop.
        scratch_ = out;
        op_extrapolate_decayed(out, scratch_, float(te - cfg_.extrap_cap_s), cfg_.extrap_decay_halflife_s);
    }
}

uint16_t CharacterReconstructor::interpolate(Pose& out, double when, bool hermite, bool newer_at_once) {
    // The snapshots around `when` (same epoch); hold the nearest one outside.
    size_t b = 0;
    while (b < snaps_.size() && snaps_[b].t <= when) ++b;
    if (b < snaps_.size() && (b == 0 || snaps_[b - 1].epoch != snaps_[b].epoch) && newer_at_once) {
        carry_back(out, snaps_[b], when);
        return snaps_[b].epoch;
    }
    if (b == 0) {
        out = snaps_.front().pose;
        return snaps_.front().epoch;
    }
    if (b == snaps_.size() || snaps_[b - 1].epoch != snaps_[b].epoch) {
        out = snaps_[b - 1].pose;  // never across an epoch
        return snaps_[b - 1].epoch;
    }
    const Snap& s0 = snaps_[b - 1];
    const Snap& s1 = snaps_[b];
    const double span = s1.t - s0.t;
    const float x = float((when - s0.t) / span), inv = float(1.0 / span);
    if (!hermite) {
        // Linear: the displayed motion moves at (s1 - s0) / span; the snapshots are still points.
        Pose& a = target_;
        Pose& c = transition_;
        a = s0.pose;
        c = s1.pose;
        for (size_t j = 0; j < a.pos.size(); ++j) a.vel[j] = a.ang[j] = a.svl[j] = c.vel[j] = c.ang[j] = c.svl[j] = vec3{};
        op_blend(out, a, c, x, inv);
        return s0.epoch;
    }
    // Cubic Hermite with the snapshots' velocities (op_hermite), its segment prepared once per pair
    // of entries: a render calls this once or twice per frame, a pair lasts two frames or more.
    auto current = [&](const HermitePair& p) { return p.serial0 == s0.serial && p.serial1 == s1.serial; };
    if (!current(pairs_[0])) {
        // Two kept: a fresh frame predicts the previous frame's time too, often in the pair before.
        std::swap(pairs_[0], pairs_[1]);
        if (!current(pairs_[0])) {
            op_hermite_prepare(pairs_[0].segment, s0.pose, s1.pose, float(span));
            pairs_[0].serial0 = s0.serial, pairs_[0].serial1 = s1.serial;
        }
    }
    op_hermite(out, pairs_[0].segment, s0.pose, s1.pose, x);
    return s0.epoch;
}

const Pose& CharacterReconstructor::render(double now, double dt) {
    if (snaps_.empty()) return out_;
    const Snap& newest = snaps_.back();
    // New information: a newer snapshot, or with look-ahead any change to the entries (a newer
    // plan's first entry may come due before the newest one it voids).
    const bool fresh = uses_look_ahead(cfg_.strategy) ? changes_ != seen_changes_ : newest.t > newest_seen_t_;
    newest_seen_t_ = std::max(newest_seen_t_, newest.t);
    seen_changes_ = changes_;
    const bool new_epoch = have_display_ && newest.epoch != shown_epoch_;

    switch (cfg_.strategy) {
        case Strategy::Snap:
            out_ = newest.pose;
            break;
        case Strategy::Interp:
        case Strategy::Hermite:
            shown_epoch_ = interpolate(out_, now - cfg_.interp_delay_s, cfg_.strategy == Strategy::Hermite);
            break;
        case Strategy::HermiteAhead:
            shown_epoch_ = interpolate(out_, now, true, true);
            break;
        case Strategy::Extrap:
            extrapolate(out_, newest, now, 1e9f, 1e9f);
            break;
        case Strategy::DeadBlendSod:
        case Strategy::DeadBlendSodAhead:
            render_corrected(newest, fresh, new_epoch, now, dt);
            break;
        case Strategy::DeadBlend:
            extrapolate(target_, newest, now, 1e9f, 1e9f);
            if (!have_display_ || new_epoch) {
                out_ = target_;  // a teleport or reset: nothing blends across it
                blending_ = false;
                motion_valid_ = false;
            } else {
                if (fresh) {
                    // The shown pose is one render frame old: the blend clock starts at 0 and the dt
                    // added below covers it. It is extrapolated with the motion's velocities, not with
                    // the previous blend's correction speed (its weight's rate x the gap): blends chain
                    // every snapshot, and carrying that speed on would overshoot and ring.
                    op_dead_blending_transition(transition_, dirs_, out_);
                    if (motion_valid_) {
                        transition_.vel = motion_.vel;
                        transition_.ang = motion_.ang;
                        transition_.svl = motion_.svl;
                    }
                    blend_clock_ = 0.0;
                    blending_ = true;
                }
                if (blending_) {
                    blend_clock_ += dt;
                    if (blend_clock_ >= cfg_.deadblend_blend_s) blending_ = false;
                }
                if (blending_) {
                    motion_dirs_ = dirs_;
                    op_dead_blending(out_, scratch_, dirs_, transition_, target_, cfg_.deadblend_halflife_s, float(blend_clock_),
                                     cfg_.deadblend_blend_s);
                    // The same blend with a still weight: the velocities of the motion being shown.
                    op_blend_via(motion_, scratch_, target_, motion_dirs_,
                                 smoothstep_blend_alpha(float(blend_clock_), cfg_.deadblend_blend_s), 0.0f);
                } else {
                    out_ = target_;
                    motion_.vel = target_.vel;
                    motion_.ang = target_.ang;
                    motion_.svl = target_.svl;
                }
                motion_valid_ = true;
            }
            break;
    }
    // The epoch now shown (the interpolating ones set it above).
    if (cfg_.strategy != Strategy::Interp && cfg_.strategy != Strategy::Hermite && cfg_.strategy != Strategy::HermiteAhead)
        shown_epoch_ = newest.epoch;
    have_display_ = true;
    last_now_ = now;
    return out_;
}

void CharacterReconstructor::limit_correction_frequencies() {
    // A joint's offset moves every joint below it. At joint d the corrections add up to at most
    // X_d = sum over the bones above d of bone length x the sum of the rotation offsets above that
    // bone (+ each joint's own position offset), and V_d the same for rates. A decaying offset starts with acceleration
    // w^2 x + 2 zeta w v, so choosing, for each joint, the w that keeps w^2 X + 2 zeta w V <= accel_max
    // for the largest X, V below it bounds the sum at every joint. The root's translation moves the
    // whole body and is what settles a teleport: it gets a frequency and a budget of its own
    // (root_correction_f, root_accel_max or, with look-ahead, ahead_root_accel_max), so a limb's
    // large correction does not hold the body back; the two budgets add.
    const bool ahead = cfg_.strategy == Strategy::DeadBlendSodAhead;
    const float w0 = 2.0f * kPi * (ahead ? cfg_.ahead_correction_f : cfg_.correction_sod.f);
    const float a = ahead ? cfg_.ahead_correction_accel_max : cfg_.correction_accel_max;
    const float root_a = ahead ? cfg_.ahead_root_accel_max : cfg_.root_accel_max;
    const float zeta = std::max(cfg_.correction_sod.zeta, 0.1f), m = metres_per_unit_;
    const size_t n = offset_.pos.size();
    auto solve = [&](float x, float v, float budget, float w0) {
        // w^2 x + 2 zeta w v = budget, solved for w > 0; a floor, or a large velocity offset
        // decaying too slowly drifts far before it turns. Most joints' corrections are small
        // enough for w0 itself (the root lies above it), and need no square root.
        if (w0 * w0 * x + 2 * zeta * w0 * v <= budget) return w0;
        const float w = x > 0 ? (-zeta * v + std::sqrt(zeta * zeta * v * v + budget * x)) / x : v > 0 ? budget / (2 * zeta * v) : w0;
        return std::clamp(w, cfg_.correction_min_ratio * w0, w0);
    };
    // The offsets' sizes first, all at once (SIMD square roots), then the sums down the chain.
    float* const len[4] = {lengths_.data(), lengths_.data() + n, lengths_.data() + 2 * n, lengths_.data() + 3 * n};
    simd_lengths(offset_.pos.data(), len[0], n);
    simd_lengths(offset_.vel.data(), len[1], n);
    simd_lengths(offset_.rot.data(), len[2], n);
    simd_lengths(offset_.ang.data(), len[3], n);
    for (size_t j = 0; j < n; ++j) {
        const int p = skeleton_.parents[j];
        cum_x_[j] = p >= 0 ? m * len[0][j] : 0.0f;
        cum_v_[j] = p >= 0 ? m * len[1][j] : 0.0f;
        if (p >= 0) {
            // Every rotation above the bone swings it: the bone adds its length times their sum.
            turn_x_[j] = turn_x_[size_t(p)] + len[2][size_t(p)];
            turn_v_[j] = turn_v_[size_t(p)] + len[3][size_t(p)];
            cum_x_[j] += cum_x_[size_t(p)] + m * bone_[j] * turn_x_[j];
            cum_v_[j] += cum_v_[size_t(p)] + m * bone_[j] * turn_v_[j];
        } else {
            turn_x_[j] = turn_v_[j] = 0.0f;
        }
    }
    for (size_t j = n; j-- > 1;) {  // the largest below each joint (parents come before children)
        const size_t p = size_t(skeleton_.parents[j]);
        cum_x_[p] = std::max(cum_x_[p], cum_x_[j]);
        cum_v_[p] = std::max(cum_v_[p], cum_v_[j]);
    }
    for (size_t j = 0; j < n; ++j) omega_pos_[j] = omega_[j] = solve(cum_x_[j], cum_v_[j], a, w0);
    for (size_t j = 0; j < n; ++j)
        if (skeleton_.parents[j] < 0)
            omega_pos_[j] = solve(m * len[0][j], m * len[1][j], root_a, 2.0f * kPi * cfg_.root_correction_f);
}

void CharacterReconstructor::render_corrected(const Snap& newest, bool fresh, bool new_epoch, double now, double dt) {
    predict(target_, newest, now);
    if (!have_display_ || new_epoch) {
        // A teleport or reset: nothing carries across it; the snapshot's own velocities from the first frame.
        out_ = target_;
        offset_.clear();
        return;
    }
    if (fresh) {
        // The newer snapshot's prediction replaces the old one. The offset absorbs the difference at
        // the previous frame's time, between what was shown then and what the new prediction says it
        // should have been, so the display keeps its value and velocity; then it decays over dt.
        predict(scratch_, newest, last_now_);
        op_offset_capture(offset_, out_, scratch_);
        limit_correction_frequencies();
    }
    op_offset_decay(offset_, omega_, cfg_.correction_sod.zeta, float(dt), omega_pos_);
    op_offset_apply(out_, offset_, target_);
}

}  // namespace ks
