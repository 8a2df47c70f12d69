// Characters larger than one datagram: the part plan, parts coded and acknowledged on their own
// (a lost part costs only its joints), one refused entry leaves the others of its datagram
// applied, a resync brings one part back in full, and the client's assembly of whole poses.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include "client/src/character_assembly.h"
#include "client/src/resync_throttle.h"
#include "client/src/session.h"
#include "common/src/codec/snapshot_codec.h"
#include "server/src/net/snapshot_builder.h"
#include "tests/support/codec_sim.h"
#include "tests/support/snapshot_entries.h"

using namespace ks;

namespace {

// One server-side character stream: a clip played in place, quantized per snapshot tick.
struct Stream {
    Clip clip;
    SkeletonPrecision prec;
    SnapshotHistory history;
    SnapshotBuilder builder;
    SnapshotDecoder decoder{60.0f};
    PrecisionLookup lookup;
    std::vector<CharacterSnapshot> now;

    Stream(Clip c, int characters, BuilderConfig bc = {}) : clip(std::move(c)), prec(plan_precision(clip.skeleton, clip.metres_per_unit)), builder(bc) {
        lookup = [this](uint16_t) { return &prec; };
        now.resize(size_t(characters));
    }
    std::vector<SnapshotPart> tick(uint32_t t) {
        for (size_t k = 0; k < now.size(); ++k) {
            const Pose p = test::sample_pose(clip, double(t) / 60.0 + 0.3 * double(k), Wrap::Loop);
            now[k] = {uint16_t(k), 0, quantize_character(p, clip.skeleton, prec, 0)};
        }
        history.add(t, now);
        return builder.build(t, now, history, lookup);
    }
    SnapshotError decode(const SnapshotPart& p, std::vector<DecodedCharacter>& out, std::vector<RefusedCharacter>* refused = nullptr) {
        return decoder.decode(p.tick, p.data, [](uint16_t) { return 0; }, lookup, out, refused);
    }
};

// Entry modes of a payload (id -> mode byte).
std::vector<std::pair<uint16_t, uint32_t>> entry_modes(const std::vector<uint8_t>& data) {
    std::vector<std::pair<uint16_t, uint32_t>> out;
    for (const test::PayloadEntry& e : test::payload_entries(data)) out.push_back({e.id, e.mode});
    return out;
}

}  // namespace

TEST(Parts, PlanCoversEveryJointOnceInPartsOfAtMostTheLimit) {
    EXPECT_EQ(plan_parts(31).size(), 1u);
    EXPECT_EQ(plan_parts(kMaxPartJoints).size(), 1u);
    for (size_t n : {size_t(kMaxPartJoints) + 1, size_t(250), size_t(1000), size_t(1024)}) {
        const std::vector<JointRange> parts = plan_parts(n);
        EXPECT_EQ(parts.size(), (n + kMaxPartJoints - 1) / kMaxPartJoints) << n;
        uint32_t next = 0;
        for (const JointRange& r : parts) {
            EXPECT_EQ(r.first, next);
            EXPECT_GE(r.count, 1u);
            EXPECT_LE(r.count, kMaxPartJoints);
            next = r.end();
        }
        EXPECT_EQ(next, n);
    }
}

