// Motion-fidelity metrics (programs/testbench/metrics/fidelity.h) and the replay's reports
// (programs/testbench/metrics/report.h) on hand-made cases with known answers.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "programs/testbench/metrics/fidelity.h"
#include "programs/testbench/metrics/report.h"
#include "tests/support/xml_check.h"

using namespace ks;

namespace {

constexpr double kHz = 60.0;
constexpr int kJoints = 4;
constexpr double kTwoPi = 6.283185307179586;

// A body of kJoints joints: joint 0 is the root itself, the others move around it (with
// acceleration, so second differences are not zero).
std::vector<vec3> body(vec3 root, double t) {
    std::vector<vec3> p(kJoints);
    p[0] = root;
    for (int j = 1; j < kJoints; ++j)
        p[j] = root + vec3(float(0.1 * j + 0.05 * std::sin(kTwoPi * (t + 0.1 * j))),
                           float(0.3 * j + 0.2 * std::sin(kTwoPi * 1.3 * t + j)), float(-0.05 * j));
    return p;
}

struct Frame {
    std::vector<vec3> truth, delayed, shown;
    std::vector<quat> truth_rot = std::vector<quat>(kJoints), shown_rot = std::vector<quat>(kJoints);
    double delay = 0;
    int epoch = -1;
};

void feed(FidelityAccumulator& a, int character, double t, const Frame& f) {
    a.add_frame(character, {t, f.truth, f.delayed, f.shown, f.truth_rot, f.shown_rot, f.delay, f.epoch});
}

// Feeds frames 0..count-1 of one character: truth(t) and shown(i, t, truth) given.
void run(FidelityAccumulator& a, int character, int count, const std::function<vec3(double)>& root,
         const std::function<std::vector<vec3>(int, double, const std::vector<vec3>&)>& shown) {
    for (int i = 0; i < count; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(root(t), t);
        f.delayed = f.truth;
        f.shown = shown(i, t, f.truth);
        feed(a, character, t, f);
    }
}

// Frames 0..count-1 shown exactly as the truth was d ago, the delay reported; with epoch_of, the
// display declares the epoch of its time.
void run_delayed(FidelityAccumulator& a, int character, int count, const std::function<vec3(double)>& root, double d,
                 const std::function<int(double)>& epoch_of = {}) {
    for (int i = 0; i < count; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(root(t), t);
        f.delayed = body(root(t - d), t - d);
        f.shown = f.delayed;
        f.delay = d;
        if (epoch_of) f.epoch = epoch_of(t - d);
        feed(a, character, t, f);
    }
}

vec3 walking(double t) { return vec3(float(1.4 * t), 0.0f, float(0.3 * std::sin(t))); }

std::vector<vec3> offset_all(const std::vector<vec3>& p, vec3 o) {
    std::vector<vec3> q = p;
    for (vec3& v : q) v += o;
    return q;
}

// An epoch change whose news reaches the client `late_frames` render frames after T.
void change(FidelityAccumulator& a, int character, const EpochMark& m, int late_frames) {
    a.add_epoch_change(character, m);
    a.news_arrived(character, m.time_s, m.time_s + late_frames / kHz);
}

}  // namespace

TEST(Fidelity, ConstantOffsetIsThreeCentimetresEverywhere) {
    FidelityAccumulator a;
    for (int c = 0; c < 2; ++c)
        run(a, c, 120, walking, [](int, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.0f, 0.03f, 0.0f)); });
    const FidelityResult r = a.result();
    for (double v : {r.present_err_cm.mean, r.present_err_cm.p50, r.present_err_cm.p95, r.present_err_cm.p99, r.present_err_cm.max})
        EXPECT_NEAR(v, 3.0, 1e-4);
    EXPECT_NEAR(r.shape_err_cm.mean, 3.0, 1e-4);  // d = 0: the same comparison
    EXPECT_EQ(r.pops, 0);
    EXPECT_NEAR(r.accel_rms_ratio, 1.0, 1e-3);  // only float rounding of G + offset differs
    EXPECT_EQ(r.rot_err_deg_mean, 0.0);
    EXPECT_EQ(r.display_delay_ms, 0.0);
    EXPECT_EQ(r.frames, 240);
    EXPECT_EQ(r.blackout_frames, 0);
    EXPECT_EQ(r.teleport_smear_frames, 0);
    EXPECT_EQ(r.teleports, 0);
    EXPECT_TRUE(std::isnan(r.teleport_settle_ms_mean)) << "no epoch changes: undefined, written as null";
    EXPECT_TRUE(std::isnan(r.blackout_ms_mean));
    EXPECT_TRUE(std::isnan(r.bytes_per_s));
    // One series entry per render frame, both characters merged.
    ASSERT_EQ(a.error_series().size(), 120u);
    EXPECT_NEAR(a.error_series()[7].first, 7 / kHz, 1e-12);
    EXPECT_NEAR(a.error_series()[7].second, 3.0, 1e-4);
}

TEST(Fidelity, TruthAgainstItselfIsExactAndBlackoutIsCounted) {
    FidelityAccumulator a;
    // A teleport whose news arrives 5 frames late: those frames are the blackout, the same for every
    // strategy; the display here is the truth everywhere else, so everything is exact.
    change(a, 0, {1.0, walking(1.0 - 1 / kHz), vec3(5.0f, 0.0f, 5.0f)}, 5);
    auto root = [](double t) { return t < 1.0 - 1e-9 ? walking(t) : vec3(5.0f, 0.0f, 5.0f) + walking(t - 1.0); };
    run(a, 0, 180, root, [&](int i, double t, const std::vector<vec3>& g) {
        return i >= 60 && i < 65 ? body(walking(t), t) : g;  // the old motion until the news
    });
    const FidelityResult r = a.result();
    EXPECT_EQ(r.present_err_cm.max, 0.0) << "blackout frames leave the error";
    EXPECT_EQ(r.shape_err_cm.max, 0.0);
    EXPECT_EQ(r.rot_err_deg_p95, 0.0);
    EXPECT_EQ(r.accel_rms_ratio, 1.0);
    EXPECT_EQ(r.pops, 0);
    EXPECT_EQ(r.teleport_smear_frames, 0);
    EXPECT_EQ(r.blackout_frames, 5);
    EXPECT_NEAR(r.blackout_ms_mean, 5000.0 / kHz, 1e-9);
    EXPECT_NEAR(r.blackout_ms_max, 5000.0 / kHz, 1e-9);
    EXPECT_EQ(r.teleports, 1);
    EXPECT_EQ(r.epoch_changes, 1);
    EXPECT_EQ(r.teleport_settle_ms_mean, 0.0) << "settle counts from the news";
    EXPECT_EQ(r.frames, 180);
    EXPECT_EQ(a.blackout_spans(), (std::vector<std::pair<double, double>>{{1.0, 1.0 + 5 / kHz}}));
}

