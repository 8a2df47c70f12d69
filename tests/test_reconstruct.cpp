// Client reconstruction strategies on synthetic snapshot streams with known answers.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "client/src/reconstruct.h"
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include "tests/support/fd.h"

using namespace ks;

namespace {

Skeleton three_joints() {
    Skeleton s;
    s.names = {"root", "a", "b"};
    s.parents = {-1, 0, 1};
    s.offsets = {{0, 1, 0}, {0, 0.4f, 0}, {0, 0.4f, 0}};
    return s;
}

// Constant linear and angular velocities: exactly representable by extrapolation.
Pose truth_at(const Skeleton& s, double t, vec3 root_start = {0, 1, 0}) {
    Pose p(3);
    for (int j = 0; j < 3; ++j) p.pos[size_t(j)] = s.offsets[size_t(j)];
    p.pos[0] = root_start + vec3{1.5f, 0, 0.5f} * float(t);
    p.vel[0] = {1.5f, 0, 0.5f};
    p.rot[0] = quat_from_angle_axis(0.8f * float(t), {0, 1, 0});
    p.ang[0] = {0, 0.8f, 0};
    p.rot[1] = quat_from_angle_axis(1.3f * float(t) + 0.2f, {1, 0, 0});
    p.ang[1] = {1.3f, 0, 0};
    p.rot[2] = quat_from_angle_axis(-0.7f * float(t), normalize(vec3{0, 1, 1}));
    p.ang[2] = normalize(vec3{0, 1, 1}) * -0.7f;
    return p;
}

float worst_joint_error(const Skeleton& s, const Pose& a, const Pose& b) {
    Pose ga(3), gb(3);
    op_fk_static(ga, a, s.parents);
    op_fk_static(gb, b, s.parents);
    float w = 0;
    for (size_t j = 0; j < 3; ++j) w = std::max(w, length(ga.pos[j] - gb.pos[j]));
    return w;
}

// Snapshots every 1/30 s, arriving `latency` later, except those in `lost`; render at 60 Hz.
template <class Truth, class Check>
void run_stream(const Skeleton& s, ReconstructConfig cfg, double latency, double seconds, Truth truth, Check check,
                const std::function<bool(int)>& lost = {}) {
    CharacterReconstructor r(s, cfg);
    int next_snap = 0;
    const double snap_dt = 1.0 / 30.0, render_dt = 1.0 / 60.0;
    for (int frame = 0; frame * render_dt < seconds; ++frame) {
        const double now = frame * render_dt;
        while (next_snap * snap_dt + latency <= now + 1e-9) {
            if (!lost || !lost(next_snap)) {
                uint16_t epoch = 0;
                const Pose p = truth(next_snap * snap_dt, epoch);
                r.add_snapshot(next_snap * snap_dt, p, epoch);
            }
            ++next_snap;
        }
        if (!r.ready()) continue;
        check(now, r.render(now, render_dt), r.display_delay());
    }
}

}  // namespace

TEST(Reconstruct, ConstantVelocityIsReproducedExactlyByExtrapAndDeadblend) {
    const Skeleton s = three_joints();
    for (Strategy st : {Strategy::Extrap, Strategy::DeadBlend}) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        cfg.deadblend_halflife_s = 1e9f;  // pure dead reckoning of the shown pose
        float worst = 0;
        run_stream(s, cfg, 0.08, 3.0, [&](double t, uint16_t&) { return truth_at(s, t); },
                   [&](double now, const Pose& shown, double) { worst = std::max(worst, worst_joint_error(s, shown, truth_at(s, now))); });
        EXPECT_LT(worst, 2e-4f) << strategy_name(st);
        ks::test::record_figure(std::string("reconstruct constant velocity worst error m, ") + strategy_name(st), worst);
    }
    // The default dead blend (velocity half-life 5 s) stays within 3 mm.
    ReconstructConfig cfg;
    cfg.strategy = Strategy::DeadBlend;
    float worst = 0;
    run_stream(s, cfg, 0.08, 3.0, [&](double t, uint16_t&) { return truth_at(s, t); },
               [&](double now, const Pose& shown, double) { worst = std::max(worst, worst_joint_error(s, shown, truth_at(s, now))); });
    EXPECT_LT(worst, 3e-3f);
    ks::test::record_figure("reconstruct constant velocity worst error m, deadblend (default half-life)", worst);
}

