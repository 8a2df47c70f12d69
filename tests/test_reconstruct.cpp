// Client reconstruction strategies on synthetic snapshot streams with known answers.
#include <gtest/gtest.h>

#include "client/reconstruct.h"
#include "common/anim/ops_fk.h"
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
    for (Strategy st : all_strategies()) {
        Strategy back;
        ASSERT_TRUE(strategy_from_name(strategy_name(st), back));
        EXPECT_EQ(back, st);
    }
    Strategy x;
    EXPECT_FALSE(strategy_from_name("teleportation", x));
}