TEST(Parts, AThousandJointCharacterStreamsAndALostPartCostsOnlyItsJoints) {
    // A lossless link with acks after 100 ms, then one datagram lost: the other parts stay delta
    // coded, and the lost part is coded against its own older baseline, not in full.
    Stream s(make_stress_rig(builtin_clip("walk")), 1);
    ASSERT_EQ(s.clip.joints(), 1000);
    const size_t parts = plan_parts(1000).size();
    std::multimap<uint32_t, std::pair<uint32_t, std::vector<UnitKey>>> acks;
    std::map<uint32_t, int> full_per_part;  // first joint -> full entries after warm-up
    size_t lost_units = 0, decoded_after_loss = 0;
    for (uint32_t t = 2; t <= 600; t += 2) {
        for (auto it = acks.begin(); it != acks.end() && it->first <= t; it = acks.erase(it)) s.builder.on_delivered(it->second.first, it->second.second);
        const std::vector<SnapshotPart> sent = s.tick(t);
        for (size_t i = 0; i < sent.size(); ++i) {
            EXPECT_LE(sent[i].data.size(), s.builder.config().max_payload_bytes);
            if (t == 300 && i == 0) {  // lost
                lost_units = sent[i].units.size();
                continue;
            }
            std::vector<DecodedCharacter> out;
            ASSERT_EQ(s.decode(sent[i], out), SnapshotError::None) << "tick " << t;
            for (const DecodedCharacter& d : out) {
                for (uint32_t j = d.joints.first; j < d.joints.end(); ++j) ASSERT_EQ(d.state->joints[j], s.now[0].state.joints[j]);
                if (t > 300) ++decoded_after_loss;
            }
            for (const auto& [id, mode] : entry_modes(sent[i].data))
                if (t > 120 && (mode & kModeMask) == 0) ++full_per_part[id];
            acks.insert({t + 6, {t, sent[i].units}});
        }
    }
    EXPECT_GT(lost_units, 0u);
    EXPECT_TRUE(full_per_part.empty()) << "no part was sent in full after the first two seconds, despite the loss";
    const BuilderStats& st = s.builder.stats();
    EXPECT_GE(st.parts_sent, 300u * parts / 2) << "every part keeps being sent";
    EXPECT_EQ(st.unsent[size_t(Unsent::TooLarge)], 0u);
    EXPECT_EQ(st.unsent[size_t(Unsent::NoPrecision)], 0u);
    EXPECT_GT(decoded_after_loss, 100u);
}

TEST(Parts, ACorruptEntryIsRefusedAloneAndTheOthersInItsDatagramAreApplied) {
    Stream s(builtin_clip("walk"), 3);
    std::vector<SnapshotPart> sent;
    for (uint32_t t = 2; t <= 20; t += 2) {
        sent = s.tick(t);
        ASSERT_EQ(sent.size(), 1u);
        std::vector<DecodedCharacter> out;
        if (t < 20) {
            ASSERT_EQ(s.decode(sent[0], out), SnapshotError::None);
            s.builder.on_delivered(t, sent[0].units);
        }
    }
    // Flip a bit in the middle of the second entry's coded bytes.
    std::vector<uint8_t>& data = sent[0].data;
    const std::vector<test::PayloadEntry> entries = test::payload_entries(data);
    ASSERT_GE(entries.size(), 2u);
    const size_t at = entries[1].coded_at, len = entries[1].coded_bytes;
    ASSERT_GT(len, 4u);
    data[at + len / 2] ^= 0x10;
    std::vector<DecodedCharacter> out;
    std::vector<RefusedCharacter> refused;
    EXPECT_EQ(s.decode(sent[0], out, &refused), SnapshotError::BadPayload);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0].error, SnapshotError::BadPayload);
    const uint16_t bad = refused[0].id;
    ASSERT_EQ(out.size(), 2u) << "the other two characters are applied";
    for (const DecodedCharacter& d : out) {
        EXPECT_NE(d.id, bad);
        EXPECT_EQ(*d.state, s.now[d.id].state);
    }
    EXPECT_EQ(s.decoder.find(bad, 20), nullptr) << "nothing of the refused entry is kept";

    // The client asks for that character again: its next update is full, the others stay deltas,
    // and it decodes.
    s.builder.on_delivered(20, sent[0].units);  // the datagram itself was acknowledged
    s.builder.resync(bad, kAllJoints, 20);
    const std::vector<SnapshotPart> next = s.tick(22);
    ASSERT_EQ(next.size(), 1u);
    for (const auto& [id, mode] : entry_modes(next[0].data)) EXPECT_EQ((mode & kModeMask) == 0, id == bad) << "character " << id;
    EXPECT_EQ(s.decode(next[0], out), SnapshotError::None);
    EXPECT_EQ(out.size(), 3u);
    EXPECT_EQ(s.builder.stats().resyncs, 1u);
}

TEST(Parts, EntriesForAnUnknownSkeletonOrOutsideTheSkeletonAreRefusedAlone) {
    Stream s(builtin_clip("walk"), 2);
    const std::vector<SnapshotPart> sent = s.tick(2);
    std::vector<DecodedCharacter> out;
    std::vector<RefusedCharacter> refused;
    // Character 1's skeleton is not known to this receiver.
    const SnapshotError e = s.decoder.decode(sent[0].tick, sent[0].data, [](uint16_t id) { return id == 1 ? -1 : 0; }, s.lookup, out, &refused);
    EXPECT_EQ(e, SnapshotError::UnknownCharacter);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 0);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0].id, 1);
    // A part beyond the skeleton's joints.
    std::vector<uint8_t> forged = {0, kModeFlagsFollow, uint8_t(kModePart), 30, 5, 2, 0, 0};
    EXPECT_EQ(s.decoder.decode(4, forged, [](uint16_t) { return 0; }, s.lookup, out, &refused), SnapshotError::BadRange);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0].error, SnapshotError::BadRange);
}

