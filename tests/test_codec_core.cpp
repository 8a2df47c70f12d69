// The snapshot codec's own parts, which both ends use: the range coder, quantization bounds, and a
// character's full and delta coding round trip (tests/test_codec.cpp has the server's builder,
// packing and the figures). Built into the client-side tests (tests/client_side) too.
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

#include <tuple>

#include <random>

#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/offline/builtin_motion.h>
#include "common/src/codec/quantize.h"
#include "common/src/codec/range_coder.h"
#include "common/src/codec/snapshot_codec.h"
#include "tests/support/fd.h"
#include "tests/support/sample_pose.h"
#include "tests/support/synthetic.h"

using namespace ks;
using namespace ks::test;

TEST(RangeCoder, RoundTripsBitsLaplaceAndExpGolomb) {
    std::mt19937 rng(1);
    std::vector<int> bits;
    std::vector<uint32_t> probs;
    std::vector<int32_t> values;
    std::vector<float> sigmas;
    std::vector<uint8_t> out;
    {
        RangeEncoder enc(out);
        for (int i = 0; i < 20000; ++i) {
            const uint32_t p = 1 + rng() % (kProbOne - 1);
            const int b = int(rng() % kProbOne >= p);
            probs.push_back(p);
            bits.push_back(b);
            enc.encode_bit(p, b);
            const float sigma = std::exp(std::uniform_real_distribution<float>(-3, 8)(rng));
            const int32_t v = int32_t(std::lround(std::normal_distribution<float>(0, sigma)(rng)));
            sigmas.push_back(sigma);
            values.push_back(v);
            encode_laplace(enc, v, laplace_model(sigma));
            encode_exp_golomb(enc, uint32_t(i * 7919), i % 5);
        }
        enc.finish();
    }
    RangeDecoder dec(out);
    for (size_t i = 0; i < bits.size(); ++i) {
        ASSERT_EQ(dec.decode_bit(probs[i]), bits[i]) << i;
        ASSERT_EQ(decode_laplace(dec, laplace_model(sigmas[i])), values[i]) << i;
        ASSERT_EQ(decode_exp_golomb(dec, int(i % 5)), uint32_t(i * 7919)) << i;
    }
    EXPECT_LE(dec.overrun(), kMaxImpliedBytes);
    // Skewed bits cost far less than a bit each.
    std::vector<uint8_t> skew;
    RangeEncoder e2(skew);
    for (int i = 0; i < 8000; ++i) e2.encode_bit(4000, 0);
    e2.finish();
    EXPECT_LT(skew.size(), 60u);
}


// Every stream, however it ends, decodes from its bytes with at most kMaxImpliedBytes zeros
// substituted past the end (the decoder's check of a complete payload). Short streams of skewed
// bits end in every way the flush can meet, among them (about once in 100,000 streams) a carry
// through two pending 0xFF bytes that makes them zeros: trimmed with the flush's own zeros, they
// once left 6 implied bytes, and the decoder refused the payload.
TEST(RangeCoder, EveryStreamEndsWithinTheImpliedBytesTheDecoderAllows) {
    std::mt19937 rng(5);
    size_t worst = 0;
    for (int s = 0; s < 600000; ++s) {
        const int n = 17 + int(rng() % 32);
        std::vector<int> bits(size_t(n), 0);
        std::vector<uint32_t> probs(size_t(n), 0);
        std::vector<uint8_t> out;
        RangeEncoder enc(out);
        for (int i = 0; i < n; ++i) {
            probs[size_t(i)] = 1 + rng() % (kProbOne - 1);
            if (i >= n - 16) probs[size_t(i)] = kProbOne / 2;  // ending as a payload does: its 16-bit check
            bits[size_t(i)] = int(rng() % kProbOne >= probs[size_t(i)]);
            enc.encode_bit(probs[size_t(i)], bits[size_t(i)]);
        }
        enc.finish();
        RangeDecoder dec(out);
        for (int i = 0; i < n; ++i) ASSERT_EQ(dec.decode_bit(probs[size_t(i)]), bits[size_t(i)]) << "stream " << s;
        const uint32_t p = probs.back();
        worst = std::max(worst, dec.overrun());
        ASSERT_LE(dec.overrun(), kMaxImpliedBytes) << "stream " << s << " of " << n << " bits at p0 " << p << ", " << out.size() << " bytes";
    }
    EXPECT_EQ(worst, kMaxImpliedBytes) << "the streams reach the limit";
}

// Probabilities at or past the ends (0, kProbOne and beyond) are coded as the nearest usable one
// on both ends: the encoder never stalls (a zero range would renormalise forever) and the bits
// round-trip.
TEST(RangeCoder, ProbabilitiesAtTheEndsNeitherStallNorDesynchronise) {
    const uint32_t probs[] = {0, kProbOne, kProbOne + 5, 1, kProbOne - 1};
    std::vector<uint8_t> out;
    std::vector<int> bits;
    {
        RangeEncoder enc(out);
        for (int i = 0; i < 200; ++i)
            for (uint32_t p : probs) {
                bits.push_back((i + int(p)) % 3 == 0);
                enc.encode_bit(p, bits.back());
            }
        enc.finish();
    }
    EXPECT_LT(out.size(), 4000u);
    RangeDecoder dec(out);
    size_t k = 0;
    for (int i = 0; i < 200; ++i)
        for (uint32_t p : probs) ASSERT_EQ(dec.decode_bit(p), bits[k++]) << i;
}