TEST(Fidelity, DelayedFaithfulCopyHasNoPopsAtAnyDelay) {
    // A hand that reverses hard (a 6 Hz, 10 cm swing: 142 m/s^2 peaks, far above the 72 m/s^2 a
    // pop needs) shown exactly as it was d ago: no pops, whatever d.
    auto hand = [](double t) { return vec3(float(0.1 * std::sin(kTwoPi * 6 * t)), 1.0f, float(1.4 * t)); };
    for (double d : {0.0, 0.034, 0.1, 0.3}) {
        FidelityAccumulator a;
        run_delayed(a, 0, 240, hand, d);
        const FidelityResult r = a.result();
        EXPECT_EQ(r.pops, 0) << d;
        EXPECT_NEAR(r.accel_rms_ratio, 1.0, 0.02) << d;
        EXPECT_EQ(r.shape_err_cm.max, 0.0) << d;
        if (d > 0) {
            EXPECT_GT(r.present_err_cm.mean, 1.0) << d;
        }
    }
}

TEST(Fidelity, SmoothDisplayMissingAReversalHasErrorButNoPop) {
    // The truth runs at 3 m/s and reverses within two frames (a kink of 10 cm per frame^2). The
    // display overshoots, then turns smoothly at 30 m/s^2: wrong by centimetres, never a kink.
    const int reverse = 60;
    auto truth_x = [&](int i) { return i <= reverse ? 0.05 * i : 0.05 * reverse - 0.05 * (i - reverse); };
    std::vector<double> shown_x(200);
    double x = 0, v = 3.0;
    for (int i = 0; i < 200; ++i) {
        if (i > 0) {
            const double target_v = i > reverse + 3 ? -3.0 : 3.0;  // learns of it 3 frames late
            const double dv = std::clamp(target_v - v, -30.0 / kHz, 30.0 / kHz);
            v += dv;
            x += v / kHz;
        }
        shown_x[size_t(i)] = x;
    }
    FidelityAccumulator a;
    for (int i = 0; i < 200; ++i) {
        Frame f;
        f.truth = body(vec3(float(truth_x(i)), 0, 0), 0.0);
        f.delayed = f.truth;
        f.shown = body(vec3(float(shown_x[size_t(i)]), 0, 0), 0.0);
        feed(a, 0, i / kHz, f);
    }
    const FidelityResult r = a.result();
    EXPECT_GT(r.present_err_cm.max, 20.0);
    EXPECT_EQ(r.pops, 0);
}

TEST(Fidelity, SnapsOfThreeCentimetresArePopsAndOfOneAreNot) {
    auto pops_for = [](float step_m, int joints_moved) {
        FidelityAccumulator a;
        run(a, 0, 120, walking, [&](int i, double, const std::vector<vec3>& g) {
            auto d = g;
            if (i >= 50)
                for (int j = 0; j < joints_moved; ++j) d[size_t(kJoints - 1 - j)] += vec3(step_m, 0, 0);
            return d;
        });
        return a.result().pops;
    };
    // A step is a kink at the frame it happens and the next (out of and back into the motion).
    EXPECT_EQ(pops_for(0.03f, kJoints), 2);
    EXPECT_EQ(pops_for(0.03f, 1), 2) << "one joint is enough";
    EXPECT_EQ(pops_for(0.01f, kJoints), 0);
}

TEST(Fidelity, EachPopNamesItsCharacter) {
    // Character 7 snaps 3 cm at frame 50, character 2 is shown faithfully: both pops are 7's,
    // at the times of frames 50 and 51 (what the viewer marks for the selected character).
    FidelityAccumulator a;
    run(a, 2, 120, walking, [](int, double, const std::vector<vec3>& g) { return g; });
    run(a, 7, 120, walking, [](int i, double, const std::vector<vec3>& g) { return i >= 50 ? offset_all(g, vec3(0.03f, 0, 0)) : g; });
    ASSERT_EQ(a.pop_times().size(), 2u);
    ASSERT_EQ(a.pop_characters(), (std::vector<int>{7, 7}));
    EXPECT_NEAR(a.pop_times()[0], 50 / kHz, 1e-9);
    EXPECT_NEAR(a.pop_times()[1], 51 / kHz, 1e-9);
}

TEST(Fidelity, JumpWindowsCoverTheTruthsJumpAndTheDisplaysRenditionOnly) {
    // A reset at frame 50: the truth jumps by 3 m; the news arrives at frame 53, when the display
    // (which knows of it then) switches. Blackout: frames 50-52. Left out of pops and accel: frames
    // within 2 of frame 50 (the truth's jump) and of frame 53 (the display's). A persisting 3 cm
    // glitch from frame g is a pop at g and g + 1 where those count.
    const double T = 50 / kHz;
    const vec3 jump(3.0f, 0.0f, -1.0f);
    auto root = [&](double t) { return t < T - 1e-9 ? walking(t) : walking(t) + jump; };
    auto make = [&](int glitch_frame, bool declares_epoch) {
        FidelityAccumulator a;
        change(a, 0, {T, walking(T - 1 / kHz), walking(T) + jump, EpochKind::Reset}, 3);
        for (int i = 0; i < 150; ++i) {
            const double t = i / kHz;
            Frame f;
            f.truth = body(root(t), t);
            f.delayed = f.truth;
            f.shown = i < 53 ? body(walking(t), t) : f.truth;
            if (glitch_frame >= 0 && i >= glitch_frame) f.shown = offset_all(f.shown, vec3(0, 0.03f, 0));
            if (declares_epoch) f.epoch = i < 53 ? 0 : 1;
            feed(a, 0, t, f);
        }
        return a.result();
    };
    for (bool declares : {false, true}) {
        const FidelityResult clean = make(-1, declares);
        EXPECT_EQ(clean.pops, 0);
        EXPECT_EQ(clean.accel_rms_ratio, 1.0) << "the same frames for display and truth";
        EXPECT_EQ(clean.blackout_frames, 3);
        EXPECT_EQ(make(46, declares).pops, 2);
        EXPECT_EQ(make(47, declares).pops, 1);
        EXPECT_EQ(make(48, declares).pops, 0);
        EXPECT_EQ(make(55, declares).pops, 1);
        EXPECT_EQ(make(56, declares).pops, 2);
    }
}