TEST(Parts, WhatCannotBeSentIsCountedByReasonAndReportedOncePerCharacter) {
    BuilderConfig bc;
    bc.max_payload_bytes = 200;  // smaller than a full 96-joint part
    Stream s(make_game_rig(builtin_clip("walk")), 2, bc);
    for (uint32_t t = 2; t <= 10; t += 2) s.tick(t);
    const BuilderStats& st = s.builder.stats();
    EXPECT_GT(st.unsent[size_t(Unsent::TooLarge)], 0u);
    std::vector<UnsentReport> reports = s.builder.take_unsent_reports();
    size_t too_large = 0;
    for (const UnsentReport& r : reports) too_large += r.why == Unsent::TooLarge;
    EXPECT_EQ(too_large, 2u) << "once per character, not per part or snapshot";
    s.tick(12);
    EXPECT_TRUE(s.builder.take_unsent_reports().empty());

    // A budget smaller than a part of a 250-joint character: the budget is kept for the part that
    // does not fit until it does, so every part still goes (none waits two seconds).
    BuilderConfig tight;
    tight.bandwidth_bps = 30000;  // 125 bytes per snapshot
    Stream t(make_game_rig(builtin_clip("walk")), 1, tight);
    for (uint32_t k = 2; k <= 400; k += 2) t.tick(k);
    EXPECT_GT(t.builder.stats().unsent[size_t(Unsent::Budget)], 0u);
    EXPECT_EQ(t.builder.stats().unsent[size_t(Unsent::Starved)], 0u);
    EXPECT_GE(t.builder.stats().parts_sent, 3u * 4u);
    // A budget far too small (10 bytes a snapshot): the parts starve, and that is reported.
    BuilderConfig starving;
    starving.bandwidth_bps = 2400;
    Stream u(make_game_rig(builtin_clip("walk")), 1, starving);
    for (uint32_t k = 2; k <= 400; k += 2) u.tick(k);
    EXPECT_GT(u.builder.stats().unsent[size_t(Unsent::Starved)], 0u);
}

TEST(Parts, AssemblyWaitsForEveryPartAndCarriesALostPartForwardByItsVelocities) {
    const Clip clip = make_game_rig(builtin_clip("walk"));
    const SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    const std::vector<JointRange> parts = plan_parts(size_t(clip.joints()));
    ASSERT_EQ(parts.size(), 3u);
    auto state_at = [&](uint32_t t) {
        return quantize_character(test::sample_pose(clip, double(t) / 60.0, Wrap::Loop), clip.skeleton, prec, 0);
    };
    SnapshotAssembler a(60.0f);
    // Tick 2: the parts in two datagrams; nothing is ready until the second arrives.
    const QCharacter q2 = state_at(2);
    a.begin_datagram(2, 0, 2);
    a.add(7, 2, q2, parts[0], clip.skeleton, prec);
    a.add(7, 2, q2, parts[1], clip.skeleton, prec);
    a.end_datagram(2);
    EXPECT_TRUE(a.take_ready().empty());
    a.begin_datagram(2, 1, 2);
    a.add(7, 2, q2, parts[2], clip.skeleton, prec);
    std::vector<SnapshotAssembler::Ready> ready = a.take_ready();
    ASSERT_EQ(ready.size(), 1u) << "ready as soon as every joint is in";
    Pose full(clip.joints());
    dequantize_character(full, q2, clip.skeleton, prec);
    for (int j = 0; j < clip.joints(); ++j) EXPECT_EQ(quat_dot(ready[0].pose.rot[size_t(j)], full.rot[size_t(j)]), quat_dot(full.rot[size_t(j)], full.rot[size_t(j)])) << j;
    // Tick 4: the datagram with the last part is lost; a datagram of tick 6 closes tick 4.
    const QCharacter q4 = state_at(4);
    a.begin_datagram(4, 0, 2);
    a.add(7, 4, q4, parts[0], clip.skeleton, prec);
    a.add(7, 4, q4, parts[1], clip.skeleton, prec);
    a.end_datagram(4);
    EXPECT_TRUE(a.take_ready().empty());
    a.begin_datagram(6, 0, 2);
    ready = a.take_ready();
    ASSERT_EQ(ready.size(), 1u);
    EXPECT_EQ(ready[0].tick, 4u);
    const Pose& p = ready[0].pose;
    const float dt = 2.0f / 60.0f;
    for (uint32_t j = parts[2].first; j < parts[2].end(); ++j) {
        EXPECT_NEAR(length(p.pos[j] - (full.pos[j] + full.vel[j] * dt)), 0.0f, 1e-5f) << j;
        const quat want = quat_mul(quat_from_scaled_angle_axis(full.ang[j] * dt), full.rot[j]);
        EXPECT_NEAR(std::fabs(quat_dot(p.rot[j], want)), 1.0f, 1e-5f) << j;
    }
    Pose fresh(clip.joints());
    dequantize_character(fresh, q4, clip.skeleton, prec);
    for (uint32_t j = 0; j < parts[1].end(); ++j) EXPECT_EQ(quat_dot(p.rot[j], fresh.rot[j]), quat_dot(fresh.rot[j], fresh.rot[j])) << j;
    // The late datagram of tick 4 then arrives: kept for later ticks, never shown as tick 4 again.
    a.begin_datagram(4, 1, 2);
    a.add(7, 4, q4, parts[2], clip.skeleton, prec);
    a.end_datagram(4);
    EXPECT_TRUE(a.take_ready().empty());
}