TEST(RangeCoder, ArbitraryBytesNeverMisbehave) {
    std::mt19937 rng(2);
    for (int i = 0; i < 2000; ++i) {
        std::vector<uint8_t> junk(rng() % 40);
        for (auto& b : junk) b = uint8_t(rng());
        RangeDecoder dec(junk);
        for (int k = 0; k < 200; ++k) {
            (void)decode_laplace(dec, laplace_model(float(k % 50) + 0.1f));
            (void)decode_exp_golomb(dec, k % 4);
        }
        EXPECT_GE(dec.overrun() + dec.consumed(), junk.size());
    }
}


TEST(Quantize, SmallestThreeBoundsAndHemisphereInvariance) {
    Rng rng(3);
    for (int bits : {6, 9, 12, 15}) {
        JointPrecision p{};
        p.rot_bits = bits;
        p.rot_step = std::sqrt(2.0f) / float((1u << bits) - 1u);
        float worst = 0;
        for (int i = 0; i < 5000; ++i) {
            const quat q = rng.rotation();
            QJoint a, b;
            a.largest = uint8_t(largest_component(q));
            rotation_indices(q, a.largest, p, a.rot);
            b.largest = uint8_t(largest_component(-q));
            rotation_indices(-q, b.largest, p, b.rot);
            ASSERT_EQ(a, b) << "q and -q must give the same code";
            const quat d = dequantize_rotation(a, p);
            worst = std::max(worst, length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(d, q)))));
        }
        // A component step c moves the rotation by at most 2 sqrt(3) c (see precision.cpp).
        EXPECT_LT(worst, 2.0f * std::sqrt(3.0f) * p.rot_step) << bits << " bits";
        record_figure(std::string("smallest-three max angle error (rad), ") + std::to_string(bits) + " bits", worst);
    }
}


TEST(Quantize, RoundHalfAwayRoundsEveryFloatHalfAwayFromZero) {
    // The quantizer's rounding replaces std::lround: half away from zero for every value it can see
    // (the halves to +-3000 and the floats next to them, random values over 32 octaves, where
    // floats stop having fractions, the clamp).
    std::vector<float> values = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -2.5f, 0.49999997f, -0.49999997f, 8388607.5f, -8388607.5f,
                                 8388608.0f, 16777217.0f, 1.999e9f, -1.999e9f, 2.0e9f, -2.0e9f, 3.0e9f, -3.0e9f};
    for (int k = -3000; k <= 3000; ++k) {
        const float h = float(k) + 0.5f;
        values.insert(values.end(), {h, std::nextafter(h, 0.0f), std::nextafter(h, 1e10f), std::nextafter(h, -1e10f)});
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const float scale = std::ldexp(1.0f, int(rng() % 32) - 2);
        values.push_back((float(rng()) / 4294967296.0f - 0.5f) * scale);
    }
    // The reference in double, where |c| + 0.5 is exact for every float that has a fraction (not
    // std::lround on the float: mingw-w64's gives 1 for 0.49999997, where the rule gives 0).
    auto reference = [](float v) {
        const double c = std::clamp(double(v), -2.0e9, 2.0e9);
        return int32_t(std::copysign(std::floor(std::fabs(c) + 0.5), c));
    };
    for (float v : values) ASSERT_EQ(round_half_away(v), reference(v)) << "value " << v;
    EXPECT_EQ(round_half_away(std::nanf("")), 0) << "a NaN quantizes to 0 on every platform";
    // Rounding half to even (what a cast after adding 0.5 or rint would give) would be caught.
    EXPECT_EQ(round_half_away(2.5f), 3);
    EXPECT_EQ(round_half_away(-2.5f), -3);
    EXPECT_EQ(round_half_away(0.49999997f), 0) << "0.49999997 + 0.5 rounds to 1 in float";
}

TEST(Quantize, ComponentRoundTripBoundsAtDefaultSettings) {
    const Clip c = builtin_clip("run");
    const SkeletonPrecision prec = plan_precision(c.skeleton, c.metres_per_unit);
    for (int f = 0; f < c.frames; f += 7) {
        const Pose p = sample_pose(c, f * c.frame_dt);
        const QCharacter q = quantize_character(p, c.skeleton, prec, 3);
        Pose d(c.joints());
        dequantize_character(d, q, c.skeleton, prec);
        EXPECT_EQ(q.epoch, 3);
        for (size_t j = 0; j < size_t(c.joints()); ++j) {
            const JointPrecision& jp = prec.joints[j];
            EXPECT_LT(length(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(d.rot[j], p.rot[j])))), 2.0f * std::sqrt(3.0f) * jp.rot_step);
            EXPECT_LE(length(d.ang[j] - p.ang[j]), 0.5f * std::sqrt(3.0f) * jp.ang_step + 1e-5f);
            EXPECT_LE(length(d.pos[j] - p.pos[j]), 0.5f * std::sqrt(3.0f) * jp.pos_step + 1e-5f);
            EXPECT_LE(length(d.vel[j] - p.vel[j]), 0.5f * std::sqrt(3.0f) * jp.vel_step + 1e-5f);
            EXPECT_EQ(d.scl[j].x, 1.0f);
        }
        EXPECT_FALSE(q.joints[5].moved) << "rest-offset positions are flags, not values";
    }
    // Root position to about a millimetre.
    EXPECT_NEAR(prec.joints[0].pos_step, 0.001f, 1e-6f);
}