TEST(Reconstruct, InterpShowsTheMotionExactlyItsDelayLate) {
    const Skeleton s = three_joints();
    for (Strategy st : {Strategy::Interp, Strategy::Hermite}) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        float worst = 0;
        int checked = 0;
        run_stream(s, cfg, 0.05, 3.0, [&](double t, uint16_t&) { return truth_at(s, t); },
                   [&](double now, const Pose& shown, double delay) {
                       if (now < 0.3) return;
                       EXPECT_DOUBLE_EQ(delay, 0.1);
                       // Root position moves linearly: exact for both. Hermite also for the rotations.
                       worst = std::max(worst, length(shown.pos[0] - truth_at(s, now - delay).pos[0]));
                       ++checked;
                   });
        EXPECT_GT(checked, 100);
        EXPECT_LT(worst, 1e-4f) << strategy_name(st);
    }
}

TEST(Reconstruct, TeleportsNeverShowIntermediateRootPositions) {
    const Skeleton s = three_joints();
    const vec3 far{30, 1, -20};
    auto truth = [&](double t, uint16_t& epoch) {
        if (t >= 1.0) {
            epoch = 1;
            return truth_at(s, t, far);
        }
        return truth_at(s, t);
    };
    for (Strategy st : all_strategies()) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        int smear = 0;
        run_stream(s, cfg, 0.07, 2.5, truth, [&](double now, const Pose& shown, double delay) {
            // Shown somewhere between the old and the new trajectory (more than 1 m from both)?
            const vec3 r = shown.pos[0];
            const double t = now - delay;
            const float to_old = length(r - truth_at(s, t).pos[0]), to_new = length(r - truth_at(s, t, far).pos[0]);
            if (to_old > 1.0f && to_new > 1.0f) ++smear;
        });
        EXPECT_EQ(smear, 0) << strategy_name(st);
    }
}

TEST(Reconstruct, AfterLossDeadblendStepsStaySmall) {
    // A turning, accelerating root; 6 snapshots (200 ms) lost twice. The displayed root's per-frame
    // step may differ from the true step by at most 3 cm (the pop threshold is 5 cm).
    const Skeleton s = three_joints();
    auto truth = [&](double t, uint16_t&) {
        Pose p = truth_at(s, t);
        const float a = 0.9f;
        p.pos[0] = {float(2.0 * std::sin(a * t)), 1.0f, float(2.0 * (1.0 - std::cos(a * t)))};
        p.vel[0] = {float(2.0 * a * std::cos(a * t)), 0.0f, float(2.0 * a * std::sin(a * t))};
        return p;
    };
    auto lost = [](int k) { return (k >= 40 && k < 46) || (k >= 70 && k < 76); };
    for (Strategy st : {Strategy::DeadBlend, Strategy::DeadBlendSod}) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        vec3 prev_shown{}, prev_true{};
        bool first = true;
        float worst = 0;
        run_stream(s, cfg, 0.06, 4.0, truth,
                   [&](double now, const Pose& shown, double) {
                       uint16_t e = 0;
                       const vec3 tr = truth(now, e).pos[0];
                       if (!first) worst = std::max(worst, length((shown.pos[0] - prev_shown) - (tr - prev_true)));
                       first = false;
                       prev_shown = shown.pos[0];
                       prev_true = tr;
                   },
                   lost);
        EXPECT_LT(worst, 0.03f) << strategy_name(st);
        ks::test::record_figure(std::string("reconstruct worst step deviation after 200 ms loss (m), ") + strategy_name(st), worst);
    }
}

TEST(Reconstruct, StrategyNamesRoundTrip) {
    for (const auto* list : {&all_strategies(), &ahead_strategies()})
        for (Strategy st : *list) {
            Strategy back;
            ASSERT_TRUE(strategy_from_name(strategy_name(st), back));
            EXPECT_EQ(back, st);
            EXPECT_EQ(uses_look_ahead(st), list == &ahead_strategies()) << strategy_name(st);
            EXPECT_FALSE(uses_look_ahead(base_strategy(st))) << strategy_name(st);
            EXPECT_EQ(base_strategy(ahead_form(st)), base_strategy(st)) << strategy_name(st);
            if (uses_look_ahead(st)) {
                EXPECT_EQ(ahead_form(base_strategy(st)), st) << strategy_name(st);
            }
        }
    Strategy x;
    EXPECT_FALSE(strategy_from_name("teleportation", x));
}