TEST(Parts, AnAcknowledgementOfADeltaAgainstAVoidedBaselineDoesNotRevive) {
    // The client refused tick 10's entry (its baseline was missing) and asked for a resync; the
    // datagrams of ticks 12 and 14, coded against tick 10's chain, were refused too but arrive
    // acknowledged after the resync: the next update must still be full.
    Stream s(builtin_clip("walk"), 1);
    for (uint32_t t = 2; t <= 8; t += 2) s.builder.on_delivered(t, s.tick(t)[0].units);
    const std::vector<SnapshotPart> p10 = s.tick(10), p12 = s.tick(12), p14 = s.tick(14);
    s.builder.on_delivered(10, p10[0].units);
    s.builder.resync(0, kAllJoints, 10);
    s.builder.on_delivered(12, p12[0].units);
    s.builder.on_delivered(14, p14[0].units);
    const std::vector<SnapshotPart> next = s.tick(16);
    ASSERT_EQ(entry_modes(next[0].data).size(), 1u);
    EXPECT_EQ(entry_modes(next[0].data)[0].second & kModeMask, 0u) << "full, not a delta against a state the client lacks";
}

TEST(Parts, PartArithmeticMatchesThePlanForEverySize) {
    for (uint32_t n = 1; n <= 1024; ++n) {
        const std::vector<JointRange> plan = plan_parts(n);
        ASSERT_EQ(part_count(n), plan.size()) << n;
        for (uint32_t k = 0; k < plan.size(); ++k) {
            ASSERT_EQ(part_range(n, k).first, plan[k].first) << n;
            ASSERT_EQ(part_range(n, k).count, plan[k].count) << n;
        }
        // Every range starting at a joint near a part boundary: accepted exactly when planned.
        for (const JointRange& r : plan)
            for (uint32_t first : {r.first, r.first + 1, r.first > 0 ? r.first - 1 : 0u})
                for (uint32_t count : {r.count, r.count + 1, r.count - 1, n - first}) {
                    const bool planned = (first == 0 && count == n) ||
                                         std::any_of(plan.begin(), plan.end(), [&](const JointRange& p) { return p.first == first && p.count == count; });
                    ASSERT_EQ(is_planned_part({first, count}, n), planned && count > 0 && first < n) << n << " " << first << " " << count;
                }
    }
}

TEST(Parts, OnlyThePlannedPartsOfASkeletonAreAccepted) {
    EXPECT_TRUE(is_planned_part({0, 31}, 31));
    const std::vector<JointRange> plan = plan_parts(250);
    for (const JointRange& r : plan) EXPECT_TRUE(is_planned_part(r, 250));
    EXPECT_FALSE(is_planned_part({plan[1].first + 1, 1}, 250));
    EXPECT_FALSE(is_planned_part({0, 1}, 250));
    EXPECT_FALSE(is_planned_part({240, 20}, 250));
    EXPECT_FALSE(is_planned_part({0, 0}, 250));
}

