// Motion-fidelity metrics (common/metrics/fidelity.h) and the replay's reports
// (common/metrics/report.h) on hand-made cases with known answers.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/metrics/fidelity.h"
#include "common/metrics/report.h"
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
};

void feed(FidelityAccumulator& a, int character, double t, const Frame& f) {
    a.add_frame(character, t, f.truth, f.delayed, f.shown, f.truth_rot, f.shown_rot, f.truth[0], f.shown[0], f.delay);
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

vec3 walking(double t) { return vec3(float(1.4 * t), 0.0f, float(0.3 * std::sin(t))); }

std::vector<vec3> offset_all(const std::vector<vec3>& p, vec3 o) {
    std::vector<vec3> q = p;
    for (vec3& v : q) v += o;
    return q;
}

}  // namespace

TEST(Fidelity, ConstantOffsetIsThreeCentimetresEverywhere) {
    FidelityAccumulator a;
    for (int c = 0; c < 2; ++c)
        run(a, c, 120, walking, [](int, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.0f, 0.03f, 0.0f)); });
    const FidelityResult r = a.result();
    EXPECT_NEAR(r.present_err_cm.mean, 3.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.p95, 3.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.max, 3.0, 1e-4);
    EXPECT_NEAR(r.shape_err_cm.mean, 3.0, 1e-4);  // d = 0: the same comparison
    EXPECT_EQ(r.pops, 0);
    EXPECT_NEAR(r.accel_rms_ratio, 1.0, 1e-3);  // only float rounding of G + offset differs
    EXPECT_EQ(r.rot_err_deg_mean, 0.0);
    EXPECT_EQ(r.display_delay_ms, 0.0);
    EXPECT_EQ(r.frames, 240);
    EXPECT_EQ(r.teleport_smear_frames, 0);
    EXPECT_EQ(r.teleports, 0);
    EXPECT_TRUE(std::isnan(r.teleport_settle_ms_mean)) << "no teleports: undefined, written as null";
    EXPECT_TRUE(std::isnan(r.bytes_per_s));
    // One series entry per render frame, both characters merged.
    ASSERT_EQ(a.error_series().size(), 120u);
    EXPECT_NEAR(a.error_series()[7].first, 7 / kHz, 1e-12);
    EXPECT_NEAR(a.error_series()[7].second, 3.0, 1e-4);
}

TEST(Fidelity, TruthAgainstItselfIsExact) {
    FidelityAccumulator a;
    // With a teleport too: excluded the same way for both, so the ratio stays exactly 1.
    a.add_teleport(0, {1.0, walking(1.0 - 1 / kHz), vec3(5.0f, 0.0f, 5.0f)});
    auto root = [](double t) { return t < 1.0 - 1e-9 ? walking(t) : vec3(5.0f, 0.0f, 5.0f) + walking(t - 1.0); };
    run(a, 0, 180, root, [](int, double, const std::vector<vec3>& g) { return g; });
    const FidelityResult r = a.result();
    EXPECT_EQ(r.present_err_cm.mean, 0.0);
    EXPECT_EQ(r.present_err_cm.p95, 0.0);
    EXPECT_EQ(r.present_err_cm.max, 0.0);
    EXPECT_EQ(r.shape_err_cm.max, 0.0);
    EXPECT_EQ(r.rot_err_deg_p95, 0.0);
    EXPECT_EQ(r.accel_rms_ratio, 1.0);
    EXPECT_EQ(r.pops, 0);
    EXPECT_EQ(r.teleport_smear_frames, 0);
    EXPECT_EQ(r.teleports, 1);
    EXPECT_EQ(r.teleport_settle_ms_mean, 0.0);  // shown at the teleport's own frame
    EXPECT_EQ(r.teleport_settle_ms_max, 0.0);
}