TEST(Fidelity, TwoChangesWhoseNewsArrivesTogetherAreRenderedEachAtItsOwnSwitch) {
    // A reset in place at frame 60 (epoch 1) and a 10 m teleport at frame 63 (epoch 2); the news
    // of both arrives at frame 64. A display 100 ms late switches to epoch 1 at frame 66 and to 2
    // at frame 69: each switch renders its own change, so the 10 m step of frame 69 is a jump
    // frame and the display, a delayed copy of the truth, is exactly as smooth. (The old rule
    // let the switch to epoch 1 render both, and that one step made the acceleration ratio 10.9
    // on a 32-character recording.) A display that goes from epoch 0 straight to 2 renders both
    // at that one switch.
    const double T1 = 60 / kHz, T2 = 63 / kHz, d = 6 / kHz;
    const vec3 jump(10.0f, 0.0f, 0.0f);
    auto root = [&](double t) { return t < T2 - 1e-9 ? walking(t) : walking(t) + jump; };
    auto epoch_of = [&](double t) { return t < T1 - 1e-9 ? 0 : t < T2 - 1e-9 ? 1 : 2; };
    for (const bool skips_epoch_1 : {false, true}) {
        FidelityAccumulator a;
        a.add_epoch_change(0, {T1, walking(T1 - 1 / kHz), walking(T1), EpochKind::Reset, 1});
        a.add_epoch_change(0, {T2, walking(T2 - 1 / kHz), walking(T2) + jump, EpochKind::Teleport, 2});
        a.news_arrived(0, T1, 64 / kHz);
        a.news_arrived(0, T2, 64 / kHz);
        run_delayed(a, 0, 150, root, d, [&](double shown) { return skips_epoch_1 && epoch_of(shown) == 1 ? 0 : epoch_of(shown); });
        const FidelityResult r = a.result();
        EXPECT_EQ(r.pops, 0) << skips_epoch_1;
        EXPECT_NEAR(r.accel_rms_ratio, 1.0, 0.05) << skips_epoch_1;
    }
}

TEST(Fidelity, ADisplayCannotHideAKinkByDeclaringAnEpoch) {
    FidelityAccumulator a;
    for (int i = 0; i < 120; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(walking(t), t);
        f.delayed = f.truth;
        f.shown = i >= 50 ? offset_all(f.truth, vec3(0.1f, 0, 0)) : f.truth;
        f.epoch = i >= 50 ? 1 : 0;  // no epoch change of the truth, no news: not a jump frame
        feed(a, 0, t, f);
    }
    EXPECT_EQ(a.result().pops, 2);
}

TEST(Fidelity, ASlowSlideAcrossATeleportCounts) {
    // Standing at a = 0, teleported at T (frame 30) to b = (2, 0, 0), news at frame 33. A display
    // that switches at once is exact; one that slides from a to b over 10 frames from the news is
    // smear, pops (its velocity steps by 12 m/s) and accel.
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(2, 0, 0);
    auto root = [&](double t) { return t < T - 1e-9 ? a0 : b0; };
    for (bool slide : {false, true}) {
        FidelityAccumulator a;
        change(a, 0, {T, a0, b0}, 3);
        run(a, 0, 90, root, [&](int i, double, const std::vector<vec3>& g) {
            if (i < 33) return offset_all(g, a0 - g[0]);  // at a until the news
            if (!slide || i >= 43) return g;
            return offset_all(g, (a0 + (b0 - a0) * (float(i - 33) / 10.0f)) - b0);
        });
        const FidelityResult r = a.result();
        // On the way, more than 25 cm from both ends: 0.4 .. 1.6 m, i = 35..41: 7 frames.
        EXPECT_EQ(r.teleport_smear_frames, slide ? 7 : 0);
        if (slide) {
            EXPECT_GT(r.pops, 0);
            EXPECT_GT(r.accel_rms_ratio, 2.0);
            EXPECT_GT(r.present_err_cm.max, 100.0);
            EXPECT_NEAR(r.teleport_settle_ms_max, 10 * 1000.0 / kHz, 1e-6) << "arrives 10 frames after the news";
        } else {
            EXPECT_EQ(r.pops, 0);
            EXPECT_EQ(r.present_err_cm.max, 0.0);
            EXPECT_EQ(r.teleport_settle_ms_max, 0.0);
        }
        EXPECT_EQ(r.blackout_frames, 3);
    }
}

TEST(Fidelity, ALateViewOfThePreTeleportPathIsNotSmear) {
    // The character walks at 2.8 m/s away from the destination side, 60 degrees off the teleport
    // line, and reaches a = 0 at T; b is 5 m along +x. The display is the truth 100 ms late and
    // claims no delay, so on the frame of T it shows the root 28 cm before a: on the b side of a
    // (u > 0), 24 cm from the line, more than 25 cm from a and b - "on the way" by the letter,
    // but a place the character truly was a moment ago.
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(5, 0, 0), dir(-0.5f, 0.8660254f, 0);
    auto root = [&](double t) { return t < T - 1e-9 ? a0 + dir * float(2.8 * (t - T)) : b0; };
    FidelityAccumulator acc;
    change(acc, 0, {T, a0, b0}, 0);
    for (int i = 0; i < 90; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(root(t), t);
        f.delayed = f.truth;
        f.shown = body(root(t - 0.1), t - 0.1);
        feed(acc, 0, t, f);
    }
    EXPECT_EQ(acc.result().teleport_smear_frames, 0);
    // The same display, had the character never been there (it stood at a), is a smear frame.
    FidelityAccumulator still;
    change(still, 0, {T, a0, b0}, 0);
    auto stand = [&](double t) { return t < T - 1e-9 ? a0 : b0; };
    for (int i = 0; i < 90; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(stand(t), t);
        f.delayed = f.truth;
        f.shown = i == 30 ? body(root(t - 0.1), t - 0.1) : body(stand(t - 0.1), t - 0.1);
        feed(still, 0, t, f);
    }
    EXPECT_EQ(still.result().teleport_smear_frames, 1);
}