TEST(Parts, ARefusingClientAsksBoundedlyWhateverTheServerSends) {
    // A hostile server's datagram with 500 refused entries of distinct characters, then the same
    // again: at most 20 requests a second, none repeated within 100 ms; several parts of one
    // character are asked as the whole character.
    ResyncThrottle t;
    std::vector<RefusedCharacter> many;
    for (uint16_t id = 0; id < 500; ++id) many.push_back({id, {0, 96}, SnapshotError::MissingBaseline});
    EXPECT_EQ(t.requests(many, 10, 0.0).size(), size_t(ResyncThrottle::kMaxPerSecond));
    EXPECT_TRUE(t.requests(many, 12, 0.05).empty());
    EXPECT_EQ(t.requests(many, 14, 1.01).size(), size_t(ResyncThrottle::kMaxPerSecond));
    EXPECT_GT(t.suppressed(), 900u);
    ResyncThrottle u;
    const std::vector<RefusedCharacter> parts = {{7, {0, 84}, SnapshotError::BadPayload}, {7, {84, 83}, SnapshotError::MissingBaseline}};
    const std::vector<ResyncRequest> r = u.requests(parts, 20, 0.0);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].first_joint, 0xFFFF);
    EXPECT_EQ(r[0].tick, 20u);
    const std::vector<ResyncRequest> one = u.requests({{8, {84, 83}, SnapshotError::BadPayload}}, 22, 0.0);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].first_joint, 84);
}

TEST(Parts, AssemblyCountsADuplicatedDatagramOnceAndWaitsForANewMotionWhole) {
    const Clip clip = make_game_rig(builtin_clip("walk"));
    const SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    const std::vector<JointRange> parts = plan_parts(size_t(clip.joints()));
    const QCharacter q = quantize_character(test::sample_pose(clip, 0.1), clip.skeleton, prec, 0);
    SnapshotAssembler a(60.0f);
    for (uint32_t t : {2u, 4u}) {  // every part at ticks 2 and 4, one datagram each
        a.begin_datagram(t, 0, 1);
        for (const JointRange& r : parts) a.add(1, t, q, r, clip.skeleton, prec);
        a.end_datagram(t);
    }
    EXPECT_EQ(a.take_ready().size(), 2u);
    // Tick 6 in two datagrams, the first one duplicated: not complete until the second arrives.
    a.begin_datagram(6, 0, 2);
    a.add(1, 6, q, parts[0], clip.skeleton, prec);
    a.end_datagram(6);
    a.begin_datagram(6, 0, 2);
    a.add(1, 6, q, parts[0], clip.skeleton, prec);
    a.end_datagram(6);
    EXPECT_TRUE(a.take_ready().empty()) << "a duplicate is not the missing datagram";
    a.begin_datagram(6, 1, 2);
    a.add(1, 6, q, parts[1], clip.skeleton, prec);
    a.add(1, 6, q, parts[2], clip.skeleton, prec);
    a.end_datagram(6);
    EXPECT_EQ(a.take_ready().size(), 1u);
    // A teleport (epoch 1) whose last part is lost: nothing of the new motion is shown until every
    // part of it has arrived.
    QCharacter moved = q;
    moved.epoch = 1;
    a.begin_datagram(8, 0, 2);
    a.add(1, 8, moved, parts[0], clip.skeleton, prec);
    a.add(1, 8, moved, parts[1], clip.skeleton, prec);
    a.end_datagram(8);
    a.begin_datagram(10, 0, 1);
    EXPECT_TRUE(a.take_ready().empty());
    a.add(1, 10, moved, parts[0], clip.skeleton, prec);
    a.add(1, 10, moved, parts[1], clip.skeleton, prec);
    a.add(1, 10, moved, parts[2], clip.skeleton, prec);
    const std::vector<SnapshotAssembler::Ready> r = a.take_ready();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].epoch, 1);
    EXPECT_EQ(r[0].tick, 10u);
}