TEST(Fidelity, PersistingJumpIsOnePopAndASpikeIsTwoFrames) {
    auto pops_for = [](const std::function<std::vector<vec3>(int, double, const std::vector<vec3>&)>& shown) {
        FidelityAccumulator a;
        run(a, 0, 120, walking, shown);
        return a.result().pops;
    };
    // A 10 cm jump of every joint at frame 50 that stays: one frame with a wrong step.
    EXPECT_EQ(pops_for([](int i, double, const std::vector<vec3>& g) { return i >= 50 ? offset_all(g, vec3(0.1f, 0, 0)) : g; }), 1);
    // Only one joint jumping is enough.
    EXPECT_EQ(pops_for([](int i, double, const std::vector<vec3>& g) {
                  auto d = g;
                  if (i >= 50) d[3] += vec3(0, 0, 0.1f);
                  return d;
              }),
              1);
    // A one-frame spike out and back: the step out (frame 50) and the step back (frame 51) are both
    // wrong by 10 cm, so two render frames count (EVALUATION counts frames, not events).
    EXPECT_EQ(pops_for([](int i, double, const std::vector<vec3>& g) { return i == 50 ? offset_all(g, vec3(0.1f, 0, 0)) : g; }), 2);
    // 4 cm steps are under the 5 cm threshold.
    EXPECT_EQ(pops_for([](int i, double, const std::vector<vec3>& g) { return offset_all(g, vec3(0.04f * float(i % 2), 0, 0)); }), 0);
    // A step of exactly the truth's own motion is no pop, however fast (the truth moves 1.4 m/s).
    EXPECT_EQ(pops_for([](int, double, const std::vector<vec3>& g) { return g; }), 0);
}

TEST(Fidelity, TeleportWindowExcludesTheJumpsAndNothingElse) {
    // Truth teleports at frame 50 (T = 50/60) by 3 m. E = 2 frames.
    const double T = 50 / kHz;
    const vec3 jump(3.0f, 0.0f, -1.0f);
    auto root = [&](double t) { return t < T - 1e-9 ? walking(t) : walking(t) + jump; };
    auto make = [&](int late_frames, int glitch_frame) {
        FidelityAccumulator a;
        a.add_teleport(0, {T, walking(T - 1 / kHz), walking(T) + jump});
        run(a, 0, 150, root, [&](int i, double t, const std::vector<vec3>& g) {
            // Shows the teleport late_frames late (an extrapolating client behind by its latency),
            // with an optional persisting 10 cm glitch from glitch_frame on.
            std::vector<vec3> d = (i >= 50 && i < 50 + late_frames) ? offset_all(g, -jump) : g;
            (void)t;
            if (glitch_frame >= 0 && i >= glitch_frame) d = offset_all(d, vec3(0, 0.1f, 0));
            return d;
        });
        return a.result();
    };
    // Shown at once or 5 frames late: neither jump is a pop, and the accel ratio, over the same
    // frames for both, stays exactly 1 (every frame outside the windows is shown exactly).
    for (int late : {0, 5}) {
        const FidelityResult r = make(late, -1);
        EXPECT_EQ(r.pops, 0) << late;
        EXPECT_EQ(r.accel_rms_ratio, 1.0) << late;
        EXPECT_NEAR(r.teleport_settle_ms_mean, late * 1000.0 / kHz, 1e-6) << late;
        EXPECT_EQ(r.teleport_smear_frames, 0) << late;
    }
    // The window starts E = 2 frames before the first frame after T: a glitch at frame 47 counts,
    // one at frame 48 does not.
    EXPECT_EQ(make(0, 47).pops, 1);
    EXPECT_EQ(make(0, 48).pops, 0);
    // It ends E frames after the display arrived (frame 50 when shown at once, 55 when 5 late).
    EXPECT_EQ(make(0, 52).pops, 0);
    EXPECT_EQ(make(0, 53).pops, 1);
    EXPECT_EQ(make(5, 57).pops, 0);
    EXPECT_EQ(make(5, 58).pops, 1);
}

