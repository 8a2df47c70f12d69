// Snapshot codec: range coder, quantization bounds, delta coding against acknowledged baselines
// under loss / duplication / reordering of acks, packing, budget and priorities, and the figures
// (bits per joint, FK error) on the shared clips.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/game_rig.h>
#include <kinesync/offline/looping.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_sample.h>
#include "common/src/codec/range_coder.h"
#include "common/src/codec/snapshot_codec.h"
#include "server/src/net/snapshot_builder.h"
#include "tests/support/clips.h"
#include "tests/support/codec_sim.h"
#include "tests/support/fd.h"
#include "tests/support/snapshot_entries.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(Codec, LevelOfDetailCodesTheTopAndHoldsTheRestOnBothEnds) {
    Rng rng(8);
    Skeleton s = random_skeleton(16, rng);
    const SkeletonPrecision prec = plan_precision(s, 1.0f);
    for (int depth : {0, 1, 2}) {
        for (int trial = 0; trial < 50; ++trial) {
            Pose a = random_pose(16, rng), b = a;
            op_integrate(b, a, 0.05f);
            const QCharacter qa = quantize_character(a, s, prec, 1), qb = quantize_character(b, s, prec, 1);
            CharacterBaseline cb{&qa, 0.05, nullptr, 0.0};
            cb.hold_depth = depth;
            std::vector<uint8_t> lod, all;
            QCharacter coded, out;
            encode_character(lod, qb, &cb, prec, all_joints(prec), nullptr, &coded);
            ASSERT_TRUE(decode_character(lod, out, &cb, prec, all_joints(prec)));
            ASSERT_EQ(out, coded) << "the decoder rebuilds exactly the mix the encoder reports";
            for (size_t j = 0; j < out.joints.size(); ++j) {
                if (prec.joints[j].depth > depth) EXPECT_EQ(out.joints[j], qa.joints[j]) << "held joint " << j;
                else EXPECT_EQ(out.joints[j], qb.joints[j]) << "coded joint " << j;
            }
            CharacterBaseline full = cb;
            full.hold_depth = -1;
            encode_character(all, qb, &full, prec, all_joints(prec));
            EXPECT_LT(lod.size(), all.size()) << "holding joints costs less";
            // A decoder told another depth does not accept it as a valid state.
            CharacterBaseline other = cb;
            other.hold_depth = depth + 5;
            QCharacter wrong;
            EXPECT_FALSE(decode_character(lod, wrong, &other, prec, all_joints(prec)) && wrong == coded);
        }
    }
}

TEST(Codec, HostilePayloadsAreRejectedOrDecodeWithoutHarm) {
    const Clip c = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(c.skeleton, 1.0f);
    const QCharacter q0 = quantize_character(sample_pose(c, 0.1), c.skeleton, prec, 0);
    const QCharacter q1 = quantize_character(sample_pose(c, 0.2), c.skeleton, prec, 0);
    std::vector<uint8_t> good;
    CharacterBaseline cb{&q0, 0.1, nullptr, 0};
    encode_character(good, q1, &cb, prec, all_joints(prec));
    std::mt19937 rng(5);
    int rejected = 0, accepted = 0;
    for (int i = 0; i < 3000; ++i) {
        std::vector<uint8_t> m = good;
        switch (i % 3) {
            case 0: m[rng() % m.size()] ^= uint8_t(1u << (rng() % 8)); break;
            case 1: m.resize(rng() % m.size()); break;
            default: for (auto& b : m) b = uint8_t(rng());
        }
        QCharacter out;
        (decode_character(m, out, &cb, prec, all_joints(prec)) ? accepted : rejected)++;
        EXPECT_EQ(out.joints.size(), q1.joints.size());
    }
    EXPECT_EQ(accepted + rejected, 3000);
    EXPECT_GT(rejected, 0);
}

TEST(Codec, DeltaDecodingStaysExactUnderLostDuplicatedAndReorderedAcks) {
    const Clip walk = builtin_clip("walk"), run = builtin_clip("run"), turn = builtin_clip("turn");
    for (const LinkSim& link : {LinkSim{0.0f, 0.0f, 0.0f, 6, 0, 1}, LinkSim{0.1f, 0.2f, 0.3f, 6, 8, 2},
                                LinkSim{0.3f, 0.3f, 0.5f, 20, 30, 3}}) {
        const SimResult r = simulate({&walk, &run, &turn}, 10.0, 30.0f, link);
        EXPECT_GT(r.decoded, 500u);
        EXPECT_EQ(r.errors, 0u) << "loss " << link.loss;
        EXPECT_EQ(r.mismatches, 0u) << "every decoded state equals the server's";
    }
}