TEST(Parts, APartAtRestIsSkippedOnlyOnceTheClientHoldsWhatWasLastSent) {
    // The face of the game rig at rest: skipped while its newest state is acknowledged; sent while
    // the newest sent state is unacknowledged (in flight or lost).
    Clip clip = make_game_rig(builtin_clip("walk"));
    const std::vector<JointRange> plan = plan_parts(size_t(clip.joints()));
    ASSERT_EQ(plan.size(), 3u);
    for (int f = 0; f < clip.frames; ++f)
        for (int j = int(plan[1].first); j < clip.joints(); ++j) clip.rot(f, j) = quat{};  // parts 2 and 3 at rest
    Stream s(clip, 1);
    // Every part sent in full once and acknowledged (the budget spreads them over a few snapshots).
    for (uint32_t t = 2; t <= 20; t += 2)
        for (const SnapshotPart& p : s.tick(t)) s.builder.on_delivered(t, p.units);
    const uint64_t at_rest = s.builder.stats().units_at_rest;
    auto units = [](const std::vector<SnapshotPart>& ps) {
        size_t n = 0;
        for (const SnapshotPart& p : ps) n += p.units.size();
        return n;
    };
    EXPECT_EQ(units(s.tick(22)), 1u) << "only the moving part: the others are at rest as acknowledged";
    EXPECT_EQ(s.builder.stats().units_at_rest - at_rest, 2u);
    // The client resyncs the face part: its full update goes, and until that is acknowledged the
    // part is sent again each snapshot, at rest or not.
    s.builder.resync(0, plan[1].first, 22);
    EXPECT_EQ(units(s.tick(24)), 2u);
    EXPECT_EQ(units(s.tick(26)), 2u) << "the full update of tick 24 is not acknowledged yet";
}

TEST(Parts, APartThatReturnsToItsAcknowledgedStateIsSentWhileANewerOneIsUnacknowledged) {
    // Still states X (tick 2, acknowledged), Y (tick 4, on its way), then X again at tick 6: the
    // client holds Y, so X must be sent even though it equals the acknowledged state.
    const Clip clip = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    const PrecisionLookup lookup = [&](uint16_t) { return &prec; };
    Pose rest(clip.skeleton), turned(clip.skeleton);
    turned.rot[3] = quat_from_scaled_angle_axis(vec3{0.3f, 0, 0});
    const QCharacter x = quantize_character(rest, clip.skeleton, prec, 0), y = quantize_character(turned, clip.skeleton, prec, 0);
    SnapshotHistory history;
    SnapshotBuilder b;
    auto send = [&](uint32_t tick, const QCharacter& q) {
        const std::vector<CharacterSnapshot> now = {{0, 0, q}};
        history.add(tick, now);
        return b.build(tick, now, history, lookup);
    };
    const std::vector<SnapshotPart> first = send(2, x);
    ASSERT_EQ(first.size(), 1u);
    b.on_delivered(2, first[0].units);
    EXPECT_TRUE(send(10, x).empty()) << "at rest as acknowledged: nothing to send";
    EXPECT_EQ(send(12, y).size(), 1u);
    EXPECT_EQ(send(14, x).size(), 1u) << "the client holds tick 12's state, not the acknowledged one";
}

TEST(Parts, AServerJumpingItsTickAheadCostsTheClientNothing) {
    // A snapshot four billion ticks after the previous one, the next datagram in the sequence: none
    // was lost, and the work does not grow with the ticks skipped.
    ClientSession session;
    session.connect(0.0);
    session.update(0.0);
    uint64_t salt = 0;
    for (const auto& d : session.take_outgoing())
        if (const auto p = net::decode_packet(d); p && p->type == net::MessageType::ConnectRequest)
            salt = p->message<net::wire::ConnectRequest>()->client_salt();
    session.on_datagram(net::build_challenge({1, 0, 0}, salt, net::Cookie{}), 0.0);
    session.on_datagram(net::build_accept({2, 0, 0}, {7, 60, 30, 0, 0}), 0.0);
    ASSERT_EQ(session.state(), ConnectionState::Connected);
    const std::vector<uint8_t> empty;  // no entries
    session.on_datagram(net::build_snapshot({3, 0, 0}, 2, 0, 1, empty), 0.1);
    const auto t0 = std::chrono::steady_clock::now();
    session.on_datagram(net::build_snapshot({4, 0, 0}, 4000000002u, 0, 1, empty), 0.2);
    // Work per lost tick would take minutes for four billion of them (and listing them, memory).
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(session.stats().snapshots_lost, 0u);
    EXPECT_EQ(session.stats().snapshots_received, 2u);
    // One datagram missing before the next: one of the ticks skipped counts as lost, not all.
    session.on_datagram(net::build_snapshot({6, 0, 0}, 4000000102u, 0, 1, empty), 0.3);
    EXPECT_EQ(session.stats().snapshots_lost, 1u);
    EXPECT_EQ(session.stats().datagrams_lost, 1u);
}