TEST(Fidelity, LinearCrossingIsSmearAndSnappingIsNot) {
    // Standing at a = 0 until T (frame 30), then at b = (2, 0, 0). The display crosses from a to b
    // over 10 frames: frame 30 + i shows a + i/10 (b - a), i = 0..10, i.e. 0, 0.2, ..., 2.0 m.
    // More than 25 cm from both ends: 0.4 .. 1.6 m, i = 2..8: 7 frames.
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(2, 0, 0);
    auto root = [&](double t) { return t < T - 1e-9 ? a0 : b0; };
    for (bool snap : {false, true}) {
        FidelityAccumulator a;
        a.add_teleport(0, {T, a0, b0});
        run(a, 0, 90, root, [&](int i, double, const std::vector<vec3>& g) {
            if (snap || i < 30 || i >= 40) return g;
            return offset_all(g, (a0 + (b0 - a0) * (float(i - 30) / 10.0f)) - b0);
        });
        const FidelityResult r = a.result();
        EXPECT_EQ(r.teleport_smear_frames, snap ? 0 : 7);
        // Settles when it reaches b (frame 40) and stays: 10 frames after T.
        EXPECT_NEAR(r.teleport_settle_ms_max, snap ? 0.0 : 10 * 1000.0 / kHz, 1e-6);
        EXPECT_EQ(r.pops, 0) << "the crossing happens inside the teleport window";
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
    acc.add_teleport(0, {T, a0, b0});
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
    still.add_teleport(0, {T, a0, b0});
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

TEST(Fidelity, ExponentialConvergenceSettlesWhenComputedByHand) {
    // Truth at b from T on; the display starts at a and converges: p = b + (a - b) exp(-(t - T) / 0.1),
    // |a - b| = 1 m. Within 5 cm when exp(-x / 0.1) <= 0.05, x >= 0.1 ln 20 = 0.29957 s.
    // T on frame 30: first frame with x >= 0.29957 is x = 18/60 = 300 ms.
    // T a quarter frame after frame 30: frames at x = (k + 0.75)/60, k = 18: 312.5 ms.
    // Smear (T on a frame): > 25 cm from b needs exp(-k/6) > 0.25 (k <= 8), > 25 cm from a needs
    // 1 - exp(-k/6) > 0.25 (k >= 2): 7 frames.
    const vec3 a0(1.0f, 2.0f, 3.0f);
    const vec3 b0 = a0 + vec3(0.6f, 0.0f, -0.8f);  // 1 m away, diagonally
    for (double shift : {0.0, 0.25}) {
        const double T = (30 + shift) / kHz;
        FidelityAccumulator acc;
        acc.add_teleport(3, {T, a0, b0});
        auto root = [&](double t) { return t < T - 1e-9 ? a0 : b0; };
        run(acc, 3, 120, root, [&](int, double t, const std::vector<vec3>& g) {
            if (t < T - 1e-9) return g;
            const float k = float(std::exp(-(t - T) / 0.1));
            return offset_all(g, (a0 - b0) * k);
        });
        const FidelityResult r = acc.result();
        const double expected = shift == 0.0 ? 300.0 : 312.5;
        EXPECT_NEAR(r.teleport_settle_ms_mean, expected, 1e-6) << shift;
        EXPECT_NEAR(r.teleport_settle_ms_max, expected, 1e-6) << shift;
        if (shift == 0.0) {
            EXPECT_EQ(r.teleport_smear_frames, 7);
        }
    }
}

TEST(Fidelity, NeverSettlingCountsTheTimeToTheEnd) {
    const double T = 30 / kHz;
    const vec3 a0(0, 0, 0), b0(4, 0, 0);
    FidelityAccumulator acc;
    acc.add_teleport(0, {T, a0, b0});
    run(acc, 0, 120, [&](double t) { return t < T - 1e-9 ? a0 : b0; },
        [&](int, double, const std::vector<vec3>& g) { return offset_all(g, a0 - g[0]); });  // stuck at a
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.teleport_settle_ms_mean, (119 - 30) * 1000.0 / kHz, 1e-6);
    EXPECT_EQ(r.teleport_smear_frames, 0) << "at the origin is not on the way";
}

TEST(Fidelity, DelayedDisplayHasNoShapeErrorAndSettlesInItsDelay) {
    // Running at 4.5 m/s along -x (with some sway), teleported at T = 1 s to x = +3 (ahead of where it
    // came from, so right after T the 100 ms delayed display, still showing the run, lies between
    // origin and destination: not a smear, it is where the truth was), then running on along -x
    // (back along the teleport's path) or along -z.
    const double T = 1.0, d = 0.1;
    for (bool back_along_path : {true, false}) {
        auto root = [&](double t) {
            const float sway = float(0.05 * std::sin(kTwoPi * 0.7 * t));
            if (t < T - 1e-9) return vec3(float(-4.5 * t), sway, 0);
            return back_along_path ? vec3(float(3.0 - 4.5 * (t - T)), sway, 0) : vec3(3.0f, sway, float(-4.5 * (t - T)));
        };
        FidelityAccumulator acc;
        acc.add_teleport(1, {T, root(T - 1 / kHz), root(T)});
        for (int i = 0; i < 150; ++i) {
            const double t = i / kHz;
            Frame f;
            f.truth = body(root(t), t);
            f.delayed = body(root(t - d), t - d);
            f.shown = f.delayed;
            f.delay = d;
            feed(acc, 1, t, f);
        }
        const FidelityResult r = acc.result();
        EXPECT_EQ(r.shape_err_cm.max, 0.0);
        EXPECT_NEAR(r.display_delay_ms, 100.0, 1e-9);
        EXPECT_GT(r.present_err_cm.mean, 40.0);  // 45 cm behind
        EXPECT_EQ(r.teleport_smear_frames, 0) << back_along_path;
        EXPECT_NEAR(r.teleport_settle_ms_mean, 100.0, 1e-6);
        EXPECT_EQ(r.pops, 0) << "the displayed jump at T + d is the teleport";
        EXPECT_NEAR(r.accel_rms_ratio, 1.0, 0.1);
        if (back_along_path) continue;

        // The same display with the delay not reported: no longer guarded by the delayed truth, but
        // it shows where the character truly was in the second before T, so still no smear.
        FidelityAccumulator blind;
        blind.add_teleport(1, {T, root(T - 1 / kHz), root(T)});
        for (int i = 0; i < 150; ++i) {
            const double t = i / kHz;
            Frame f;
            f.truth = body(root(t), t);
            f.delayed = f.truth;
            f.shown = body(root(t - d), t - d);
            feed(blind, 1, t, f);
        }
        // (Frames T and T + 1/60 show the root 37.5 and 30 cm from the origin, on the way.)
        EXPECT_EQ(blind.result().teleport_smear_frames, 0);
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
    // 20 joints with errors 1..20 cm in one frame: p95 is rank ceil(0.95 * 20) = 19.
    FidelityAccumulator acc;
    std::vector<vec3> g(20), s(20);
    std::vector<quat> q(20);
    for (int j = 0; j < 20; ++j) {
        g[j] = vec3(float(j), 0, 0);
        s[j] = g[j] + vec3(0, 0.01f * float(j + 1), 0);
    }
    acc.add_frame(0, 0.0, g, g, s, q, q, g[0], s[0], 0.0);
    const FidelityResult r = acc.result();
    EXPECT_NEAR(r.present_err_cm.p95, 19.0, 1e-4);
    EXPECT_NEAR(r.present_err_cm.mean, 10.5, 1e-4);
    EXPECT_NEAR(r.present_err_cm.max, 20.0, 1e-4);

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
    EXPECT_THROW(acc.add_frame(0, 0.0, g, g, s, q, q, g[0], g[0], 0.0), std::invalid_argument);
    acc.add_frame(0, 1.0, g, g, g, q, q, g[0], g[0], 0.0);
    EXPECT_THROW(acc.add_frame(0, 1.0, g, g, g, q, q, g[0], g[0], 0.0), std::invalid_argument) << "same time";
    EXPECT_THROW(acc.add_teleport(0, {1.02, {}, {}}), std::logic_error) << "its window has begun";
    EXPECT_NO_THROW(acc.add_teleport(0, {1.1, {}, {}}));
    EXPECT_NO_THROW(acc.add_teleport(1, {0.0, {}, {}})) << "another character";
    EXPECT_THROW({ FidelityAccumulator bad(FidelityConfig{0.0}); }, std::invalid_argument);
    EXPECT_EQ(acc.teleport_times(), (std::vector<double>{0.0, 1.1}));
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
        else throw std::runtime_error("bad value at " + std::to_string(b));
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
    acc.add_teleport(0, {T, walking(T - 1 / kHz), vec3(4, 0, 0)});
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
                                                  "bytes_per_s", "bits_per_joint"}));
    EXPECT_EQ(keys(r0.at("present_err_cm")), (std::vector<std::string>{"mean", "p95", "max"}));
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