// The bytes-per-second figure is what a game's sealed session puts on the wire: every datagram's
// IPv4/UDP headers, seal (prefix, counter, tag) and snapshot header besides its payload.
TEST(Codec, TheWireFigureCountsEverySealedByte) {
    const Clip walk = builtin_clip("walk");
    // 4 s: every seal's counter fits one byte; 10 s: those after the 256th take two.
    for (const double seconds : {4.0, 10.0}) {
        const SimResult r = simulate({&walk}, seconds, 30.0f, LinkSim{0.0f, 0.0f, 0.0f, 6, 0, 4});
        ASSERT_GT(r.datagrams, uint64_t(25 * seconds));
        const double two_byte_counters = r.datagrams > 256 ? double(r.datagrams - 256) : 0.0;
        EXPECT_EQ(two_byte_counters > 0, seconds > 5.0);
        const double per_datagram = double(net::kIpUdpHeaderBytes + 1 + 1 + net::kSealTagBytes + net::kSnapshotHeaderBytes);
        EXPECT_NEAR(r.bytes_per_s * seconds, double(r.payload_bytes) + per_datagram * double(r.datagrams) + two_byte_counters, 1e-6)
            << seconds << " s";
    }
}

TEST(Codec, DatagramsStayUnderTheMtuAndBudgetRotatesCharacters) {
    const Clip walk = builtin_clip("walk");
    std::vector<const Clip*> many(40, &walk);
    BuilderConfig cfg;
    cfg.bandwidth_bps = 64000;  // far too little for 40 characters at 30 Hz
    const SimResult r = simulate(many, 6.0, 30.0f, LinkSim{0.0f, 0.0f, 0.0f, 6, 0, 4}, cfg);
    EXPECT_LE(r.max_datagram, cfg.max_payload_bytes);
    EXPECT_EQ(r.mismatches, 0u);
    // Everyone is sent eventually: 40 characters over 180 snapshots.
    EXPECT_GT(r.decoded, 40u * 5u);
    EXPECT_LT(r.bytes_per_s, 64000 / 8 * 1.6);  // within budget (plus per-datagram headers)
}

TEST(Codec, SameInputGivesSameBytes) {
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    auto run_once = [&] {
        SnapshotHistory h;
        SnapshotBuilder b;
        std::vector<uint8_t> all;
        for (uint32_t tick = 2; tick < 200; tick += 2) {
            std::vector<CharacterSnapshot> now{{1, 0, quantize_character(sample_pose(walk, tick / 60.0), walk.skeleton, prec, 0)}};
            h.add(tick, now);
            for (const auto& p : b.build(tick, now, h, [&](uint16_t) { return &prec; })) {
                all.insert(all.end(), p.data.begin(), p.data.end());
                if (tick % 6 == 0) b.on_delivered(tick, p.units);
            }
        }
        return all;
    };
    EXPECT_EQ(run_once(), run_once());
}

// A builder finds its per-character state by the character, however the characters come ordered
// (it keeps the previous build's order to skip lookups): the same characters, in another order or
// with one away for a while, are sent in the same turns.
TEST(Codec, TheBudgetGivesTurnsByCharacterNotByOrder) {
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    auto state = [&](uint16_t id, uint32_t tick) {
        return CharacterSnapshot{id, 0, quantize_character(sample_pose(walk, tick / 60.0 + id), walk.skeleton, prec, 0)};
    };
    const auto lookup = [&](uint16_t) { return &prec; };
    SnapshotHistory h0;
    const std::vector<CharacterSnapshot> one{state(1, 2)};
    h0.add(2, one);
    const size_t entry = SnapshotBuilder().build(2, one, h0, lookup).at(0).data.size();
    // Which characters each build sends, never acknowledged (all full states, about one a snapshot).
    auto turns = [&](bool shuffled) {
        BuilderConfig cfg;
        cfg.bandwidth_bps = 1.5f * float(entry * 8 * 30);
        SnapshotHistory h;
        SnapshotBuilder b(cfg);
        std::vector<uint16_t> sent;
        for (uint32_t tick = 2; tick <= 80; tick += 2) {
            std::vector<uint16_t> ids = {1, 2, 3, 4};
            if (tick >= 30 && tick < 40) ids = {1, 3, 4};  // character 2 away for a while
            if (shuffled && tick >= 10) std::reverse(ids.begin(), ids.end());
            if (shuffled && tick >= 50) std::rotate(ids.begin(), ids.begin() + 1, ids.end());
            std::vector<CharacterSnapshot> now;
            for (uint16_t id : ids) now.push_back(state(id, tick));
            h.add(tick, now);
            // Distinct rates: no two characters tie in priority (ties go in the order given).
            for (const SnapshotPart& p : b.build(tick, now, h, lookup, [](uint16_t id) { return 1.0f + 0.01f * float(id); }))
                for (UnitKey u : p.units) sent.push_back(unit_character(u));
            sent.push_back(0);  // end of this build
        }
        return sent;
    };
    const std::vector<uint16_t> in_order = turns(false);
    EXPECT_GT(std::count_if(in_order.begin(), in_order.end(), [](uint16_t id) { return id != 0; }), 30) << "about one a build";
    EXPECT_EQ(turns(true), in_order);
}