TEST(Fidelity, TheOldMotionCarriedOnBeforeTheNewsIsNotSmear) {
    // Running at 4 m/s along +x, through a = 0 at T (frame 30), teleported 10 m ahead to b. A
    // display that carries the old motion on (an extrapolation) is on the way from a to b, more
    // than 25 cm from both and from every place the character was, from 4 frames after T. Before
    // the news (12 frames after T) it cannot know b: not smear. The same display after the news is.
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(10, 0, 0), v(4, 0, 0);
    auto root = [&](double t) { return t < T - 1e-9 ? a0 + v * float(t - T) : b0 + v * float(t - T); };
    auto carried_on = [&](int i, double t, const std::vector<vec3>& g) {
        return i >= 30 && i < 42 ? offset_all(g, a0 + v * float(t - T) - g[0]) : g;
    };
    FidelityAccumulator blackout;
    change(blackout, 0, {T, a0, b0}, 12);
    run(blackout, 0, 90, root, carried_on);
    EXPECT_EQ(blackout.result().teleport_smear_frames, 0);
    EXPECT_EQ(blackout.result().blackout_frames, 12);
    FidelityAccumulator known;
    change(known, 0, {T, a0, b0}, 0);
    run(known, 0, 90, root, carried_on);
    EXPECT_EQ(known.result().teleport_smear_frames, 8) << "frames 34..41: 27 to 73 cm past a";
}

TEST(Fidelity, ALateViewOfThePathAfterATeleportIsNotSmear) {
    // Teleported at T from a = 0 to b = 5 m along +x, the character walks back towards a at
    // 2.8 m/s. A display 150 ms late (claiming no delay) shows, from about 90 ms after T on, places
    // on the way from a to b more than 25 cm from both and from the truth now, but places the
    // character truly was after the teleport: not smear. Had it walked the other way, they would be.
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(5, 0, 0), back(-2.8f, 0, 0);
    for (bool walks : {true, false}) {
        auto root = [&](double t) { return t < T - 1e-9 ? a0 : b0 + back * float(walks ? t - T : T - t); };
        FidelityAccumulator acc;
        change(acc, 0, {T, a0, b0}, 0);
        run(acc, 0, 90, root, [&](int, double t, const std::vector<vec3>&) {
            return body(t - 0.15 < T - 1e-9 ? a0 : b0 + back * float(t - 0.15 - T), t - 0.15);
        });
        if (walks) {
            EXPECT_EQ(acc.result().teleport_smear_frames, 0);
        } else {
            EXPECT_GT(acc.result().teleport_smear_frames, 10);
        }
    }
}

TEST(Fidelity, ExponentialConvergenceSettlesFromTheNews) {
    // Truth at b from T on; the news comes 4 frames later, at A, and the display converges from a
    // then: p = b + (a - b) exp(-(t - A) / 0.1), |a - b| = 1 m. Within 5 cm when
    // exp(-x / 0.1) <= 0.05, x >= 0.1 ln 20 = 0.29957 s: the first frame is x = 18/60 = 300 ms.
    const vec3 a0(1.0f, 2.0f, 3.0f);
    const vec3 b0 = a0 + vec3(0.6f, 0.0f, -0.8f);  // 1 m away, diagonally
    const double T = 30 / kHz, A = 34 / kHz;
    FidelityAccumulator acc;
    change(acc, 3, {T, a0, b0}, 4);
    auto root = [&](double t) { return t < T - 1e-9 ? a0 : b0; };
    run(acc, 3, 120, root, [&](int, double t, const std::vector<vec3>& g) {
        if (t < A - 1e-9) return offset_all(g, a0 - g[0]);
        const float k = float(std::exp(-(t - A) / 0.1));
        return offset_all(g, (a0 - b0) * k);
    });
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.teleport_settle_ms_mean, 300.0, 1e-6);
    EXPECT_NEAR(r.blackout_ms_mean, 4000.0 / kHz, 1e-9);
}

TEST(Fidelity, NeverSettlingCountsTheTimeToTheEnd) {
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(4, 0, 0);
    FidelityAccumulator acc;
    change(acc, 0, {T, a0, b0}, 2);
    run(acc, 0, 120, [&](double t) { return t < T - 1e-9 ? a0 : b0; },
        [&](int, double, const std::vector<vec3>& g) { return offset_all(g, a0 - g[0]); });  // stuck at a
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.teleport_settle_ms_mean, (119 - 32) * 1000.0 / kHz, 1e-6);
    EXPECT_EQ(r.teleport_smear_frames, 0) << "at the origin is not on the way";
}

TEST(Fidelity, NewsThatNeverComesBlacksOutTheRest) {
    FidelityAccumulator acc;
    acc.add_epoch_change(0, {1.0, walking(1.0), vec3(3, 0, 0)});
    run(acc, 0, 120, walking, [](int, double, const std::vector<vec3>& g) { return g; });
    const FidelityResult r = acc.result();
    EXPECT_EQ(r.blackout_frames, 60);
    EXPECT_EQ(r.teleports, 0) << "no news: no settle";
    EXPECT_TRUE(std::isnan(r.blackout_ms_mean));
    ASSERT_EQ(acc.blackout_spans().size(), 1u);
    EXPECT_NEAR(acc.blackout_spans()[0].second, 119 / kHz, 1e-12);
}

TEST(Fidelity, DelayedDisplayHasNoShapeErrorAndSettlesInItsDelay) {
    // Running at 4.5 m/s along -x (with some sway), teleported at T = 1 s to x = +3 (ahead of where it
    // came from, so right after T the 100 ms delayed display, still showing the run, lies between
    // origin and destination: not a smear, it is where the truth was), then running on along -x
    // (back along the teleport's path) or along -z. The news comes at T (no blackout).
    const double T = 1.0, d = 0.1;
    for (bool back_along_path : {true, false}) {
        auto root = [&](double t) {
            const float sway = float(0.05 * std::sin(kTwoPi * 0.7 * t));
            if (t < T - 1e-9) return vec3(float(-4.5 * t), sway, 0);
            return back_along_path ? vec3(float(3.0 - 4.5 * (t - T)), sway, 0) : vec3(3.0f, sway, float(-4.5 * (t - T)));
        };
        FidelityAccumulator acc;
        change(acc, 1, {T, root(T - 1 / kHz), root(T)}, 0);
        run_delayed(acc, 1, 150, root, d, [&](double shown) { return shown < T - 1e-9 ? 0 : 1; });
        const FidelityResult r = acc.result();
        EXPECT_EQ(r.shape_err_cm.max, 0.0);
        EXPECT_NEAR(r.display_delay_ms, 100.0, 1e-9);
        EXPECT_GT(r.present_err_cm.mean, 40.0);  // 45 cm behind, and metres for 100 ms after T
        EXPECT_EQ(r.teleport_smear_frames, 0) << back_along_path;
        EXPECT_NEAR(r.teleport_settle_ms_mean, 100.0, 1e-6);
        EXPECT_EQ(r.pops, 0) << "the displayed jump at T + d is the teleport";
        EXPECT_NEAR(r.accel_rms_ratio, 1.0, 0.1);
    }
}