TEST(Fidelity, TableHasAlignedRows) {
    const std::string table = fidelity_table(test_header(), test_results());
    std::vector<std::string> lines;
    for (size_t b = 0, e; (e = table.find('\n', b)) != std::string::npos; b = e + 1) lines.push_back(table.substr(b, e - b));
    ASSERT_EQ(lines.size(), 4u) << table;
    EXPECT_NE(lines[0].find("mobile"), std::string::npos);
    EXPECT_NE(lines[0].find("seed 7"), std::string::npos);
    EXPECT_EQ(lines[1].rfind("strategy", 0), 0u);
    EXPECT_EQ(lines[2].rfind("deadblend+sod", 0), 0u);
    EXPECT_EQ(lines[3].rfind("snap", 0), 0u);
    EXPECT_EQ(lines[1].size(), lines[2].size());
    EXPECT_EQ(lines[2].size(), lines[3].size());
    EXPECT_NE(lines[3].find(" inf "), std::string::npos);
    EXPECT_NE(lines[3].find(" - "), std::string::npos);
}

TEST(Fidelity, SvgIsWellFormedWithSeriesAndTeleports) {
    ReportHeader h = test_header();
    h.recording = "a<b>&c.ksrec";
    const std::vector<StrategyReport> res = test_results();
    const std::string svg = fidelity_svg(h, res, {1.0, 2.5});
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
    EXPECT_NE(big.find(">50<"), std::string::npos);
}