// A forgotten character is new again: its next state goes in full, though it comes back under the
// same id at the same place among the others (whose turn-keeping must not point at what was forgotten).
TEST(Codec, AForgottenCharacterComesBackInFull) {
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    const auto lookup = [&](uint16_t) { return &prec; };
    BuilderConfig cfg;
    cfg.bandwidth_bps = 4e6f;  // every character every snapshot
    SnapshotHistory h;
    SnapshotBuilder b(cfg);
    for (uint32_t tick = 2; tick <= 20; tick += 2) {
        if (tick == 12) b.forget(2);
        std::vector<CharacterSnapshot> now;
        for (uint16_t id : {1, 2, 3}) now.push_back({id, 0, quantize_character(sample_pose(walk, tick / 60.0), walk.skeleton, prec, 0)});
        h.add(tick, now);
        const uint64_t full = b.stats().characters_full, delta = b.stats().characters_delta;
        for (const SnapshotPart& p : b.build(tick, now, h, lookup)) b.on_delivered(tick, p.units);
        SCOPED_TRACE(tick);
        EXPECT_EQ(b.stats().characters_full - full, tick == 2 ? 3u : tick == 12 ? 1u : 0u) << "full states";
        EXPECT_EQ(b.stats().characters_delta - delta, tick == 2 ? 0u : tick == 12 ? 2u : 3u) << "deltas";
    }
}

TEST(Codec, SharedClipFiguresAt30HzWithOnePercentLoss) {
    KS_REQUIRE_MOCAP();
    // 100 ms round trip (acks 6 ticks later), 1 % loss both ways, 30 Hz snapshots, 60 Hz ticks.
    double sum_rotang = 0;
    int n = 0;
    for (const auto& info : shared_clip_infos()) {
        BvhOptions bo;
        bo.skip_frames = 1;
        LoopOptions lo;
        lo.root = RootMode::Fix;  // in place: the figures are about the joints, not root travel
        const Clip c = make_loop(load_bvh(mocap_path(info.file), bo).clip, lo);
        const SimResult r = simulate({&c}, 20.0, 30.0f, LinkSim{0.01f, 0.01f, 0.0f, 6, 2, 9});
        EXPECT_EQ(r.mismatches, 0u);
        std::vector<double> e = r.fk_err_cm;
        std::sort(e.begin(), e.end());
        double mean = 0;
        for (double x : e) mean += x / double(e.size());
        EXPECT_LE(mean, 0.2) << info.file << ": mean FK joint position error (cm)";
        EXPECT_LE(e[size_t(0.99 * double(e.size()))], 0.5) << info.file << ": 99th percentile FK joint position error (cm)";
        const std::string name = info.file;
        record_figure("codec FK error mean cm, " + name, mean);
        record_figure("codec FK error p99 cm, " + name, e[size_t(0.99 * double(e.size()))]);
        record_figure("codec FK error max cm, " + name, e.back());
        record_figure("codec bits/joint delta (all fields), " + name, r.delta_bits_per_joint);
        record_figure("codec bits/joint delta (rotation+angular velocity+flags), " + name, r.delta_rotang_bits_per_joint);
        record_figure("codec bits/joint full, " + name, r.full_bits_per_joint);
        record_figure("codec bytes/s per character (30 Hz, sealed: +28 B IP/UDP, the seal, the 20 B header), " + name, r.bytes_per_s);
        sum_rotang += r.delta_rotang_bits_per_joint;
        ++n;
    }
    record_figure("codec bits/joint delta (rotation+angular velocity+flags), mean over shared clips", sum_rotang / n);
    EXPECT_LT(sum_rotang / n, 20.0) << "average rotation + angular velocity bits per joint over the shared clips";
}