TEST(Parts, TheReceiverHoldsTheStatesTheSenderCanReferenceAndNoOlder) {
    // A game rig streamed for 20 s (30 Hz snapshots of 60 Hz ticks, every part acknowledged).
    Stream s(make_game_rig(builtin_clip("walk")), 1);
    const size_t joints = s.prec.joints.size();
    uint32_t last = 0;
    for (uint32_t t = 2; t <= 1200; t += 2) {
        for (const SnapshotPart& p : s.tick(t)) {
            std::vector<DecodedCharacter> out;
            ASSERT_EQ(s.decode(p, out), SnapshotError::None) << "tick " << t;
            s.builder.on_delivered(t, p.units);
        }
        last = t;
    }
    EXPECT_NE(s.decoder.find(0, last - (kHistoryTicks - 2)), nullptr) << "the oldest state a reference may reach";
    EXPECT_EQ(s.decoder.find(0, last - kHistoryTicks), nullptr);
    // A slot per snapshot tick within kHistoryTicks: 128 states of 250 joints, 76 + 2 bytes each
    // (the joint, whether it is held, and the age of the baseline it was decoded against).
    const size_t states = kHistoryTicks / 2 * joints * (sizeof(QJoint) + 2);
    EXPECT_GE(s.decoder.held_bytes(), states);
    EXPECT_LE(s.decoder.held_bytes(), states + kHistoryTicks * 128) << "twice the history would be " << 2 * states;
}

// Under a tight budget a large character is updated every few ticks, at odd and even ticks alike:
// over time every slot of the window has held a state. The receiver keeps only the states within
// reach (and a few spare buffers), however long it runs; keeping every slot's buffers, a game rig
// cost each client 4.9 MB (256 states) where about 40 were live.
TEST(Parts, AReceiverHoldsOnlyTheStatesWithinReachHoweverLongItRuns) {
    Stream s(make_game_rig(builtin_clip("walk")), 1);
    const size_t joints = s.prec.joints.size(), state = joints * (sizeof(QJoint) + 2);
    const uint32_t step = 7;  // ticks between updates: 256 / 7 = 36 states within reach
    size_t most = 0;
    for (uint32_t t = step; t <= 60 * 60; t += step) {
        for (const SnapshotPart& p : s.tick(t)) {
            std::vector<DecodedCharacter> out;
            ASSERT_EQ(s.decode(p, out), SnapshotError::None) << "tick " << t;
            s.builder.on_delivered(t, p.units);
        }
        if (t > 2 * kHistoryTicks) most = std::max(most, s.decoder.held_bytes());
    }
    const size_t live = kHistoryTicks / step + 1;
    RecordProperty("held_states", int(most / state));
    EXPECT_GE(most, (live - 1) * state);
    EXPECT_LE(most, (live + 4 + 1) * state + kHistoryTicks * 128) << "every slot would be " << kHistoryTicks * state;
}

// An owner that stops taking the assembled poses does not make the client grow: at most
// kMaxReadyPerCharacter of each character wait, the oldest dropped and counted. (The capacity
// benchmark's in-process clients never took theirs: 4 MB a tick of poses.)
TEST(Parts, PosesNobodyTakesAreBoundedAndCounted) {
    const Clip clip = make_game_rig(builtin_clip("walk"));
    const SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    const QCharacter q = quantize_character(test::sample_pose(clip, 0.0, Wrap::Loop), clip.skeleton, prec, 0);
    SnapshotAssembler a(60.0f);
    const uint32_t keep = uint32_t(SnapshotAssembler::kMaxReadyPerCharacter), n = 300;
    for (uint32_t t = 1; t <= n; ++t) {
        a.begin_datagram(t, 0, 1);
        a.add(1, t, q, {0, uint32_t(clip.joints())}, clip.skeleton, prec);
        if (t == 1) a.add(2, t, q, {0, uint32_t(clip.joints())}, clip.skeleton, prec);  // another character, once
        a.end_datagram(t);
    }
    EXPECT_EQ(a.take_dropped(), n - keep);
    EXPECT_EQ(a.take_dropped(), 0u) << "taken";
    const std::vector<SnapshotAssembler::Ready> ready = a.take_ready();
    ASSERT_EQ(ready.size(), keep + 1);
    EXPECT_EQ(ready.front().id, 2) << "the other character's pose is kept";
    EXPECT_EQ(ready[1].tick, n - keep + 1) << "the oldest went";
    EXPECT_EQ(ready.back().tick, n);
}