// ---- deadblend+sod: C1 correction offsets bounded by an acceleration budget ----

namespace {

const float kCircle = 0.9f;  // rad/s around a 2 m circle: speed 1.8 m/s, acceleration 1.62 m/s^2

Pose circling_truth(const Skeleton& s, double t, vec3 centre = {0, 0, 0}) {
    Pose p = truth_at(s, t);
    const float a = kCircle;
    p.pos[0] = centre + vec3{float(2.0 * std::sin(a * t)), 1.0f, float(2.0 * (1.0 - std::cos(a * t)))};
    p.vel[0] = {float(2.0 * a * std::cos(a * t)), 0.0f, float(2.0 * a * std::sin(a * t))};
    return p;
}

struct Shown {
    double now;
    vec3 pos, vel;
    uint16_t epoch;
};

// Snapshots at 30 Hz of the circling truth, each wrong by up to `pos_noise` per axis in the root
// position (and +-0.1 m/s, +-0.02 rad noise in velocity and rotations), arriving 70-90 ms late;
// rendered at 60 Hz. From `teleport_at` on the truth is 30 m away in epoch 1. on_teleport is
// called at the first render after the first epoch-1 snapshot arrives, with the newest snapshot.
struct NoisyRun {
    std::vector<Shown> frames;
    int teleport_frame = -1;  // index into frames of the first render after the teleport snapshot
};

NoisyRun run_noisy(const Skeleton& s, const ReconstructConfig& cfg, float pos_noise, double seconds, double teleport_at,
                   const std::function<void(double now, const Pose& shown, double snap_t, const Pose& snap)>& on_teleport = {}) {
    std::mt19937 gen(1234);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_real_distribution<double> late(0.07, 0.09);
    auto noise = [&](float amp) { return vec3{u(gen), u(gen), u(gen)} * amp; };
    const vec3 far{30, 0, -20};
    struct Pending {
        double arrive, t;
        uint16_t epoch;
        Pose pose;
    };
    std::vector<Pending> pending;
    const double snap_dt = 1.0 / 30.0, render_dt = 1.0 / 60.0;
    for (int k = 0; k * snap_dt < seconds; ++k) {
        const double t = k * snap_dt;
        const uint16_t epoch = t >= teleport_at ? 1 : 0;
        Pose p = circling_truth(s, t, epoch ? far : vec3{});
        p.pos[0] = p.pos[0] + noise(pos_noise);
        p.vel[0] = p.vel[0] + noise(0.1f);
        for (size_t j = 0; j < 3; ++j) p.rot[j] = quat_mul(quat_from_scaled_angle_axis(noise(0.02f)), p.rot[j]);
        pending.push_back({t + late(gen), t, epoch, p});
    }
    NoisyRun run;
    CharacterReconstructor r(s, cfg);
    double newest_t = -1;
    const Pose* newest = nullptr;
    bool teleport_seen = false, teleport_reported = false;
    for (int frame = 0; frame * render_dt < seconds; ++frame) {
        const double now = frame * render_dt;
        for (const Pending& p : pending)
            if (p.arrive <= now && p.arrive > now - render_dt) {
                r.add_snapshot(p.t, p.pose, p.epoch);
                if (p.t > newest_t) newest_t = p.t, newest = &p.pose;
                teleport_seen |= p.epoch == 1;
            }
        if (!r.ready()) continue;
        const Pose& shown = r.render(now, render_dt);
        if (teleport_seen && !teleport_reported) {
            teleport_reported = true;
            run.teleport_frame = int(run.frames.size());
            if (on_teleport) on_teleport(now, shown, newest_t, *newest);
        }
        run.frames.push_back({now, shown.pos[0], shown.vel[0], r.shown_epoch()});
    }
    return run;
}

struct Kinks {
    float worst_accel = 0;   // worst |second difference| / dt^2 of the root position (m/s^2)
    float worst_dvel = 0;    // worst |velocity change| / dt (m/s^2)
    float worst_vel_fd = 0;  // worst |central difference - reported velocity| (m/s)
    int checked = 0;
};

// Over the frames of one epoch (never across the teleport).
Kinks kinks_of(const NoisyRun& run) {
    Kinks k;
    for (size_t i = 1; i + 1 < run.frames.size(); ++i) {
        const Shown &a = run.frames[i - 1], &b = run.frames[i], &c = run.frames[i + 1];
        if (a.epoch != b.epoch || b.epoch != c.epoch || int(i) == run.teleport_frame || int(i + 1) == run.teleport_frame)
            continue;
        const float dt = float(b.now - a.now);
        k.worst_accel = std::max(k.worst_accel, length(c.pos - 2.0f * b.pos + a.pos) / (dt * dt));
        k.worst_dvel = std::max(k.worst_dvel, length(b.vel - a.vel) / dt);
        k.worst_vel_fd = std::max(k.worst_vel_fd, length((c.pos - a.pos) / (2.0f * dt) - b.vel));
        ++k.checked;
    }
    return k;
}

// The motion's own acceleration: the truth's, plus the prediction's velocity decay
// (ln 2 / half-life x the largest snapshot speed).
float own_accel(const ReconstructConfig& cfg) {
    const float vmax = 2.0f * kCircle + 0.1f * std::sqrt(3.0f);
    return 2.0f * kCircle * kCircle + kLn2 / cfg.predict_halflife_s * vmax;
}

}  // namespace