TEST(Codec, AStillJointCostsAFractionOfABit) {
    // The built-in walk, and the same with 200 joints that never move (a face at rest): the
    // payload grows by under half a bit per still joint per snapshot.
    const Clip walk = builtin_clip("walk");
    Clip rig = walk;
    for (int k = 0; k < 200; ++k) {
        rig.skeleton.names.push_back("still" + std::to_string(k));
        rig.skeleton.parents.push_back(k % 5);
        rig.skeleton.offsets.push_back(vec3{0.01f * float(k % 7), 0.02f, 0.01f * float(k % 3)});
    }
    rig.resize(walk.frames);
    for (int f = 0; f < walk.frames; ++f)
        for (int j = 0; j < rig.joints(); ++j) {
            rig.pos(f, j) = j < walk.joints() ? walk.pos(f, j) : rig.skeleton.offsets[size_t(j)];
            rig.rot(f, j) = j < walk.joints() ? walk.rot(f, j) : quat{};
        }
    const test::LinkSim link{0.01f, 0.01f, 0.0f, 6, 2, 9};
    const SimResult a = simulate({&walk}, 20.0, 30.0f, link), b = simulate({&rig}, 20.0, 30.0f, link);
    EXPECT_EQ(b.mismatches, 0u);
    const double per_still = 8.0 * (double(b.payload_bytes) - double(a.payload_bytes)) / double(a.snapshots) / 200.0;
    record_figure("codec payload bits per still joint per snapshot", per_still);
    EXPECT_LT(per_still, 0.5);
    EXPECT_GT(per_still, 0.0);
}

TEST(Codec, SnapshotDecoderSurvivesArbitraryPayloads) {
    // Random and mutated payloads through the receiver's full framing: every one is either decoded
    // or a counted error; nothing else happens (this also runs under ASan/UBSan).
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    const PrecisionLookup lookup = [&](uint16_t s) { return s == 0 ? &prec : nullptr; };
    SnapshotHistory h;
    SnapshotBuilder b;
    std::vector<std::vector<uint8_t>> valid;
    for (uint32_t tick = 2; tick < 40; tick += 2) {
        std::vector<CharacterSnapshot> now{{0, 0, quantize_character(sample_pose(walk, tick / 60.0), walk.skeleton, prec, 0)},
                                           {1, 0, quantize_character(sample_pose(walk, tick / 60.0 + 0.5), walk.skeleton, prec, 0)}};
        h.add(tick, now);
        for (const auto& p : b.build(tick, now, h, lookup)) {
            valid.push_back(p.data);
            b.on_delivered(tick, p.units);
        }
    }
    std::mt19937 rng(11);
    std::map<SnapshotError, int> outcomes;
    SnapshotDecoder dec(60.0f);
    std::vector<DecodedCharacter> out;
    for (int i = 0; i < 20000; ++i) {
        std::vector<uint8_t> m = valid[rng() % valid.size()];
        switch (i % 4) {
            case 0: m[rng() % m.size()] ^= uint8_t(1u << (rng() % 8)); break;
            case 1: m.resize(rng() % m.size()); break;
            case 2: m.insert(m.begin() + std::ptrdiff_t(rng() % m.size()), uint8_t(rng())); break;
            default: m.resize(rng() % 64); for (auto& x : m) x = uint8_t(rng());
        }
        outcomes[dec.decode(uint32_t(2 + 2 * (rng() % 20)), m, [](uint16_t id) { return id < 2 ? 0 : -1; }, lookup, out)]++;
    }
    int total = 0;
    for (const auto& [e, n] : outcomes) total += n;
    EXPECT_EQ(total, 20000);
    EXPECT_GT(outcomes[SnapshotError::BadFormat] + outcomes[SnapshotError::Truncated] + outcomes[SnapshotError::BadPayload] +
                  outcomes[SnapshotError::UnknownCharacter] + outcomes[SnapshotError::MissingBaseline], 1000);
}

