// Error-driven updates (server/src/net/snapshot_builder.h, "Error-driven updates"): the sender's
// estimate of what a client shows, a binding budget spent where that estimate is furthest off,
// epoch changes first, no character starved, and look-ahead entries held while the client's
// curve through the ones it has stays true (sent late when it misses, never running out).
#include <gtest/gtest.h>

#include <map>

#include <kinesync/offline/builtin_motion.h>
#include "common/src/codec/snapshot_codec.h"
#include "server/src/net/held_prediction.h"
#include "server/src/net/snapshot_builder.h"
#include "tests/support/codec_sim.h"

using namespace ks;

namespace {

constexpr float kTickHz = 60.0f;

// A pose at rest whose root moves at `v` (file units per second): a prediction from its
// velocities is exact.
Pose gliding(const Skeleton& s, vec3 v, double t) {
    Pose p(s);
    for (size_t j = 0; j < p.pos.size(); ++j) p.pos[j] = s.offsets[j];
    p.pos[0] = v * float(t);
    p.vel[0] = v;
    return p;
}

struct Crowd {
    Clip clip = builtin_clip("walk");
    SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    SnapshotHistory history;
    SnapshotBuilder builder;
    PrecisionLookup lookup = [this](uint16_t) { return &prec; };

    explicit Crowd(BuilderConfig bc) : builder(bc) {}
    // The walk at `speed` times its pace (velocities scaled to match).
    QCharacter walking(double t, double speed = 1.0) {
        Pose p = test::sample_pose(clip, t * speed, Wrap::Loop);
        for (size_t j = 0; j < p.pos.size(); ++j) {
            p.vel[j] = p.vel[j] * float(speed);
            p.ang[j] = p.ang[j] * float(speed);
        }
        return quantize_character(p, clip.skeleton, prec, 0);
    }
    QCharacter glide(double t) { return quantize_character(gliding(clip.skeleton, vec3{0.5f / clip.metres_per_unit, 0, 0}, t), clip.skeleton, prec, 0); }
    // Builds tick t's snapshot, acknowledging everything sent `ack_ticks` before; returns the ids sent.
    std::vector<uint16_t> send(uint32_t t, std::vector<CharacterSnapshot> now) {
        history.add(t, now);
        std::vector<uint16_t> ids;
        for (const SnapshotPart& p : builder.build(t, now, history, lookup)) {
            for (UnitKey k : p.units) ids.push_back(unit_character(k));
            delivered.push_back({t + 6, p});
        }
        for (auto it = delivered.begin(); it != delivered.end();)
            if (it->first <= t + 2) {
                builder.on_delivered(it->second.tick, it->second.units);
                it = delivered.erase(it);
            } else {
                ++it;
            }
        return ids;
    }
    std::vector<std::pair<uint32_t, SnapshotPart>> delivered;
};

// A budget for one walking character's delta a snapshot (its mean size, measured), not two.
BuilderConfig one_character_a_snapshot() {
    BuilderConfig bc;
    bc.tick_hz = kTickHz;
    bc.snapshot_hz = 30.0f;
    Crowd probe(bc);
    for (uint32_t t = 2; t <= 240; t += 2) probe.send(t, {{0, 0, probe.walking(double(t) / kTickHz)}});
    const BuilderStats& st = probe.builder.stats();
    bc.bandwidth_bps = 1.4f * float(st.payload_bytes) / float(st.characters_sent) * 8.0f * bc.snapshot_hz;
    return bc;
}

}  // namespace

TEST(HeldPrediction, AnExactPredictionCostsNothingAndARotationCountsItsReach) {
    Crowd c{BuilderConfig{}};
    const Skeleton& s = c.clip.skeleton;
    // The root glides: the held state, moved on by its velocity, is the state 0.1 s later.
    const QCharacter a = c.glide(1.0), b = c.glide(1.1);
    EXPECT_LT(held_prediction_error_m(a, b, 0.1f, c.prec, all_joints(c.prec)), 0.002f);
    // The same state with one joint turned 0.1 rad more: off by about that angle times its reach.
    int j = 1;
    while (c.prec.joints[size_t(j)].reach_m < 0.2f) ++j;
    Pose turned = gliding(s, vec3{0.5f / c.clip.metres_per_unit, 0, 0}, 1.1);
    turned.rot[size_t(j)] = quat_mul(quat_from_scaled_angle_axis(vec3{0.1f, 0, 0}), turned.rot[size_t(j)]);
    const QCharacter bt = quantize_character(turned, s, c.prec, 0);
    const float want = 0.1f * c.prec.joints[size_t(j)].reach_m;
    EXPECT_NEAR(held_prediction_error_m(a, bt, 0.1f, c.prec, all_joints(c.prec)), want, 0.1f * want);
}