TEST(Reconstruct, DeadblendSodDisplayIsC1AcrossNoisySnapshots) {
    // Every snapshot is wrong by up to 3 cm per axis; the display never steps: the root's second
    // difference between 60 Hz frames stays within (accel_max + the motion's own) dt^2, its
    // velocity changes by at most that acceleration x dt, and the reported velocity is the
    // position's derivative. (The floor, min_ratio x 2 pi f, may override accel_max by design; the
    // settings here keep it from binding. A much lower floor lets velocity corrections drift:
    // accel 8 with ratio 0.02 strays 1.3 m from the truth on this stream.)
    const Skeleton s = three_joints();
    const float dt = 1.0f / 60.0f;
    struct Case {
        float accel_max, min_ratio;
    };
    for (Case c : {Case{20.0f, 0.25f}, Case{80.0f, 0.5f}, Case{320.0f, 0.5f}}) {
        ReconstructConfig cfg;
        cfg.strategy = Strategy::DeadBlendSod;
        cfg.correction_accel_max = c.accel_max;
        cfg.root_accel_max = c.accel_max;  // joint 0's position moves only with the root's own offset
        cfg.correction_min_ratio = c.min_ratio;
        const NoisyRun run = run_noisy(s, cfg, 0.03f, 6.0, 1e9);
        const Kinks k = kinks_of(run);
        const float bound = c.accel_max + own_accel(cfg);
        const float eps = 1e-5f / (dt * dt);  // float rounding of a ~3 m position, twice
        EXPECT_GT(k.checked, 300);
        EXPECT_LE(k.worst_accel, bound + eps) << "accel_max " << c.accel_max;
        EXPECT_LE(k.worst_dvel, bound + 1e-4f / dt) << "accel_max " << c.accel_max;
        EXPECT_LE(k.worst_vel_fd, bound * dt + 1e-3f) << "accel_max " << c.accel_max;
        ks::test::record_figure("reconstruct deadblend+sod worst root accel (m/s^2) with 3 cm noise, accel_max " +
                                    std::to_string(int(c.accel_max)),
                                k.worst_accel);
        // It still follows the truth: the corrections are absorbed, not ignored.
        float worst_err = 0;
        for (const Shown& f : run.frames)
            if (f.now > 0.5) worst_err = std::max(worst_err, length(f.pos - circling_truth(s, f.now).pos[0]));
        EXPECT_LT(worst_err, 0.25f) << "accel_max " << c.accel_max;
    }
    // The same stream shown by plain extrapolation steps at every snapshot: the bound is not vacuous.
    ReconstructConfig cfg;
    cfg.strategy = Strategy::Extrap;
    const Kinks e = kinks_of(run_noisy(s, cfg, 0.03f, 6.0, 1e9));
    EXPECT_GT(e.worst_accel, 3.0f * (20.0f + own_accel(cfg)));
}