TEST(Codec, EntryFramingHoldsShortAgesInTheModeByteAndRefusesWhatItCannotMean) {
    auto read = [](std::vector<uint8_t> bytes, EntryHeader& h) {
        size_t pos = 0;
        return read_entry_header(bytes, pos, h);
    };
    EntryHeader h;
    ASSERT_EQ(read({5, uint8_t(1 | 9 << kModeAgeShift), 3, 0}, h), SnapshotError::None);
    EXPECT_EQ(h.id, 5u);
    EXPECT_EQ(h.mode, 1u) << "the age bits are not mode bits";
    EXPECT_EQ(h.base_age, 9u);
    EXPECT_EQ(h.ctx_age, 3u);
    ASSERT_EQ(read({5, 1, 16, 0, 0}, h), SnapshotError::None);
    EXPECT_EQ(h.base_age, 16u) << "an age beyond the mode byte follows it";
    EXPECT_EQ(read({5, 1, 0x80}, h), SnapshotError::Truncated);
    EXPECT_EQ(read({5, uint8_t(0 | 3 << kModeAgeShift), 0}, h), SnapshotError::BadFormat) << "a full state has no baseline age";
    EXPECT_EQ(read({5, uint8_t(0 | kModeBaseContext), 0}, h), SnapshotError::BadFormat) << "nor a context";
    ASSERT_EQ(read({5, uint8_t(1 | kModeBaseContext | 6 << kModeAgeShift), 0}, h), SnapshotError::None);
    EXPECT_TRUE(h.base_context) << "the baseline's own baseline, without a byte";
    EXPECT_TRUE(h.bytes.empty()) << "the 0 was the length";
    ASSERT_EQ(read({5, uint8_t(1 | kModeLast | kModeBaseContext | 6 << kModeAgeShift), 7, 8, 9}, h), SnapshotError::None);
    EXPECT_TRUE(h.last);
    EXPECT_EQ(h.bytes.size(), 3u) << "the last entry's coded bytes run to the end";
    // A flags byte carries a part or a look-ahead, and nothing else.
    ASSERT_EQ(read({5, kModeFlagsFollow, uint8_t(1 | kModePart), 3, 4, 2, 0, 0}, h), SnapshotError::None);
    EXPECT_EQ(h.mode, 1u | kModePart);
    EXPECT_EQ(h.first, 3u);
    EXPECT_EQ(h.count, 4u);
    EXPECT_EQ(h.base_age, 2u);
    for (const uint8_t flags : {uint8_t(1), uint8_t(3 | kModePart), uint8_t(kModePart | 0x10), uint8_t(0x80 | kModeAhead)})
        EXPECT_EQ(read({5, kModeFlagsFollow, flags, 1, 1, 0, 0}, h), SnapshotError::BadFormat) << int(flags);
    EXPECT_EQ(read({5, kModeFlagsFollow}, h), SnapshotError::Truncated);
    EXPECT_EQ(read({5, uint8_t(kModeFlagsFollow | kModeBaseContext), kModePart, 1, 1, 0}, h), SnapshotError::BadFormat)
        << "a full part has no context";
    EXPECT_EQ(read({5, uint8_t(kModeFlagsFollow | 2 << kModeAgeShift), kModeAhead, 1, 1, 0}, h), SnapshotError::BadFormat)
        << "nor a baseline age";

    // Entries run to the end of the payload, at most kMaxEntries of them.
    SnapshotDecoder dec(60.0f);
    std::vector<DecodedCharacter> out;
    auto unknown = [](uint16_t) { return -1; };
    auto none = [](uint16_t) -> const SkeletonPrecision* { return nullptr; };
    EXPECT_EQ(dec.decode(2, std::vector<uint8_t>{}, unknown, none, out), SnapshotError::None) << "no entries";
    for (const uint32_t n : {kMaxEntries, kMaxEntries + 1}) {
        std::vector<uint8_t> p;
        for (uint32_t i = 0; i < n; ++i) p.insert(p.end(), {1, 0, 0});  // id 1, full, no coded bytes
        EXPECT_EQ(dec.decode(2, p, unknown, none, out), n <= kMaxEntries ? SnapshotError::UnknownCharacter : SnapshotError::BadFormat);
    }

    // What the builder sends: a delta a few ticks old, alone in its payload, costs its id and
    // mode byte before its coded bytes, and nothing else is in the payload.
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    const PrecisionLookup lookup = [&](uint16_t s) { return s == 0 ? &prec : nullptr; };
    SnapshotHistory history;
    SnapshotBuilder b;
    int deltas = 0;
    for (uint32_t tick = 2; tick < 40; tick += 2) {
        std::vector<CharacterSnapshot> now{{3, 0, quantize_character(sample_pose(walk, tick / 60.0), walk.skeleton, prec, 0)}};
        history.add(tick, now);
        for (const SnapshotPart& p : b.build(tick, now, history, lookup)) {
            const std::vector<test::PayloadEntry> entries = test::payload_entries(p.data);
            ASSERT_EQ(entries.size(), 1u);
            EXPECT_EQ(entries[0].coded_at + entries[0].coded_bytes, p.data.size());
            if ((entries[0].mode & kModeMask) == 1) {
                ++deltas;
                EXPECT_EQ(p.data[1] >> kModeAgeShift, 2) << "the baseline two ticks old, in the mode byte";
                EXPECT_NE(p.data[1] & kModeLast, 0) << "the last entry: no length";
                EXPECT_NE(p.data[1] & kModeBaseContext, 0) << "the context is the baseline's own baseline";
                EXPECT_EQ(entries[0].coded_at, 1u + 1u) << "id and mode bytes";
            }
            b.on_delivered(tick, p.units);
        }
    }
    EXPECT_GT(deltas, 10);
}