// A hostile sender alternating two ticks kHistoryTicks apart makes one slot hold each in turn; the
// receiver's bookkeeping of which states to give back stays within the window (it grew by a
// tick per datagram, without bound, before it was capped).
TEST(Parts, TicksAlternatingAWindowApartDoNotGrowTheReceiver) {
    Stream s(builtin_clip("walk"), 1);
    const std::vector<SnapshotPart> first = s.tick(2);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(entry_modes(first[0].data).at(0).second & kModeMask, 0u) << "a full state decodes at any tick";
    std::vector<DecodedCharacter> out;
    size_t early = 0;
    for (uint32_t i = 0; i < 4000; ++i) {
        const uint32_t tick = 1000 + (i % 2 ? 0 : kHistoryTicks);
        ASSERT_EQ(s.decoder.decode(tick, first[0].data, [](uint16_t) { return 0; }, s.lookup, out), SnapshotError::None);
        if (i == 10) early = s.decoder.held_bytes();
    }
    EXPECT_LE(s.decoder.held_bytes(), early + kHistoryTicks * sizeof(uint32_t));
}

TEST(Parts, RecycledPosesCarryTheNextStatesInTheirOwnBuffers) {
    const Clip clip = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(clip.skeleton, clip.metres_per_unit);
    const JointRange all{0, uint32_t(clip.joints())};
    SnapshotAssembler a(60.0f);
    auto deliver = [&](uint16_t id, uint32_t t) {
        const QCharacter q = quantize_character(test::sample_pose(clip, double(t + id) / 60.0), clip.skeleton, prec, 0);
        a.begin_datagram(t, 0, 1);
        a.add(id, t, q, all, clip.skeleton, prec);
        a.end_datagram(t);
        Pose want(clip.joints());
        dequantize_character(want, q, clip.skeleton, prec);
        return want;
    };
    deliver(1, 2);
    deliver(2, 2);
    std::vector<SnapshotAssembler::Ready> first = a.take_ready();
    ASSERT_EQ(first.size(), 2u);
    std::set<const vec3*> buffers;
    for (const SnapshotAssembler::Ready& r : first) buffers.insert(r.pose.pos.data());
    a.recycle(std::move(first));
    const Pose want1 = deliver(1, 4), want2 = deliver(2, 4);
    const std::vector<SnapshotAssembler::Ready> next = a.take_ready();
    ASSERT_EQ(next.size(), 2u);
    for (const SnapshotAssembler::Ready& r : next) {
        EXPECT_EQ(buffers.count(r.pose.pos.data()), 1u) << "character " << r.id << ": a recycled buffer";
        const Pose& want = r.id == 1 ? want1 : want2;
        for (int j = 0; j < clip.joints(); ++j) {
            EXPECT_EQ(r.pose.pos[size_t(j)].x, want.pos[size_t(j)].x) << j;
            EXPECT_EQ(r.pose.rot[size_t(j)].w, want.rot[size_t(j)].w) << j;
            EXPECT_EQ(r.pose.ang[size_t(j)].y, want.ang[size_t(j)].y) << j;
        }
    }
    // Spares are bounded: a flood of used poses keeps two a character.
    std::vector<SnapshotAssembler::Ready> many(50);
    for (SnapshotAssembler::Ready& r : many) r.pose = Pose(clip.joints());
    a.recycle(std::move(many));
    EXPECT_EQ(a.spare_poses(), 2 * SnapshotAssembler::kSparePerCharacter);
    deliver(1, 6);
    EXPECT_EQ(a.take_ready().size(), 1u);
    EXPECT_EQ(a.spare_poses(), 2 * SnapshotAssembler::kSparePerCharacter - 1) << "one taken for character 1's pose";
}