TEST(Reconstruct, DeadblendSodBudgetHoldsAtTheEndOfALongChain) {
    // A still chain of six 0.4 m bones whose snapshots alternate between bent +0.08 rad and -0.08 rad
    // at every joint: each correction turns every joint the same way, so at the chain's end the
    // rotations above each bone add up. The end's world second difference stays within the budget
    // (the truth is still and the snapshots' velocities are zero, so all of it is correction).
    Skeleton s;
    const int n = 7;
    for (int j = 0; j < n; ++j) {
        s.names.push_back(std::string(1, char('a' + j)));
        s.parents.push_back(j - 1);
        s.offsets.push_back(j == 0 ? vec3{0, 1, 0} : vec3{0, 0.4f, 0});
    }
    ReconstructConfig cfg;
    cfg.strategy = Strategy::DeadBlendSod;
    cfg.correction_sod = {12.0f, 1.0f, 0.0f};
    cfg.correction_accel_max = 30.0f;
    cfg.correction_min_ratio = 0.01f;  // the floor never overrides the budget here
    CharacterReconstructor r(s, cfg);
    const double render_dt = 1.0 / 60.0;  // snapshots every other frame (30 Hz)
    std::vector<vec3> end;
    Pose global(n);
    for (int frame = 0; frame < 240; ++frame) {
        const double now = frame * render_dt;
        if (frame % 2 == 0) {
            Pose p(n);
            for (int j = 0; j < n; ++j) {
                p.pos[size_t(j)] = s.offsets[size_t(j)];
                p.rot[size_t(j)] = quat_from_angle_axis((frame / 2) % 2 ? 0.08f : -0.08f, {0, 0, 1});
            }
            r.add_snapshot(now - 0.05, p, 0);
        }
        op_fk_static(global, r.render(now, render_dt), s.parents);
        end.push_back(global.pos[size_t(n - 1)]);
    }
    float worst = 0;
    for (size_t i = 2; i < end.size(); ++i)
        worst = std::max(worst, length(end[i] - 2.0f * end[i - 1] + end[i - 2]) / float(render_dt * render_dt));
    EXPECT_LE(worst, cfg.correction_accel_max * 1.05f);
    EXPECT_GT(worst, cfg.correction_accel_max * 0.2f);  // the corrections do use the budget
}

TEST(Reconstruct, DeadblendSodTeleportShowsTheNewSnapshotExtrapolatedAtOnce) {
    const Skeleton s = three_joints();
    for (float predict_halflife : {0.3f, 1e6f}) {
        ReconstructConfig cfg;
        cfg.strategy = Strategy::DeadBlendSod;
        cfg.predict_halflife_s = predict_halflife;
        cfg.predict_root_halflife_s = predict_halflife;  // the root's own half-life: checked below
        cfg.correction_accel_max = 20.0f;
        cfg.root_accel_max = 20.0f;
        cfg.correction_min_ratio = 0.25f;
        int calls = 0;
        const NoisyRun run = run_noisy(s, cfg, 0.03f, 4.0, 2.0, [&](double now, const Pose& shown, double snap_t, const Pose& snap) {
            ++calls;
            const double te = now - snap_t;
            ASSERT_GT(te, 0.0);
            ASSERT_LT(te, cfg.extrap_cap_s);
            Pose expect(3);
            op_extrapolate_decayed(expect, snap, float(te), predict_halflife);
            for (size_t j = 0; j < 3; ++j) {
                EXPECT_LT(length(shown.pos[j] - expect.pos[j]), 1e-5f) << "joint " << j;
                EXPECT_GT(std::fabs(quat_dot(shown.rot[j], expect.rot[j])), 1 - 1e-6f) << "joint " << j;
                EXPECT_LT(length(shown.vel[j] - expect.vel[j]), 1e-5f) << "joint " << j;
                EXPECT_LT(length(shown.ang[j] - expect.ang[j]), 1e-5f) << "joint " << j;
            }
            // The snapshot's own velocity (decayed only by the prediction's half-life), not a blend
            // with the old motion's.
            const float decay = std::exp(-kLn2 * float(te) / predict_halflife);
            EXPECT_LT(length(shown.vel[0] - snap.vel[0] * decay), 1e-5f);
            if (predict_halflife > 1e5f) {
                EXPECT_LT(length(shown.vel[0] - snap.vel[0]), 1e-4f);
            }
        });
        EXPECT_EQ(calls, 1);
        ASSERT_GT(run.teleport_frame, 0);
        EXPECT_EQ(run.frames[size_t(run.teleport_frame)].epoch, 1);
        EXPECT_EQ(run.frames[size_t(run.teleport_frame - 1)].epoch, 0);
        EXPECT_GT(length(run.frames[size_t(run.teleport_frame)].pos - run.frames[size_t(run.teleport_frame - 1)].pos), 30.0f);
        // And C1 again within the new epoch (and before it).
        const Kinks k = kinks_of(run);
        EXPECT_LE(k.worst_accel, cfg.correction_accel_max + own_accel(cfg) + 1e-5f * 3600.0f) << predict_halflife;
    }
}