// Entries of character 1 framed by hand: `coded` against the baseline `base_age` ticks old, its
// context the baseline's own (base_context) or `ctx_age` ticks older than it.
static std::vector<uint8_t> one_entry(const std::vector<uint8_t>& coded, uint32_t base_age, bool base_context, uint32_t ctx_age = 0,
                                      JointRange part = {}) {
    EntryHeader h;
    h.id = 1, h.mode = (base_age ? 1u : 0u) | (part.count ? kModePart : 0u), h.first = part.first, h.count = part.count;
    h.base_age = base_age, h.base_context = base_context, h.ctx_age = ctx_age;
    std::vector<uint8_t> p;
    put_entry_header(p, h, coded.size(), true);
    p.insert(p.end(), coded.begin(), coded.end());
    return p;
}

TEST(Codec, AContextTakenFromTheBaselineIsTheStateTheBaselineWasDecodedAgainst) {
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    const PrecisionLookup lookup = [&](uint16_t s) { return s == 0 ? &prec : nullptr; };
    const auto skeleton_of = [](uint16_t id) { return id == 1 ? 0 : -1; };
    std::vector<QCharacter> q;
    for (int t = 0; t <= 6; ++t) q.push_back(quantize_character(sample_pose(walk, t / 60.0 + 0.4), walk.skeleton, prec, 0));
    std::vector<uint8_t> c2, c4, c6;
    encode_character(c2, q[2], nullptr, prec, all_joints(prec));
    const CharacterBaseline b4{&q[2], 2 / 60.0};
    encode_character(c4, q[4], &b4, prec, all_joints(prec));
    const CharacterBaseline b6{&q[4], 2 / 60.0, &q[2], 2 / 60.0};  // 4's baseline, 2, is the context
    encode_character(c6, q[6], &b6, prec, all_joints(prec));
    std::vector<DecodedCharacter> out;
    SnapshotDecoder dec(60.0f);
    ASSERT_EQ(dec.decode(2, one_entry(c2, 0, false), skeleton_of, lookup, out), SnapshotError::None);
    ASSERT_EQ(dec.decode(4, one_entry(c4, 2, true), skeleton_of, lookup, out), SnapshotError::None) << "a full baseline: no context";
    SnapshotDecoder copy = dec;
    ASSERT_EQ(dec.decode(6, one_entry(c6, 2, true), skeleton_of, lookup, out), SnapshotError::None);
    EXPECT_TRUE(out.at(0).state->joints == q[6].joints);
    // Without the context the same bytes decode to another state, which the check refuses.
    EXPECT_EQ(copy.decode(6, one_entry(c6, 2, false, 0), skeleton_of, lookup, out), SnapshotError::BadPayload);

    // A character in parts: the parts of one tick may have other baselines. A whole-character
    // entry whose baseline's parts were decoded against different ages has no one context.
    const Clip rig = make_game_rig(walk);
    const SkeletonPrecision rp = plan_precision(rig.skeleton, rig.metres_per_unit);
    const PrecisionLookup rig_lookup = [&](uint16_t s) { return s == 0 ? &rp : nullptr; };
    const std::vector<JointRange> parts = plan_parts(rp.joints.size());
    ASSERT_GE(parts.size(), 2u);
    const QCharacter r2 = quantize_character(sample_pose(rig, 0.4), rig.skeleton, rp, 0);
    const QCharacter r4 = quantize_character(sample_pose(rig, 0.4 + 2 / 60.0), rig.skeleton, rp, 0);
    const QCharacter r6 = quantize_character(sample_pose(rig, 0.4 + 4 / 60.0), rig.skeleton, rp, 0);
    SnapshotDecoder rd(60.0f);
    for (const JointRange& part : parts) {
        std::vector<uint8_t> full2, at4;
        encode_character(full2, r2, nullptr, rp, part);
        ASSERT_EQ(rd.decode(2, one_entry(full2, 0, false, 0, part), skeleton_of, rig_lookup, out), SnapshotError::None);
        const bool delta = part.first == 0;  // the first part against tick 2, the others in full
        const CharacterBaseline rb4{&r2, 2 / 60.0};
        encode_character(at4, r4, delta ? &rb4 : nullptr, rp, part);
        ASSERT_EQ(rd.decode(4, one_entry(at4, delta ? 2 : 0, delta, 0, part), skeleton_of, rig_lookup, out), SnapshotError::None);
    }
    std::vector<uint8_t> whole6, part6;
    const CharacterBaseline rb6{&r4, 2 / 60.0};
    encode_character(whole6, r6, &rb6, rp, all_joints(rp));
    EXPECT_EQ(rd.decode(6, one_entry(whole6, 2, true), skeleton_of, rig_lookup, out), SnapshotError::MissingBaseline);
    encode_character(part6, r6, &rb6, rp, parts[1]);
    EXPECT_EQ(rd.decode(6, one_entry(part6, 2, true, 0, parts[1]), skeleton_of, rig_lookup, out), SnapshotError::None)
        << "a part whose baseline was full: no context";
}