TEST(HeldPrediction, TheCurveThroughTwoEntriesMissesAnEntryOffItByItsShareOfTheJoints) {
    Crowd c{BuilderConfig{}};
    const QCharacter a = c.glide(1.0), b = c.glide(1.2), mid = c.glide(1.1);
    EXPECT_LT(interpolation_error_m(a, b, 0.2f, mid, 0.1f, c.prec, all_joints(c.prec)), 0.0005f);
    // The root 5 cm off the line: the mean over joints is 5 cm over their count.
    Pose off = gliding(c.clip.skeleton, vec3{0.5f / c.clip.metres_per_unit, 0, 0}, 1.1);
    off.pos[0].y += 0.05f / c.clip.metres_per_unit;
    const QCharacter m2 = quantize_character(off, c.clip.skeleton, c.prec, 0);
    const float want = 0.05f / float(c.prec.joints.size());
    EXPECT_NEAR(interpolation_error_m(a, b, 0.2f, m2, 0.1f, c.prec, all_joints(c.prec)), want, 0.1f * want);
}

TEST(ErrorDriven, ABindingBudgetGoesToTheCharacterItsClientPredictsWorstAndNoneStarves) {
    // Two characters, budget for one a snapshot: a walk, and the same walk in slow motion (a fifth
    // of the speed: its client's prediction drifts far less). Round robin would give each half;
    // the error-driven order gives the walk most of it, the slow one at least one update per
    // max_hold_s.
    const BuilderConfig bc = one_character_a_snapshot();
    Crowd c(bc);
    std::map<uint16_t, int> sends;
    std::map<uint16_t, uint32_t> last, longest_gap;
    for (uint32_t t = 2; t <= 1200; t += 2) {
        const double s = double(t) / kTickHz;
        for (uint16_t id : c.send(t, {{0, 0, c.walking(s)}, {1, 0, c.walking(s, 0.2)}})) {
            ++sends[id];
            if (t > 120 && last.count(id)) longest_gap[id] = std::max(longest_gap[id], t - last[id]);
            last[id] = t;
        }
    }
    // 600 snapshots: the walk in nearly every one, the slow one in what is left (round robin
    // would send each in about the same number).
    EXPECT_GE(sends[0], 570) << "walk " << sends[0] << ", slow " << sends[1];
    EXPECT_LT(sends[1], sends[0] * 85 / 100) << "walk " << sends[0] << ", slow " << sends[1];
    EXPECT_GT(sends[1], 10) << "the slow one is refreshed now and then";
    // Starvation bound: held at most max_hold_s, then first in line (a snapshot or two of slack).
    EXPECT_LE(longest_gap[1], uint32_t(bc.max_hold_s * kTickHz) + 4);
    EXPECT_LE(c.builder.stats().oldest_held_ticks, uint32_t(bc.max_hold_s * kTickHz) + 4);
}

TEST(ErrorDriven, ATeleportedCharacterGoesFirstAndTheBudgetIsKeptForIt) {
    // Character 1 (slow, rarely sent) teleports at tick 400: nothing to predict from, so it is
    // the first unit of every snapshot until its full state fits what the budget kept for it;
    // no other character slips into the gap.
    Crowd c(one_character_a_snapshot());
    uint32_t went = 0;
    for (uint32_t t = 2; t <= 600 && went == 0; t += 2) {
        const double s = double(t) / kTickHz;
        QCharacter slow = c.walking(s, 0.2);
        slow.epoch = t >= 400 ? 1 : 0;
        const std::vector<uint16_t> ids = c.send(t, {{0, 0, c.walking(s)}, {1, 0, slow}, {2, 0, c.walking(s + 0.5)}});
        if (t < 400) continue;
        if (std::find(ids.begin(), ids.end(), 1) != ids.end()) went = t;
        else EXPECT_TRUE(ids.empty()) << "tick " << t << ": the budget is kept for the teleported character";
    }
    ASSERT_GT(went, 0u);
    EXPECT_LE(went, 400u + 4 * 2) << "within four snapshots (its full state is about three deltas)";
}