TEST(Reconstruct, DeadblendSodPredictsTheRootWithItsOwnHalfLife) {
    // Limbs decay with predict_halflife_s, the root with predict_root_halflife_s: at the first
    // frame after a teleport the display is the snapshot extrapolated that way, joint by joint.
    const Skeleton s = three_joints();
    ReconstructConfig cfg;
    cfg.strategy = Strategy::DeadBlendSod;
    cfg.predict_halflife_s = 0.2f;
    cfg.predict_root_halflife_s = 1e9f;
    int calls = 0;
    run_noisy(s, cfg, 0.03f, 4.0, 2.0, [&](double now, const Pose& shown, double snap_t, const Pose& snap) {
        ++calls;
        const float te = float(now - snap_t);
        Pose limbs(3), root(3);
        op_extrapolate_decayed(limbs, snap, te, 0.2f);
        op_extrapolate_decayed(root, snap, te, 1e9f);
        EXPECT_LT(length(shown.pos[0] - root.pos[0]), 1e-5f);
        EXPECT_LT(length(shown.vel[0] - snap.vel[0]), 1e-4f) << "constant-velocity root";
        for (size_t j = 1; j < 3; ++j) {
            EXPECT_GT(std::fabs(quat_dot(shown.rot[j], limbs.rot[j])), 1 - 1e-6f) << j;
            EXPECT_LT(length(shown.ang[j] - limbs.ang[j]), 1e-5f) << j;
        }
        EXPECT_GT(length(limbs.ang[1] - root.ang[1]), 1e-3f) << "the two half-lives differ here";
    });
    EXPECT_EQ(calls, 1);
}

TEST(Reconstruct, DeadblendSodWithoutDecayReproducesConstantVelocity) {
    // Exact snapshots of constant velocities and no prediction decay: no correction is ever
    // needed and the display is the truth.
    const Skeleton s = three_joints();
    ReconstructConfig cfg;
    cfg.strategy = Strategy::DeadBlendSod;
    cfg.predict_halflife_s = 1e9f;
    cfg.predict_root_halflife_s = 1e9f;
    float worst = 0;
    run_stream(s, cfg, 0.08, 3.0, [&](double t, uint16_t&) { return truth_at(s, t); },
               [&](double now, const Pose& shown, double) { worst = std::max(worst, worst_joint_error(s, shown, truth_at(s, now))); });
    EXPECT_LT(worst, 2e-4f);
}

TEST(Reconstruct, AheadStrategiesShowLookAheadSnapshotsAtTheirTimeExactly) {
    // Look-ahead snapshots (0.25 s ahead, arriving 60 ms after they were computed) of a motion the
    // extrapolation alone cannot follow (a swing): both +ahead strategies show it at the present.
    const Skeleton s = three_joints();
    auto swing = [&](double t) {
        Pose p = truth_at(s, t);
        p.pos[0].y = 1.0f + 0.3f * float(std::sin(6.0 * t));
        p.vel[0].y = 1.8f * float(std::cos(6.0 * t));
        return p;
    };
    for (const Strategy st : ahead_strategies()) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        CharacterReconstructor r(s, cfg);
        float worst = 0;
        int next = 0;
        for (int frame = 0; frame < 120; ++frame) {
            const double now = frame / 60.0;
            for (; next / 30.0 + 0.06 <= now + 1e-9; ++next) r.add_snapshot(next / 30.0 + 0.25, swing(next / 30.0 + 0.25), 0, 0, next / 30.0);
            if (!r.ready() || now < 0.5) continue;
            const Pose& shown = r.render(now, 1.0 / 60.0);
            worst = std::max(worst, worst_joint_error(s, shown, swing(now)));
        }
        EXPECT_LT(worst, 2e-3f) << strategy_name(st) << ": Hermite between look-ahead snapshots 33 ms apart";
        EXPECT_EQ(r.display_delay(), 0.0) << strategy_name(st);
    }
}

