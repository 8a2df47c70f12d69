#include "programs/server/sim/character.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_inertialize.h>
#include <kinesync/common/anim/ops_lookat.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/common/anim/root_motion.h>
#include <kinesync/common/dynamics/springs.h>

namespace ks {

namespace {

int find_head(const Skeleton& s) {
    int best = -1;
    for (int j = 0; j < s.size(); ++j) {
        std::string n = s.names[size_t(j)];
        std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (n.find("head") == std::string::npos) continue;
        if (n.find("end") != std::string::npos || n.find("top") != std::string::npos || n.find("nub") != std::string::npos) continue;
        if (best < 0 || n.size() < s.names[size_t(best)].size()) best = j;  // "Head" over "HeadTwist"
    }
    return best;
}

kform ground_kform(vec3 pos, float yaw) {
    kform k;
    k.pos = {pos.x, 0.0f, pos.z};
    k.rot = quat_from_angle_axis(yaw, {0, 1, 0});
    return k;
}

}  // namespace

Character::Character(const ClipLibrary& lib, int skeleton, uint64_t seed, vec3 start, float start_yaw, const ControllerConfig& cfg)
    : lib_(&lib), skeleton_(skeleton), cfg_(cfg), rng_(seed) {
    const int n = lib.skeletons[size_t(skeleton)].size();
    transition_.resize(n);
    offset_.resize(n);
    scratch_.resize(n);
    input_.resize(n);
    global_.resize(n);
    out_.resize(n);
    dirs_.assign(size_t(n), quat{});
    const std::vector<int> mine = lib.clips_of(skeleton);
    clip_ = mine[size_t(rng_() % mine.size())];
    time_ = rng_uniform(rng_, 0.0, period(clip_));
    speed_ = speed_target_ = float(rng_uniform(rng_, cfg.speed_min, cfg.speed_max));
    Pose g(1);
    op_sample_cubic(g, lib.clips[size_t(clip_)].ground, lib.clips[size_t(clip_)].ground_cache, time_, Wrap::Clamp);
    anchor_ = root_motion_anchor(ground_kform(start, start_yaw), g.get(0));
    next_switch_ = rng_uniform(rng_, cfg.switch_min_s, cfg.switch_max_s);
    if (cfg.teleport_every_s > 0) next_teleport_ = cfg.teleport_every_s * rng_uniform(rng_, 0.7, 1.3);
    if (cfg.reset_every_s > 0) next_reset_ = cfg.reset_every_s * rng_uniform(rng_, 0.7, 1.3);
    target_phase_ = {float(rng_uniform(rng_, 0, 6.28)), float(rng_uniform(rng_, 0, 6.28)), 0};

    const Skeleton& s = lib.skeletons[size_t(skeleton)];
    head_ = find_head(s);
    if (head_ >= 0) {
        // The head's facing axis in its own frame, from the first clip's first frame (the relative
        // clip faces +Z).
        const Clip& rel = lib.clips[size_t(mine[0])].rel;
        Pose local(n), global(n);
        for (int j = 0; j < n; ++j) local.pos[size_t(j)] = rel.pos(0, j), local.rot[size_t(j)] = rel.rot(0, j);
        op_fk_static(global, local, s.parents);
        head_forward_ = normalize(quat_inv_mul_vec3(global.rot[size_t(head_)], {0, 0, 1}));
    }
    sample_input(out_, clip_, time_, speed_, anchor_);
}

double Character::period(int clip) const { return double(lib_->clips[size_t(clip)].rel.duration()); }

void Character::sample_input(Pose& out, int clip, double t, float speed, const kform& anchor) const {
    const LoadedClip& lc = lib_->clips[size_t(clip)];
    op_sample_cubic(out, lc.rel, lc.rel_cache, t, Wrap::Loop);
    Pose g(1);
    op_sample_cubic(g, lc.ground, lc.ground_cache, std::clamp(t, 0.0, period(clip)), Wrap::Clamp);
    op_timescale(out, speed);
    op_timescale(g, speed);
    const kform world_ground = kform_mul(anchor, g.get(0));
    out.set(0, kform_mul(world_ground, out.get(0)));
}

kform Character::current_ground() const {
    const LoadedClip& lc = lib_->clips[size_t(clip_)];
    kform g = root_motion_extract(out_.get(0), lc.hips_forward);
    g.vel = g.ang = vec3{};
    return g;
}

void Character::start_transition(int next_clip, double next_time, double dt) {
    const Pose shown = out_;  // what was displayed on the previous tick, dt ago (with its velocities)
    const kform ground_now = current_ground();
    Pose g(1);
    op_sample_cubic(g, lib_->clips[size_t(next_clip)].ground, lib_->clips[size_t(next_clip)].ground_cache, next_time, Wrap::Clamp);
    anchor_ = root_motion_anchor(ground_now, g.get(0));
    clip_ = next_clip;
    time_ = next_time;
    ++switches_;
    if (cfg_.blend_time <= 0.0f) return;
    blending_ = true;
    if (cfg_.transition == TransitionKind::DeadBlending) {
        // The shown pose is dt old: the blend clock starts at dt, so the output keeps moving.
        op_dead_blending_transition(transition_, dirs_, shown);
        blend_clock_ = dt;
    } else {
        // The offset is taken between poses of the same instant: the shown one moved on by dt.
        Pose moved(shown.size());
        op_integrate(moved, shown, float(dt));
        sample_input(input_, clip_, time_, speed_, anchor_);
        op_inertialize_transition(offset_, moved, input_);
        blend_clock_ = 0.0;
    }
}

void Character::teleport(vec3 position, float yaw, uint32_t tick) {
    Pose g(1);
    op_sample_cubic(g, lib_->clips[size_t(clip_)].ground, lib_->clips[size_t(clip_)].ground_cache, time_, Wrap::Clamp);
    anchor_ = root_motion_anchor(ground_kform(position, yaw), g.get(0));
    blending_ = false;  // a teleport is a discontinuity: nothing blends across it
    ++epoch_;
    events_.push_back({CharacterEvent::Kind::Teleport, tick, epoch_});
}

void Character::reset(int clip, double clip_time, uint32_t tick) {
    const kform ground_now = current_ground();
    clip_ = clip;
    time_ = clip_time;
    Pose g(1);
    op_sample_cubic(g, lib_->clips[size_t(clip_)].ground, lib_->clips[size_t(clip_)].ground_cache, time_, Wrap::Clamp);
    anchor_ = root_motion_anchor(ground_now, g.get(0));
    blending_ = false;
    ++epoch_;
    events_.push_back({CharacterEvent::Kind::Reset, tick, epoch_});
}

void Character::advance(double dt, double clip_dt) {
    clock_ += dt;
    time_ += clip_dt;
    const double per = period(clip_);
    while (time_ >= per) {
        // Wrap: continue the ground root from where the clip's end left it.
        Pose end(1), start(1);
        op_sample_cubic(end, lib_->clips[size_t(clip_)].ground, lib_->clips[size_t(clip_)].ground_cache, per, Wrap::Clamp);
        op_sample_cubic(start, lib_->clips[size_t(clip_)].ground, lib_->clips[size_t(clip_)].ground_cache, 0.0, Wrap::Clamp);
        anchor_ = root_motion_anchor(kform_mul(anchor_, end.get(0)), start.get(0));
        time_ -= per;
    }
    if (blending_) {
        blend_clock_ += dt;
        if (blend_clock_ >= cfg_.blend_time) blending_ = false;
    }
}

const char* decision_kind_name(Decision::Kind kind) {
    switch (kind) {
        case Decision::Kind::Teleport: return "teleport";
        case Decision::Kind::Reset: return "reset";
        case Decision::Kind::Switch: return "switch";
        case Decision::Kind::Speed: return "speed";
    }
    return "?";
}

void Character::schedule(const Decision& d) {
    auto refuse = [](const std::string& what) { throw std::invalid_argument("Character::schedule: " + what); };
    if (d.tick <= tick_) refuse("tick " + std::to_string(d.tick) + " is not after the present one, " + std::to_string(tick_));
    const std::vector<int> mine = lib_->clips_of(skeleton_);
    const bool clip_kind = d.kind == Decision::Kind::Reset || d.kind == Decision::Kind::Switch;
    if (clip_kind && std::find(mine.begin(), mine.end(), d.clip) == mine.end())
        refuse("clip " + std::to_string(d.clip) + " is not one of this character's skeleton");
    if (!std::isfinite(d.clip_time)) refuse("clip_time " + std::to_string(d.clip_time) + " is not finite");
    if (!std::isfinite(d.yaw)) refuse("yaw " + std::to_string(d.yaw) + " is not finite");
    if (!(std::isfinite(d.position.x) && std::isfinite(d.position.z))) refuse("position is not finite");
    // A speed far past any clip's own would wrap its clip many times a tick.
    if (d.kind == Decision::Kind::Speed && !(std::isfinite(d.speed) && d.speed > 0.0f && d.speed <= Decision::kMaxSpeed))
        refuse("speed " + std::to_string(d.speed) + " is not in (0, " + std::to_string(Decision::kMaxSpeed) + "]");
    const auto at = std::upper_bound(scheduled_.begin(), scheduled_.end(), d.tick, [](uint32_t t, const Decision& x) { return t < x.tick; });
    scheduled_.insert(at, d);
}

void Character::stop_random_decisions() {
    next_switch_ = next_teleport_ = next_reset_ = std::numeric_limits<double>::infinity();
}

void Character::apply(const Decision& d, double dt) {
    auto wrapped = [&] { return std::fmod(std::fmod(d.clip_time, period(d.clip)) + period(d.clip), period(d.clip)); };
    switch (d.kind) {
        case Decision::Kind::Teleport: teleport(d.position, d.yaw, tick_); break;
        case Decision::Kind::Reset: reset(d.clip, wrapped(), tick_); break;
        case Decision::Kind::Switch: start_transition(d.clip, wrapped(), dt); break;
        case Decision::Kind::Speed: speed_target_ = d.speed; break;
    }
}

void Character::decide(double dt, uint32_t tick) {
    const std::vector<int> mine = lib_->clips_of(skeleton_);
    bool replanned = false;
    if (cfg_.teleport_every_s > 0 && clock_ >= next_teleport_) {
        next_teleport_ = clock_ + cfg_.teleport_every_s * rng_uniform(rng_, 0.7, 1.3);
        const kform g = current_ground();
        const double dist = rng_uniform(rng_, 5.0, 25.0) / double(lib_->metres_per_unit[size_t(skeleton_)]);
        const double dir = rng_uniform(rng_, 0.0, 2.0 * kPi);
        teleport(g.pos + vec3{float(dist * std::cos(dir)), 0.0f, float(dist * std::sin(dir))},
                 float(rng_uniform(rng_, -kPi, kPi)), tick);
    }
    if (cfg_.reset_every_s > 0 && clock_ >= next_reset_) {
        next_reset_ = clock_ + cfg_.reset_every_s * rng_uniform(rng_, 0.7, 1.3);
        const int c = mine[size_t(rng_() % mine.size())];
        reset(c, rng_uniform(rng_, 0.0, period(c)), tick);
    }
    if (clock_ >= next_switch_) {
        next_switch_ = clock_ + rng_uniform(rng_, cfg_.switch_min_s, cfg_.switch_max_s);
        speed_target_ = float(rng_uniform(rng_, cfg_.speed_min, cfg_.speed_max));
        int next = mine[size_t(rng_() % mine.size())];
        if (mine.size() > 1 && next == clip_) next = mine[(size_t(std::find(mine.begin(), mine.end(), next) - mine.begin()) + 1) % mine.size()];
        start_transition(next, rng_uniform(rng_, 0.0, period(next)), dt);
        replanned = true;
    }
    while (!scheduled_.empty() && scheduled_.front().tick <= tick) {
        const Decision d = scheduled_.front();
        scheduled_.erase(scheduled_.begin());
        apply(d, dt);
        replanned = replanned || d.kind == Decision::Kind::Switch || d.kind == Decision::Kind::Speed;
    }
    plan_ += replanned;
}

void Character::animate() {
    // The clip (and a transition from what was shown), then the look-at.
    sample_input(input_, clip_, time_, speed_, anchor_);
    if (blending_) {
        if (cfg_.transition == TransitionKind::DeadBlending)
            op_dead_blending(out_, scratch_, dirs_, transition_, input_, cfg_.extrapolation_halflife, float(blend_clock_), cfg_.blend_time);
        else
            op_inertialize(out_, offset_, input_, float(blend_clock_), cfg_.blend_time);
    } else {
        out_ = input_;
    }
    if (head_ >= 0 && cfg_.lookat_weight > 0.0f) {
        // A target circling in front of the character at head height, moving with it.
        const float m = lib_->metres_per_unit[size_t(skeleton_)];
        const kform g = root_motion_extract(out_.get(0), lib_->clips[size_t(clip_)].hips_forward);
        const float t = float(clock_);
        const vec3 off = vec3{1.5f * std::sin(0.4f * t + target_phase_.x), 1.6f, 2.5f + 1.0f * std::cos(0.3f * t + target_phase_.y)} / m;
        const vec3 doff = vec3{0.6f * std::cos(0.4f * t + target_phase_.x), 0.0f, -0.3f * std::sin(0.3f * t + target_phase_.y)} / m;
        const vec3 target = kform_mul_pos(g, off), target_vel = kform_mul_vel(g, off, doff);
        op_fk(global_, out_, lib_->skeletons[size_t(skeleton_)].parents);
        op_lookat(out_, global_, head_, target, target_vel, head_forward_, cfg_.lookat_weight);
    }
}

void Character::step(double dt, uint32_t tick) {
    events_.clear();
    tick_ = tick;
    // Playback speed eases towards its target (exact damper: any dt is fine).
    speed_ = damper_exact(speed_, speed_target_, kSpeedHalflife, float(dt));
    advance(dt, double(speed_) * dt);
    decide(dt, tick);
    animate();
}

void Character::copy_state_to(Character& out) const {
    // What animate() reads; the random generator (decisions) and the scratch poses are not needed.
    out.lib_ = lib_;
    out.skeleton_ = skeleton_;
    out.cfg_ = cfg_;
    out.clip_ = clip_;
    out.time_ = time_;
    out.speed_ = speed_;
    out.speed_target_ = speed_target_;
    out.anchor_ = anchor_;
    out.clock_ = clock_;
    out.blending_ = blending_;
    out.blend_clock_ = blend_clock_;
    if (blending_) {
        if (cfg_.transition == TransitionKind::DeadBlending) out.transition_ = transition_, out.dirs_ = dirs_;
        else out.offset_ = offset_;
    }
    out.epoch_ = epoch_;
    out.switches_ = switches_;
    out.plan_ = plan_;
    out.events_.clear();
    out.head_ = head_;
    out.head_forward_ = head_forward_;
    out.target_phase_ = target_phase_;
    const int n = lib_->skeletons[size_t(skeleton_)].size();
    for (Pose* p : {&out.scratch_, &out.input_, &out.global_, &out.out_})
        if (p->size() != n) p->resize(n);
    if (out.dirs_.size() != size_t(n)) out.dirs_.assign(size_t(n), quat{});
    if (out.transition_.size() != n) out.transition_.resize(n);
    if (out.offset_.size() != n) out.offset_.resize(n);
}

void Character::look_ahead(int ticks, double tick_dt, Character& out) const {
    copy_state_to(out);
    if (ticks <= 0) return;
    // The clip time the next `ticks` steps would add, each at its eased speed: the damper's speeds
    // form a geometric series (s_i = goal + (s_0 - goal) a^i), summed in closed form.
    const double a = std::exp(-(double(kLn2) * tick_dt) / (double(kSpeedHalflife) + 1e-5));
    const double goal = speed_target_, d0 = double(speed_) - goal;
    const double an = std::pow(a, ticks);
    const double sum = double(ticks) * goal + d0 * (std::abs(1.0 - a) > 1e-12 ? a * (1.0 - an) / (1.0 - a) : double(ticks));
    out.speed_ = float(goal + d0 * an);
    out.advance(double(ticks) * tick_dt, sum * tick_dt);
    out.animate();
}

}  // namespace ks