TEST(Fidelity, RotationErrorOfAKnownAngle) {
    const quat off = quat_from_angle_axis(30.0f * kPi / 180.0f, normalize(vec3(1, 2, 3)));
    FidelityAccumulator acc;
    for (int i = 0; i < 30; ++i) {
        const double t = i / kHz;
        Frame f;
        f.truth = body(walking(t), t);
        f.delayed = f.truth;
        f.shown = f.truth;
        for (int j = 0; j < kJoints; ++j) {
            f.truth_rot[j] = quat_from_angle_axis(float(0.3 * j + t), normalize(vec3(float(j), 1.0f, 0.5f)));
            f.shown_rot[j] = quat_mul(off, f.truth_rot[j]);
            if (j % 2) f.shown_rot[j] = -f.shown_rot[j];  // the other hemisphere: same rotation
        }
        feed(acc, 0, t, f);
    }
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.rot_err_deg_mean, 30.0, 1e-3);
    EXPECT_NEAR(r.rot_err_deg_p95, 30.0, 1e-3);
    EXPECT_EQ(r.present_err_cm.max, 0.0);
}

TEST(Fidelity, PercentilesAreNearestRank) {
    // 100 joints with errors 1..100 cm in one frame: p50 is rank 50, p95 rank 95, p99 rank 99.
    FidelityAccumulator acc;
    std::vector<vec3> g(100), s(100);
    std::vector<quat> q(100);
    for (int j = 0; j < 100; ++j) {
        g[j] = vec3(float(j), 0, 0);
        s[j] = g[j] + vec3(0, 0.01f * float(j + 1), 0);
    }
    acc.add_frame(0, {0.0, g, g, s, q, q, 0.0, -1});
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.present_err_cm.p50, 50.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.p95, 95.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.p99, 99.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.mean, 50.5, 1e-4);
    EXPECT_NEAR(r.present_err_cm.max, 100.0, 1e-4);

    ValueHistogram h;
    EXPECT_TRUE(std::isnan(h.percentile(95, 100)));
    for (int i = 100; i >= 1; --i) h.add(i);
    EXPECT_EQ(h.percentile(95, 100), 95.0);
    EXPECT_EQ(h.percentile(50, 100), 50.0);
    EXPECT_EQ(h.percentile(1, 1000), 1.0);
    EXPECT_EQ(h.max(), 100.0);
    EXPECT_EQ(h.mean(), 50.5);
    // Many close values: within 0.1 % of the exact nearest rank.
    ValueHistogram dense;
    for (int i = 1; i <= 100000; ++i) dense.add(0.001 * ((i * 7919) % 100000 + 1));
    EXPECT_NEAR(dense.percentile(95, 100), 95.0, 95.0 * 1e-3);
    EXPECT_NEAR(dense.percentile(50, 100), 50.0, 50.0 * 1e-3);
    EXPECT_NEAR(dense.max(), 100.0, 1e-12);
    // Zeros and a non-finite value.
    ValueHistogram z;
    for (int i = 0; i < 10; ++i) z.add(0.0);
    EXPECT_EQ(z.percentile(95, 100), 0.0);
    z.add(NAN);
    EXPECT_TRUE(std::isinf(z.max()));
}

TEST(Fidelity, ErrorSeriesMergesCharactersByRenderFrame) {
    FidelityAccumulator acc;
    // Character 0 entirely first, then character 1 (not interleaved), errors 1 and 3 cm.
    run(acc, 0, 30, walking, [](int, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.01f, 0, 0)); });
    run(acc, 1, 40, walking, [](int, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.03f, 0, 0)); });
    const auto& s = acc.error_series();
    ASSERT_EQ(s.size(), 40u);
    EXPECT_NEAR(s[10].second, 2.0, 1e-4);
    EXPECT_NEAR(s[35].second, 3.0, 1e-4);
    for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1].first, s[i].first);
}

TEST(Fidelity, BytesBitsAndMisuse) {
    FidelityAccumulator acc;
    acc.add_bytes(1000, 2);
    acc.add_bytes(3000, 2);
    acc.add_joint_bits(185, 10);
    EXPECT_EQ(acc.result().bytes_per_s, 1000.0);
    EXPECT_EQ(acc.result().bits_per_joint, 18.5);

    std::vector<vec3> g(3), s(2);
    std::vector<quat> q(3);
    EXPECT_THROW(acc.add_frame(0, {0.0, g, g, s, q, q, 0.0, -1}), std::invalid_argument);
    acc.add_frame(0, {1.0, g, g, g, q, q, 0.0, -1});
    EXPECT_THROW(acc.add_frame(0, {1.0, g, g, g, q, q, 0.0, -1}), std::invalid_argument) << "same time";
    EXPECT_THROW(acc.add_epoch_change(0, {1.02, {}, {}}), std::logic_error) << "its window has begun";
    EXPECT_NO_THROW(acc.add_epoch_change(0, {1.1, {}, {}}));
    EXPECT_THROW(acc.news_arrived(0, 1.1, 0.9), std::logic_error) << "news in the past of the frames";
    EXPECT_NO_THROW(acc.news_arrived(0, 1.1, 1.15));
    EXPECT_NO_THROW(acc.add_epoch_change(1, {0.0, {}, {}, EpochKind::Reset})) << "another character";
    EXPECT_THROW({ FidelityAccumulator bad(FidelityConfig{0.0}); }, std::invalid_argument);
    EXPECT_EQ(acc.epoch_times(), (std::vector<double>{0.0, 1.1}));
}

// ---- reports ----

namespace {

// A minimal JSON reader: enough to check the report is well formed and read it back.
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    double num = 0;
    std::string str;
    std::vector<Json> arr;
    std::vector<std::pair<std::string, Json>> obj;
    const Json& at(const std::string& k) const {
        for (const auto& [key, v] : obj)
            if (key == k) return v;
        throw std::out_of_range("no key " + k);
    }
};