TEST(Reconstruct, ANewerPlanVoidsWhatOlderPlansSaidOfTheTimeAfterIt) {
    // Plan 0 says the root stays at x = 0 up to t = 0.5 s; a decision at 0.1 s: plan 1, computed
    // then, puts it at x = 10 at 0.35 s. Shown at 0.2 s, the old plan's snapshots after 0.1 s are
    // void, so the display heads for the new one at once (it does not wait for 0.35 s).
    const Skeleton s = three_joints();
    ReconstructConfig cfg;
    cfg.strategy = Strategy::HermiteAhead;
    CharacterReconstructor r(s, cfg);
    Pose still(3);
    for (int j = 0; j < 3; ++j) still.pos[size_t(j)] = s.offsets[size_t(j)];
    for (int i = 0; i <= 15; ++i) r.add_snapshot(i / 30.0, still, 0, 0, i / 30.0 - 0.25);
    EXPECT_NEAR(r.render(0.2, 1.0 / 60.0).pos[0].x, 0.0f, 1e-6f) << "the old plan, alone";
    Pose moved = still;
    moved.pos[0].x = 10.0f;
    r.add_snapshot(0.35, moved, 0, 1, 0.1);
    const float x = r.render(0.2, 1.0 / 60.0).pos[0].x;
    EXPECT_GT(x, 1.0f) << "on its way to the new plan's pose";
    EXPECT_LT(x, 10.0f);
    r.add_snapshot(0.3, still, 0, 0, 0.05);  // a late snapshot of the old plan about the time after
    EXPECT_NEAR(r.render(0.2, 1.0 / 60.0).pos[0].x, x, 1e-5f) << "void on arrival";
}

TEST(Reconstruct, ANewerPlanComingDueBeforeTheNewestEntryIsAbsorbedWithoutAStep) {
    // Plan 0's entries reach 0.5 s; a decision at 0.2 s, sent with a shorter horizon (the demo
    // server's --decision-restart), puts the root 30 cm away at 0.3 s, before plan 0's newest entry.
    // deadblend+sod+ahead must take it as news: its offset absorbs the change, so the display's
    // root moves by no more than its budget allows between frames (it jumped before that was so).
    const Skeleton s = three_joints();
    ReconstructConfig cfg;
    cfg.strategy = Strategy::DeadBlendSodAhead;
    const float dt = 1.0f / 60.0f;
    CharacterReconstructor r(s, cfg);
    Pose still(3);
    for (int j = 0; j < 3; ++j) still.pos[size_t(j)] = s.offsets[size_t(j)];
    for (int i = 0; i <= 15; ++i) r.add_snapshot(i / 30.0, still, 0, 0, i / 30.0 - 0.25);
    std::vector<float> xs;
    for (int f = 0; f <= 30; ++f) {
        if (f == 15) {
            Pose moved = still;
            moved.pos[0].x += 0.3f;
            r.add_snapshot(0.3, moved, 0, 1, 0.2);
            r.add_snapshot(0.4, moved, 0, 1, 0.25);
        }
        xs.push_back(r.render(f * dt, dt).pos[0].x);
    }
    float worst = 0;
    for (size_t i = 2; i < xs.size(); ++i) worst = std::max(worst, std::abs(xs[i] - 2 * xs[i - 1] + xs[i - 2]) / (dt * dt));
    // The root's correction stays within its budget, or within the floor's pace where the floor
    // binds (w >= min_ratio x 2 pi root_f on a 30 cm offset), with room for the motion's own.
    const float w_floor = cfg.correction_min_ratio * 2.0f * kPi * cfg.root_correction_f;
    EXPECT_LE(worst, 1.5f * std::max(cfg.ahead_root_accel_max, w_floor * w_floor * 0.3f)) << "m/s^2";
    EXPECT_GT(xs.back(), 0.15f) << "on its way to the new plan";
}