TEST(LookAheadHold, EntriesOnTheClientsCurveAreHeldTheLastOneReachedGoesLateAndTheClientNeverRunsOut) {
    // Look-ahead entries 0.25 s ahead of a walk. With hold_ahead_error_m the builder sends a
    // fraction of them; every one it sends is an entry the history holds (a late one's content
    // time is its own tick's), and the newest sent stays ahead of the present by the keep share.
    BuilderConfig bc;
    bc.tick_hz = kTickHz;
    bc.snapshot_hz = 30.0f;
    bc.bandwidth_bps = 1e7f;
    Crowd c(bc);
    BuilderConfig off = bc;
    off.hold_ahead_error_m = 0.0f;
    Crowd every(off);
    const uint16_t ahead = 15;
    SnapshotDecoder decoder{kTickHz};
    std::map<uint32_t, QCharacter> truth;  // content tick -> entry
    uint32_t newest_content = 0, late = 0, sent = 0;
    for (uint32_t t = 2; t <= 1200; t += 2) {
        const double s = double(t) / kTickHz;
        QCharacter q = c.walking(s + double(ahead) / kTickHz);
        q.ahead = true;
        q.ahead_ticks = ahead;
        q.plan = uint16_t(t >= 600 ? 1 : 0);  // one decision
        truth[t + ahead] = q;
        if (t > 4) {
            EXPECT_GE(double(newest_content), double(t) + bc.ahead_keep_share * ahead - 2.0) << "ran out at " << t;
        }
        const std::vector<CharacterSnapshot> now{{0, 0, q}};
        c.history.add(t, now);
        every.send(t, now);
        for (const SnapshotPart& p : c.builder.build(t, now, c.history, c.lookup)) {
            std::vector<DecodedCharacter> out;
            ASSERT_EQ(decoder.decode(p.tick, p.data, [](uint16_t) { return 0; }, c.lookup, out), SnapshotError::None);
            for (const DecodedCharacter& d : out) {
                const uint32_t content = t + d.state->ahead_ticks;
                ASSERT_TRUE(truth.count(content)) << "an entry of a tick the server computed";
                EXPECT_EQ(d.state->joints, truth[content].joints) << "content " << content;
                newest_content = std::max(newest_content, content);
                if (d.state->ahead_ticks != ahead) ++late;
                ++sent;
                if (t == 600) {
                    EXPECT_EQ(d.state->ahead_ticks, ahead) << "the new plan's entry goes at once";
                }
            }
            c.builder.on_delivered(t, p.units);
        }
    }
    EXPECT_GT(late, 0u);
    EXPECT_GT(c.builder.stats().units_held, 100u);
    EXPECT_EQ(c.builder.stats().units_late, late);
    EXPECT_LT(sent, 600u * 3 / 4) << "fewer entries than the 600 computed";
    EXPECT_EQ(every.builder.stats().units_held, 0u) << "hold_ahead_error_m = 0: every entry goes";
}

TEST(LookAheadHold, ConfigurationOutsideItsRangeIsRefusedByName) {
    for (auto [field, set] : std::vector<std::pair<std::string, void (*)(BuilderConfig&)>>{
             {"hold_error_m", [](BuilderConfig& b) { b.hold_error_m = -1.0f; }},
             {"hold_ahead_error_m", [](BuilderConfig& b) { b.hold_ahead_error_m = std::nanf(""); }},
             {"ahead_keep_share", [](BuilderConfig& b) { b.ahead_keep_share = 1.5f; }},
             {"max_hold_s", [](BuilderConfig& b) { b.max_hold_s = 3.0f; }},
             {"presume_delivered_s", [](BuilderConfig& b) { b.presume_delivered_s = -0.1f; }}}) {
        BuilderConfig bc;
        set(bc);
        try {
            SnapshotBuilder b(bc);
            ADD_FAILURE() << field << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
        }
    }
}

TEST(ErrorDriven, AFigureMayAskForAnotherOfTheSameShardWhileItIsComputed) {
    // The look-ahead curve's figure falls back on the prediction's, which may share its shard:
    // computing under the shard's lock deadlocked the live server (LookAhead.LiveClients...).
    EncodeCache cache;
    int made = 0;
    const float v = cache.figure(5, 1, [&] { return cache.figure(5, 17, [&] { return float(++made); }) + 10.0f; });
    EXPECT_EQ(v, 11.0f);
    EXPECT_EQ(cache.figure(5, 1, [] { return -1.0f; }), 11.0f) << "kept for the tick";
    EXPECT_EQ(cache.figure(6, 1, [] { return -1.0f; }), -1.0f) << "a new tick starts afresh";
    EXPECT_EQ(made, 1);
}