struct JsonReader {
    const std::string& s;
    size_t i = 0;
    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
    }
    void expect(char c) {
        ws();
        if (i >= s.size() || s[i] != c) throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(i));
        ++i;
    }
    std::string string() {
        expect('"');
        std::string o;
        while (i < s.size() && s[i] != '"') {
            if (static_cast<unsigned char>(s[i]) < 0x20) throw std::runtime_error("control character in string");
            if (s[i] == '\\') {
                ++i;
                const char e = s.at(i);
                if (e == 'u') {
                    o += char(std::stoi(s.substr(i + 1, 4), nullptr, 16));
                    i += 4;
                } else {
                    o += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                }
                ++i;
            } else {
                o += s[i++];
            }
        }
        expect('"');
        return o;
    }
    Json value() {
        ws();
        Json j;
        if (i >= s.size()) throw std::runtime_error("unexpected end");
        if (s[i] == '{') {
            j.kind = Json::Object;
            ++i;
            ws();
            if (s.at(i) == '}') return ++i, j;
            for (;;) {
                std::string k = string();
                expect(':');
                j.obj.emplace_back(k, value());
                ws();
                if (s.at(i) == ',') {
                    ++i;
                    continue;
                }
                expect('}');
                return j;
            }
        }
        if (s[i] == '[') {
            j.kind = Json::Array;
            ++i;
            ws();
            if (s.at(i) == ']') return ++i, j;
            for (;;) {
                j.arr.push_back(value());
                ws();
                if (s.at(i) == ',') {
                    ++i;
                    continue;
                }
                expect(']');
                return j;
            }
        }
        if (s[i] == '"') {
            j.kind = Json::String;
            j.str = string();
            return j;
        }
        if (s.compare(i, 4, "null") == 0) return i += 4, j;
        // Number, JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
        const size_t b = i;
        if (s[i] == '-') ++i;
        if (i < s.size() && s[i] == '0') ++i;
        else if (i < s.size() && isdigit(static_cast<unsigned char>(s[i])))
            while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
        else throw std::runtime_error(std::string("bad value at ") + std::to_string(b));
        if (i < s.size() && s[i] == '.') {
            ++i;
            if (!isdigit(static_cast<unsigned char>(s.at(i)))) throw std::runtime_error("bad fraction");
            while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
        }
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
            ++i;
            if (s.at(i) == '+' || s[i] == '-') ++i;
            if (!isdigit(static_cast<unsigned char>(s.at(i)))) throw std::runtime_error("bad exponent");
            while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
        }
        j.kind = Json::Number;
        j.num = std::stod(s.substr(b, i - b));
        return j;
    }
    Json document() {
        Json j = value();
        ws();
        if (i != s.size()) throw std::runtime_error("trailing text");
        return j;
    }
};

std::vector<std::string> keys(const Json& j) {
    std::vector<std::string> k;
    for (const auto& [key, v] : j.obj) k.push_back(key);
    return k;
}

ReportHeader test_header() {
    ReportHeader h;
    h.recording = "runs/a \"b\"\\c.ksrec";
    h.profile = {"mobile", 90, 30, 0.03, 3, 0.01};
    h.snapshot_hz = 30;
    h.render_hz = 60;
    h.seed = 7;
    return h;
}

std::vector<StrategyReport> test_results() {
    // One real run with a teleport, one hand-filled with undefined values.
    FidelityAccumulator acc;
    const double T = 1.0;
    change(acc, 0, {T, walking(T - 1 / kHz), vec3(4, 0, 0)}, 0);
    run(acc, 0, 5000, [&](double t) { return t < T - 1e-9 ? walking(t) : vec3(4, 0, 0) + walking(t - T); },
        [](int i, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.01f * float(i % 3), 0, 0)); });
    acc.add_bytes(123456.7, 1.0);
    acc.add_joint_bits(1850, 100);
    std::vector<StrategyReport> out;
    out.push_back({"deadblend+sod", acc.result(), acc.error_series()});
    FidelityResult undefined;
    undefined.present_err_cm = {NAN, NAN, NAN};
    undefined.accel_rms_ratio = INFINITY;
    undefined.teleport_settle_ms_mean = NAN;
    undefined.pops = 12345678901LL;
    out.push_back({"snap", undefined, {}});
    return out;
}

}  // namespace

TEST(Fidelity, JsonIsWellFormedExactAndDeterministic) {
    const ReportHeader h = test_header();
    const std::vector<StrategyReport> res = test_results();
    const std::string json = fidelity_json(h, res);
    EXPECT_EQ(json, fidelity_json(test_header(), test_results())) << "byte-identical for the same inputs";
    Json j;
    ASSERT_NO_THROW(j = JsonReader{json}.document()) << json;
    ASSERT_EQ(j.kind, Json::Object);
    EXPECT_EQ(keys(j), (std::vector<std::string>{"recording", "profile", "snapshot_hz", "render_hz", "seed", "results"}));
    EXPECT_EQ(j.at("recording").str, h.recording);
    EXPECT_EQ(keys(j.at("profile")), (std::vector<std::string>{"name", "latency_ms", "jitter_ms", "loss", "burst", "duplicate"}));
    EXPECT_EQ(j.at("profile").at("name").str, "mobile");
    EXPECT_EQ(j.at("profile").at("loss").num, 0.03);
    EXPECT_NE(json.find("\"snapshot_hz\": 30,"), std::string::npos);
    EXPECT_NE(json.find("\"render_hz\": 60,"), std::string::npos);
    EXPECT_EQ(j.at("seed").num, 7);
    const Json& results = j.at("results");
    ASSERT_EQ(results.kind, Json::Array);
    ASSERT_EQ(results.arr.size(), 2u);
    const Json& r0 = results.arr[0];
    EXPECT_EQ(keys(r0), (std::vector<std::string>{"strategy", "present_err_cm", "shape_err_cm", "rot_err_deg", "display_delay_ms",
                                                  "accel_rms_ratio", "pops", "teleport_smear_frames", "teleport_settle_ms",
                                                  "bytes_per_s", "bits_per_joint", "blackout_frames", "blackout_ms"}));
    EXPECT_EQ(keys(r0.at("present_err_cm")), (std::vector<std::string>{"mean", "p50", "p95", "p99", "max"}));
    EXPECT_EQ(keys(r0.at("blackout_ms")), (std::vector<std::string>{"mean", "max"}));
    EXPECT_EQ(keys(r0.at("shape_err_cm")), (std::vector<std::string>{"mean", "p95", "max"}));
    EXPECT_EQ(keys(r0.at("rot_err_deg")), (std::vector<std::string>{"mean", "p95"}));
    EXPECT_EQ(keys(r0.at("teleport_settle_ms")), (std::vector<std::string>{"mean", "max"}));
    EXPECT_EQ(r0.at("strategy").str, "deadblend+sod");
    const FidelityResult& f = res[0].result;
    // %.6g: six significant digits.
    EXPECT_NEAR(r0.at("present_err_cm").at("mean").num, f.present_err_cm.mean, 1e-5 * f.present_err_cm.mean);
    EXPECT_NEAR(r0.at("present_err_cm").at("max").num, 2.0, 1e-4);
    EXPECT_EQ(r0.at("bytes_per_s").num, 123457.0);  // "123457"
    EXPECT_EQ(r0.at("bits_per_joint").num, 18.5);
    EXPECT_EQ(r0.at("pops").num, double(f.pops));
    EXPECT_EQ(r0.at("teleport_settle_ms").at("mean").num, 0.0);
    const Json& r1 = results.arr[1];
    EXPECT_EQ(r1.at("present_err_cm").at("p95").kind, Json::Null);
    EXPECT_EQ(r1.at("accel_rms_ratio").kind, Json::Null);
    EXPECT_NE(json.find("\"pops\": 12345678901"), std::string::npos);
    // Number format.
    EXPECT_EQ(json_number(30), "30");
    EXPECT_EQ(json_number(0.1 + 0.2), "0.3");
    EXPECT_EQ(json_number(123456789.0), "1.23457e+08");
    EXPECT_EQ(json_number(-0.0), "0");
    EXPECT_EQ(json_number(NAN), "null");
    // No results at all is still a valid document.
    EXPECT_NO_THROW(JsonReader{fidelity_json(h, {})}.document());
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    for (size_t b = 0, e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) lines.push_back(text.substr(b, e - b));
    return lines;
}