// Quantizing into a state that held another character's (more joints, scaled, a look-ahead) leaves
// nothing of it: the server reuses its states' memory from one snapshot to the next.
TEST(Quantize, IntoAReusedStateEqualsAFreshOne) {
    const Clip run = builtin_clip("run");
    const SkeletonPrecision prec = plan_precision(run.skeleton, run.metres_per_unit);
    QCharacter reused;
    reused.joints.assign(size_t(run.joints()) + 9, QJoint{});
    for (QJoint& j : reused.joints) {
        j.largest = 3, j.moved = j.scaled = true;
        std::fill(std::begin(j.lscl), std::end(j.lscl), 77);
        std::fill(std::begin(j.svl), std::end(j.svl), -5);
        for (int32_t* field : {j.rot, j.ang, j.pos, j.vel}) std::fill(field, field + 3, 1234);
    }
    reused.ahead = true, reused.ahead_ticks = 9, reused.plan = 4;
    for (int f = 0; f < run.frames; f += 11) {
        const Pose p = sample_pose(run, f * run.frame_dt);
        quantize_character_into(reused, p, run.skeleton, prec, uint16_t(f));
        EXPECT_EQ(reused, quantize_character(p, run.skeleton, prec, uint16_t(f))) << "frame " << f;
    }
}


// States at the ends of the integer grids (what a hostile payload can decode to, and what the
// next delta then predicts from) code and decode without overflowing: velocities, angular
// velocities and scale rates near +-2^31 against a baseline and a context at the other end. (The
// sanitizer build is where an overflow would show; everywhere, the round trip must hold.)
TEST(Codec, StatesAtTheEndsOfTheGridCodeWithoutOverflow) {
    Rng rng(8);
    const Skeleton s = random_skeleton(4, rng);
    const SkeletonPrecision prec = plan_precision(s, 1.0f);
    QCharacter hi = quantize_character(random_pose(4, rng), s, prec, 1), lo = hi;
    for (size_t j = 0; j < 4; ++j) {
        for (int k = 0; k < 3; ++k) {
            hi.joints[j].vel[k] = hi.joints[j].ang[k] = hi.joints[j].svl[k] = INT32_MAX - 3;
            lo.joints[j].vel[k] = lo.joints[j].ang[k] = lo.joints[j].svl[k] = INT32_MIN + 3;
        }
        hi.joints[j].moved = lo.joints[j].moved = hi.joints[j].scaled = lo.joints[j].scaled = true;
    }
    for (const auto& [cur, base, ctx] : {std::tuple{&hi, &lo, &hi}, std::tuple{&lo, &hi, &lo}, std::tuple{&hi, &hi, &lo}}) {
        const CharacterBaseline cb{base, 0.1, ctx, 0.1};
        std::vector<uint8_t> buf;
        QCharacter coded;
        encode_character(buf, *cur, &cb, prec, all_joints(prec), nullptr, &coded);
        QCharacter out;
        ASSERT_TRUE(decode_character(buf, out, &cb, prec, all_joints(prec)));
        EXPECT_EQ(out, coded);
    }
}

TEST(Codec, FullAndDeltaRoundTripExactlyIncludingEpochsAndScales) {
    Rng rng(4);
    Skeleton s = random_skeleton(12, rng);
    const SkeletonPrecision prec = plan_precision(s, 1.0f);
    for (int trial = 0; trial < 200; ++trial) {
        Pose a = random_pose(12, rng), b = a;
        op_integrate(b, a, 0.05f);
        const QCharacter qa = quantize_character(a, s, prec, 1), qb = quantize_character(b, s, prec, 1);
        std::vector<uint8_t> buf;
        encode_character(buf, qa, nullptr, prec, all_joints(prec));
        QCharacter out;
        ASSERT_TRUE(decode_character(buf, out, nullptr, prec, all_joints(prec)));
        ASSERT_EQ(out, qa);
        CharacterBaseline cb{&qa, 0.05, trial % 2 ? &qa : nullptr, 0.05};
        buf.clear();
        encode_character(buf, qb, &cb, prec, all_joints(prec));
        ASSERT_TRUE(decode_character(buf, out, &cb, prec, all_joints(prec)));
        ASSERT_EQ(out, qb);
        // Flipping the baseline's quaternion signs changes nothing (codes are sign-normalised).
        Pose an = a;
        for (auto& r : an.rot) r = -r;
        EXPECT_EQ(quantize_character(an, s, prec, 1), qa);
    }
}