TEST(Reconstruct, TheLookAheadRootCorrectionKeepsItsOwnBudget) {
    // A newer plan moves the root 10 cm and holds it there: the display's only acceleration is
    // the correction's, which ahead_root_accel_max bounds (the floor set low enough not to bind).
    // The control: with the velocity-only default's root budget (150 m/s^2) in its place, the
    // correction is faster.
    const Skeleton s = three_joints();
    const float dt = 1.0f / 60.0f;
    auto worst_root_accel = [&](float ahead_root_budget, float root_budget) {
        ReconstructConfig cfg;
        cfg.strategy = Strategy::DeadBlendSodAhead;
        cfg.ahead_root_accel_max = ahead_root_budget;
        cfg.root_accel_max = root_budget;
        cfg.correction_min_ratio = 0.01f;
        CharacterReconstructor r(s, cfg);
        Pose still(3), moved(3);
        for (int j = 0; j < 3; ++j) still.pos[size_t(j)] = moved.pos[size_t(j)] = s.offsets[size_t(j)];
        moved.pos[0].x += 0.1f;
        for (int i = 0; i <= 15; ++i) r.add_snapshot(i / 30.0, still, 0, 0, i / 30.0 - 0.25);
        std::vector<float> xs;
        for (int f = 0; f <= 60; ++f) {
            if (f == 15)  // plan 1, computed at 0.2 s: the root already moved, from then on
                for (int i = 6; i <= 18; ++i) r.add_snapshot(i / 30.0, moved, 0, 1, 0.2);
            xs.push_back(r.render(f * dt, dt).pos[0].x);
        }
        float worst = 0;
        for (size_t i = 2; i < xs.size(); ++i) worst = std::max(worst, std::abs(xs[i] - 2 * xs[i - 1] + xs[i - 2]) / (dt * dt));
        EXPECT_GT(xs.back(), 0.09f) << "it reached the new plan";
        return worst;
    };
    const float budget = ReconstructConfig{}.ahead_root_accel_max, other = ReconstructConfig{}.root_accel_max;
    const float worst = worst_root_accel(budget, other);
    EXPECT_LE(worst, budget * 1.02f) << "m/s^2";
    EXPECT_EQ(worst_root_accel(budget, 10.0f), worst) << "the velocity-only root budget plays no part";
    EXPECT_GT(worst_root_accel(other, other), 1.5f * worst) << "the control: a larger budget, a faster correction";
}

TEST(Reconstruct, AheadStrategiesShowANewEpochAsSoonAsItArrives) {
    // Look-ahead snapshots 0.25 s ahead of a root standing at x = 0 (epoch 0), computed every 1/30 s
    // up to 0.4 s. A teleport at 0.42 s to x = 20 (epoch 1): its first snapshot, computed at
    // 0.4333 s for 0.5333 s, arrives at 0.45 s. From then on both +ahead forms show the new place,
    // though the render time has not reached that snapshot's time, and an epoch-0 snapshot of a
    // time after 0.4333 s (arriving late) is void.
    const Skeleton s = three_joints();
    Pose before(3);
    for (int j = 0; j < 3; ++j) before.pos[size_t(j)] = s.offsets[size_t(j)];
    Pose after = before;
    after.pos[0].x = 20.0f;
    for (const Strategy st : ahead_strategies()) {
        ReconstructConfig cfg;
        cfg.strategy = st;
        CharacterReconstructor r(s, cfg);
        for (int i = 0; i <= 12; ++i) {
            if (i == 6) continue;  // computed at 0.2 s: it arrives late, below
            r.add_snapshot(i / 30.0 + 0.25, before, 0, 0, i / 30.0);
        }
        for (int frame = 20; frame < 27; ++frame) r.render(frame / 60.0, 1.0 / 60.0);
        EXPECT_NEAR(r.displayed().pos[0].x, 0.0f, 1e-4f) << strategy_name(st) << ": before the news";
        r.add_snapshot(0.4333 + 0.1, after, 1, 0, 0.4333);
        r.add_snapshot(0.2 + 0.25, before, 0, 0, 0.2);
        for (int frame = 27; frame < 32; ++frame) {  // 0.45 .. 0.5167 s
            const Pose& shown = r.render(frame / 60.0, 1.0 / 60.0);
            EXPECT_NEAR(shown.pos[0].x, 20.0f, 0.01f) << strategy_name(st) << " at frame " << frame;
            EXPECT_EQ(r.shown_epoch(), 1) << strategy_name(st) << " at frame " << frame;
        }
    }
}