// (start, end) of each space-separated word of a line.
std::vector<std::pair<size_t, size_t>> word_spans(const std::string& line) {
    std::vector<std::pair<size_t, size_t>> spans;
    for (size_t b = line.find_first_not_of(' '); b != std::string::npos; b = line.find_first_not_of(' ', b)) {
        const size_t e = std::min(line.find(' ', b), line.size());
        spans.emplace_back(b, e);
        b = e;
    }
    return spans;
}

// The column names, the rows' lines, and the legend and notes (joined into one line each) of a table.
struct ParsedTable {
    std::vector<std::string> columns, rows;
    std::string legend, notes;
};
ParsedTable parse_table(const std::string& table) {
    ParsedTable p;
    const std::vector<std::string> lines = lines_of(table);
    size_t i = 2;  // after the recording and profile lines
    for (const auto& [b, e] : word_spans(lines.at(i))) p.columns.push_back(lines[i].substr(b, e - b));
    for (++i; i < lines.size() && lines[i].rfind("columns: ", 0) != 0; ++i) p.rows.push_back(lines[i]);
    std::string* into = nullptr;
    for (; i < lines.size(); ++i) {
        if (lines[i].rfind("columns: ", 0) == 0) into = &p.legend;
        else if (lines[i].rfind("note: ", 0) == 0) into = &p.notes;
        else if (lines[i].rfind("  ", 0) != 0) into = nullptr;
        if (!into) continue;
        if (!into->empty()) *into += ' ';
        into->append(lines[i], lines[i].find_first_not_of(' '));
    }
    return p;
}

// Every row has a cell under each column name: the strategy left-aligned with its name, the
// numbers right-aligned with theirs.
void expect_aligned(const std::string& table) {
    const std::vector<std::string> lines = lines_of(table);
    const auto head = word_spans(lines.at(2));
    for (const std::string& row : parse_table(table).rows) {
        const auto cells = word_spans(row);
        ASSERT_EQ(cells.size(), head.size()) << row;
        EXPECT_EQ(cells[0].first, head[0].first) << row;
        for (size_t c = 1; c < head.size(); ++c) EXPECT_EQ(cells[c].second, head[c].second) << "column " << c << ": " << row;
    }
}

}  // namespace

TEST(Fidelity, TableFitsInOneHundredTwentyColumnsWithALegend) {
    const std::string table = fidelity_table(test_header(), test_results());
    const std::vector<std::string> lines = lines_of(table);
    EXPECT_EQ(lines[0].rfind("recording ", 0), 0u);
    EXPECT_NE(lines[1].find("mobile"), std::string::npos);
    EXPECT_NE(lines[1].find("seed 7"), std::string::npos);
    EXPECT_EQ(lines[2].rfind("strategy", 0), 0u);
    EXPECT_EQ(lines[3].rfind("deadblend+sod", 0), 0u);
    EXPECT_EQ(lines[4].rfind("snap", 0), 0u);
    EXPECT_NE(lines[4].find(" inf "), std::string::npos);
    EXPECT_NE(lines[4].find(" - "), std::string::npos);
    expect_aligned(table);
    const ParsedTable p = parse_table(table);
    EXPECT_NE(p.legend.find("sod: second-order dynamics"), std::string::npos) << "the names are explained too";
    EXPECT_NE(p.legend.find("+ahead: shows the server's look-ahead"), std::string::npos);
    EXPECT_EQ(lines.back().rfind("blackout ", 0), 0u);
    for (size_t i = 1; i < lines.size(); ++i) EXPECT_LE(lines[i].size(), 120u) << lines[i];
    // Realistic worst case: metres of error, thousands of pops, seconds of settle.
    std::vector<StrategyReport> big(1);
    big[0].strategy = "deadblend+sod";
    FidelityResult& r = big[0].result;
    r.present_err_cm = {2540.5, 9.55, 2541.0, 105.6, 2541.0};
    r.shape_err_cm = {1234.5, 0, 0, 0, 0};
    r.rot_err_deg_mean = 179.9;
    r.display_delay_ms = 200;
    r.accel_rms_ratio = 12.345;
    r.pops = 123456;
    r.teleport_smear_frames = 12345;
    r.teleport_settle_ms_mean = 12345;
    r.teleport_settle_ms_max = 123456;
    r.worst = {17.4, 3, 29, 0.25, 17.33, 17.38, 25.1, 0, 1};
    const std::string t2 = fidelity_table(test_header(), big);
    for (const std::string& line : lines_of(t2)) EXPECT_LE(line.size(), 120u) << line;
    expect_aligned(t2);
}