TEST(Codec, ASharedEncodingCarriesTheContextItsClientNeeds) {
    // Two clients share the tick's encodings (EncodeCache). At tick 6 both hold tick 4 as their
    // baseline and code against no context, with the same bytes: one's baseline was full (the
    // header says "the baseline's own baseline", none), the other's a delta whose own baseline a
    // short history no longer holds (the header must say none outright). Sharing the first
    // client's header with the second would make its decoder use tick 2 as the context.
    const Clip walk = builtin_clip("walk");
    const SkeletonPrecision prec = plan_precision(walk.skeleton, 1.0f);
    const PrecisionLookup lookup = [&](uint16_t s) { return s == 0 ? &prec : nullptr; };
    const auto skeleton_of = [](uint16_t id) { return id == 3 ? 0 : -1; };
    SnapshotHistory history(4);  // holds a baseline two ticks old, not its own two ticks older
    EncodeCache cache;
    SnapshotBuilder builders[2];
    SnapshotDecoder decoders[2] = {SnapshotDecoder(60.0f), SnapshotDecoder(60.0f)};
    const uint32_t joins[2] = {4, 2};  // the late joiner codes (and caches) first
    for (uint32_t tick = 2; tick <= 12; tick += 2) {
        const std::vector<CharacterSnapshot> now{{3, 0, quantize_character(sample_pose(walk, tick / 60.0), walk.skeleton, prec, 0)}};
        history.add(tick, now);
        for (int k = 0; k < 2; ++k) {
            if (tick < joins[k]) continue;
            for (const SnapshotPart& p : builders[k].build(tick, now, history, lookup, {}, &cache)) {
                std::vector<DecodedCharacter> out;
                EXPECT_EQ(decoders[k].decode(tick, p.data, skeleton_of, lookup, out), SnapshotError::None)
                    << "tick " << tick << ", the client joining at " << joins[k];
                builders[k].on_delivered(tick, p.units);
            }
        }
    }
}