TEST(Fidelity, TableStaysAlignedWithFiveDigitPopsAndALongStrategyName) {
    std::vector<StrategyReport> res = test_results();
    res[0].result.pops = 12345;
    res[1].result.pops = 54321;
    StrategyReport longer = res[0];
    longer.strategy = "deadblend+sod+ahead";
    longer.result.pops = 7;
    longer.result.present_err_cm.max = 2541.0;
    longer.result.display_delay_ms = 100;
    longer.result.worst = {17.4, 3, 29, 0.25, 17.33, 17.38, 25.1, 0, 1};
    res.push_back(longer);
    const std::string table = fidelity_table(test_header(), res);
    expect_aligned(table);
    const ParsedTable p = parse_table(table);
    EXPECT_EQ(p.columns, fidelity_table_columns());
    ASSERT_EQ(p.rows.size(), 3u);
    EXPECT_NE(p.rows[0].find(" 12345 "), std::string::npos) << p.rows[0];
    EXPECT_EQ(p.rows[2].rfind("deadblend+sod+ahead ", 0), 0u);
    std::vector<std::string> unique = p.columns;
    std::sort(unique.begin(), unique.end());
    EXPECT_EQ(std::unique(unique.begin(), unique.end()), unique.end()) << "no two columns alike";
    for (const std::string& c : p.columns) EXPECT_NE(p.legend.find(c + " = "), std::string::npos) << c << " has no legend: " << p.legend;
    // The 25 m max is noted with its frame and cause; the 2 cm one is not.
    EXPECT_NE(p.notes.find("err_max 2541 cm (deadblend+sod+ahead) at 17.400 s, character 3, joint 29"), std::string::npos) << p.notes;
    EXPECT_NE(p.notes.find("after the news of its 25.1 m teleport at 17.330 s, the display still showed the place before it"),
              std::string::npos) << p.notes;
    EXPECT_NE(p.notes.find("display delay of 100 ms"), std::string::npos) << p.notes;
    EXPECT_EQ(p.notes.find("(deadblend+sod)"), std::string::npos) << p.notes;
    for (const std::string& line : lines_of(table)) EXPECT_LE(line.size(), 120u) << line;
}

TEST(Fidelity, SvgIsWellFormedWithSeriesAndTeleports) {
    ReportHeader h = test_header();
    h.recording = "a<b>&c.ksrec";
    const std::vector<StrategyReport> res = test_results();
    const std::string svg = fidelity_svg(h, res, {{1.0, 2.5}, {{1.0, 1.05}, {2.5, 2.6}}, {1.5, 1.6, 1.7}, "deadblend+sod"});
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_NE(svg.find("a&lt;b&gt;&amp;c.ksrec"), std::string::npos);
    EXPECT_NE(svg.find("mobile"), std::string::npos);
    EXPECT_NE(svg.find("deadblend+sod"), std::string::npos);
    EXPECT_NE(svg.find(">snap<"), std::string::npos);
    EXPECT_NE(svg.find("teleport"), std::string::npos);
    EXPECT_NE(svg.find("30 Hz"), std::string::npos);
    size_t polylines = 0, dashed_markers = 0;
    for (size_t k = svg.find("<polyline"); k != std::string::npos; k = svg.find("<polyline", k + 1)) ++polylines;
    for (size_t k = svg.find("stroke-dasharray=\"4,3\""); k != std::string::npos; k = svg.find("stroke-dasharray=\"4,3\"", k + 1))
        ++dashed_markers;
    EXPECT_EQ(polylines, 2u);
    EXPECT_EQ(dashed_markers, 3u);  // two markers and the legend entry
    // A long run is reduced to at most 4000 points, keeping its spike (the axis reaches 50).
    std::vector<StrategyReport> longer(1);
    longer[0].strategy = "interp";
    for (int i = 0; i < 30000; ++i) longer[0].error_series.emplace_back(i / kHz, i == 12345 ? 50.0 : 1.0 + 0.1 * (i % 7));
    const std::string big = fidelity_svg(h, longer, {});
    EXPECT_EQ(test::xml_check(big), "");
    const size_t p = big.find("points=\"");
    ASSERT_NE(p, std::string::npos);
    const std::string pts = big.substr(p + 8, big.find('"', p + 8) - p - 8);
    const size_t points = size_t(std::count(pts.begin(), pts.end(), ','));
    EXPECT_LE(points, 4000u);
    EXPECT_GE(points, 2000u);
    EXPECT_NE(big.find(">100<"), std::string::npos) << "log axis up to the spike's decade";
    EXPECT_NE(svg.find("blackout"), std::string::npos);
    EXPECT_NE(svg.find("pops (deadblend+sod)"), std::string::npos);
    EXPECT_NE(svg.find("class=\"shaded\""), std::string::npos);
    EXPECT_NE(svg.find("class=\"ticks\""), std::string::npos);
}

TEST(Fidelity, ParetoFrontKeepsOnlyUndominatedPoints) {
    //                 0    1    2    3    4    5
    const std::vector<double> err = {3.0, 2.0, 4.0, 1.0, 2.5, NAN};
    const std::vector<double> acc = {1.0, 2.0, 0.5, 3.0, 2.5, 0.1};
    // 4 is dominated by 1 (2.0 < 2.5, 2.0 < 2.5); 5 is not finite.
    EXPECT_EQ(pareto_front(err, acc), (std::vector<size_t>{3, 1, 0, 2}));
    EXPECT_TRUE(pareto_front({}, {}).empty());
    // Equal on one axis, better on the other: the better one only.
    EXPECT_EQ(pareto_front({1.0, 1.0}, {2.0, 1.0}), (std::vector<size_t>{1}));
}

TEST(Fidelity, FrontierPlotHasPointsFrontsAndDefaults) {
    std::vector<FrontierPoint> pts = {{"interp", "delay 100 ms", 11.5, 0.8, true},  {"interp", "delay 50 ms", 8.0, 2.8, false},
                                      {"interp", "delay 200 ms", 21.0, 0.9, false}, {"deadblend+sod", "f 6", 4.8, 1.2, true},
                                      {"deadblend+sod", "f 9", 3.9, 1.7, false}};
    const SvgPlot p = frontier_plot(test_header(), pts);
    ASSERT_EQ(p.series.size(), 4u) << "points and front per strategy";
    EXPECT_TRUE(p.series[0].points);
    EXPECT_EQ(p.series[0].highlight, (std::vector<size_t>{0}));
    EXPECT_EQ(p.series[1].x, (std::vector<double>{8.0, 11.5})) << "interp's front leaves out the dominated 200 ms";
    const std::string svg = render_svg_plots({p});
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_NE(svg.find("<circle"), std::string::npos);
}