TEST(Codec, EveryEntryHeaderReadsBackAsWritten) {
    int written = 0;
    for (const uint32_t kind : {0u, 1u, 2u})
        for (const uint32_t flags : {0u, uint32_t(kModePart), uint32_t(kModeAhead), uint32_t(kModePart | kModeAhead)})
            for (const uint32_t base_age : {1u, 15u, 16u, 300u})
                for (const uint32_t ctx : {0u, base_age, base_age + 1, ~0u})  // ~0: the baseline's own baseline
                    for (const bool last : {false, true}) {
                        if (kind == 0 && (base_age != 1 || ctx != 0)) continue;
                        EntryHeader h;
                        h.id = 300, h.mode = kind | flags, h.first = 96, h.count = 95, h.ahead_ticks = 12, h.plan = 7;
                        h.base_age = kind ? base_age : 0, h.hold = kind == 2 ? 3 : 0;
                        h.base_context = kind && ctx == ~0u;
                        h.ctx_age = kind && !h.base_context ? ctx : 0;
                        const std::vector<uint8_t> coded{1, 2, 3, 4, 5};
                        std::vector<uint8_t> bytes;
                        put_entry_header(bytes, h, coded.size(), last);
                        bytes.insert(bytes.end(), coded.begin(), coded.end());
                        if (!last) bytes.push_back(0xEE);  // another entry's first byte
                        EntryHeader r;
                        size_t pos = 0;
                        ASSERT_EQ(read_entry_header(bytes, pos, r), SnapshotError::None) << kind << " " << flags << " " << base_age;
                        const auto fields = [](const EntryHeader& e) {
                            return std::vector<uint32_t>{e.id, e.mode, e.mode & kModePart ? e.first : 0, e.mode & kModePart ? e.count : 0,
                                                         e.base_age, e.ctx_age, e.hold, e.mode & kModeAhead ? e.ahead_ticks : 0,
                                                         e.mode & kModeAhead ? e.plan : 0};
                        };
                        EXPECT_EQ(fields(r), fields(h)) << kind << " " << flags << " " << base_age << " " << ctx << " " << last;
                        EXPECT_EQ(r.last, last);
                        EXPECT_EQ(r.base_context, h.base_context);
                        EXPECT_EQ(std::vector<uint8_t>(r.bytes.begin(), r.bytes.end()), coded);
                        EXPECT_EQ(pos, bytes.size() - (last ? 0 : 1));
                        ++written;
                    }
    EXPECT_EQ(written, 4 * 2 + 2 * 4 * 4 * 4 * 2);
}

TEST(Codec, ABaselineAgeWhoseContextCouldOutliveTheReceiversHistoryIsRefused) {
    // A delta's context is as old again as its baseline may be: both must lie within kHistoryTicks.
    for (const uint32_t age : {0u, 1u, 127u, 128u, 1000u}) {
        BuilderConfig bc;
        bc.max_baseline_age_ticks = age;
        if (age >= 1 && 2 * age < kHistoryTicks) {
            EXPECT_NO_THROW(SnapshotBuilder{bc}) << age;
            continue;
        }
        try {
            SnapshotBuilder b(bc);
            ADD_FAILURE() << "max_baseline_age_ticks " << age << " accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidConfig);
            EXPECT_NE(std::string(e.what()).find("max_baseline_age_ticks"), std::string::npos) << e.what();
        }
    }
}

TEST(Codec, EachShareOfTheBaselinesAngularVelocityIsChosenWhereItPredictsAndDecodesExactly) {
    // A delta predicts angular velocities as all, 3/4, 3/8 or none of the baseline's, the encoder
    // choosing per payload. Current states whose angular velocities are exactly one share of the
    // baseline's: each decodes to the encoder's state, and each costs about what the share that
    // predicts it exactly costs (an encoder that kept one share would pay for the residuals).
    Rng rng(41);
    const Skeleton s = random_skeleton(24, rng);
    const SkeletonPrecision prec = plan_precision(s, 1.0f);
    const QCharacter base = quantize_character(random_pose(24, rng), s, prec, 3);
    QCharacter baseline = base;
    for (QJoint& q : baseline.joints)
        for (int32_t& a : q.ang) a = (rng.uniform(0.0f, 1.0f) < 0.5f ? -1 : 1) * int32_t(rng.uniform(16.0f, 60.0f));
    const CharacterBaseline cb{&baseline, 6 / 60.0};
    const int32_t eighths[4] = {8, 6, 3, 0};
    size_t bytes[4] = {};
    for (int level = 0; level < 4; ++level) {
        QCharacter cur = baseline;
        for (QJoint& q : cur.joints)
            for (int32_t& a : q.ang) {
                const int32_t v = a * eighths[level];
                a = v >= 0 ? (v + 4) / 8 : -((-v + 4) / 8);
            }
        std::vector<uint8_t> payload;
        QCharacter coded, out;
        encode_character(payload, cur, &cb, prec, all_joints(prec), nullptr, &coded);
        ASSERT_TRUE(decode_character(payload, out, &cb, prec, all_joints(prec))) << "share " << eighths[level] << "/8";
        EXPECT_EQ(out, coded);
        for (size_t j = 0; j < out.joints.size(); ++j)
            EXPECT_TRUE(std::equal(std::begin(out.joints[j].ang), std::end(out.joints[j].ang), std::begin(cur.joints[j].ang))) << "joint " << j;
        bytes[level] = payload.size();
    }
    for (int level = 1; level < 4; ++level)
        EXPECT_LE(bytes[level], bytes[0] + 8) << "share " << eighths[level] << "/8 costs " << bytes[level] << " bytes, all of it " << bytes[0];
}
