// The accuracy-smoothness sweep grid (client/sweep.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "programs/testbench/sweep.h"

using namespace ks;

namespace {

// The fields a variant of each strategy sweeps (and its label shows).
bool same_swept_fields(const ReconstructConfig& a, const ReconstructConfig& b) {
    if (a.strategy != b.strategy) return false;
    switch (a.strategy) {
        case Strategy::Interp:
        case Strategy::Hermite:
            return a.interp_delay_s == b.interp_delay_s;
        case Strategy::DeadBlend:
            return a.deadblend_blend_s == b.deadblend_blend_s && a.deadblend_halflife_s == b.deadblend_halflife_s;
        case Strategy::DeadBlendSod:
            return a.correction_sod.f == b.correction_sod.f && a.correction_sod.zeta == b.correction_sod.zeta &&
                   a.correction_accel_max == b.correction_accel_max &&
                   a.correction_min_ratio == b.correction_min_ratio && a.predict_halflife_s == b.predict_halflife_s &&
                   a.root_correction_f == b.root_correction_f && a.root_accel_max == b.root_accel_max &&
                   a.predict_root_halflife_s == b.predict_root_halflife_s;
        case Strategy::DeadBlendSodAhead:
            return a.ahead_correction_f == b.ahead_correction_f && a.ahead_correction_accel_max == b.ahead_correction_accel_max &&
                   a.correction_sod.zeta == b.correction_sod.zeta && a.correction_min_ratio == b.correction_min_ratio &&
                   a.predict_halflife_s == b.predict_halflife_s && a.root_correction_f == b.root_correction_f &&
                   a.ahead_root_accel_max == b.ahead_root_accel_max && a.predict_root_halflife_s == b.predict_root_halflife_s;
        default:
            return true;
    }
}

std::vector<ReconstructConfig> of_strategy(const std::vector<ReconstructConfig>& all, Strategy s) {
    std::vector<ReconstructConfig> out;
    for (const ReconstructConfig& c : all)
        if (c.strategy == s) out.push_back(c);
    return out;
}

}  // namespace

TEST(Sweep, DefaultComesFirstForEachStrategyAndStrategiesStayGrouped) {
    ReconstructConfig base;
    base.interp_delay_s = 0.11;  // a non-grid default, to tell it from the grid's points
    base.correction_sod.f = 7.0f;
    const std::vector<ReconstructConfig> v = sweep_variants(base, all_strategies());
    size_t i = 0;
    for (Strategy s : all_strategies()) {
        ASSERT_LT(i, v.size());
        const ReconstructConfig& first = v[i];
        EXPECT_EQ(first.strategy, s);
        ReconstructConfig expect = base;
        expect.strategy = s;
        EXPECT_TRUE(same_swept_fields(first, expect)) << strategy_name(s);
        // Settings no variant sweeps are the base's everywhere.
        EXPECT_EQ(first.extrap_cap_s, base.extrap_cap_s);
        EXPECT_EQ(first.extrap_decay_halflife_s, base.extrap_decay_halflife_s);
        while (i < v.size() && v[i].strategy == s) {
            EXPECT_EQ(v[i].extrap_cap_s, base.extrap_cap_s);
            ++i;
        }
    }
    EXPECT_EQ(i, v.size()) << "every variant belongs to a requested strategy, grouped in order";
    // Only the requested strategies.
    const std::vector<ReconstructConfig> two = sweep_variants(base, {Strategy::Hermite, Strategy::Snap});
    ASSERT_FALSE(two.empty());
    EXPECT_EQ(two.front().strategy, Strategy::Hermite);
    EXPECT_EQ(two.back().strategy, Strategy::Snap);
    EXPECT_EQ(of_strategy(two, Strategy::Snap).size(), 1u) << "snap has nothing to sweep";
    EXPECT_EQ(of_strategy(v, Strategy::Extrap).size(), 1u) << "extrap has nothing to sweep";
    EXPECT_TRUE(sweep_variants(base, {}).empty());
}

TEST(Sweep, InterpDelaysSpan50To200Ms) {
    const std::vector<ReconstructConfig> v = sweep_variants(ReconstructConfig{}, {Strategy::Interp, Strategy::Hermite});
    for (Strategy s : {Strategy::Interp, Strategy::Hermite}) {
        const std::vector<ReconstructConfig> mine = of_strategy(v, s);
        ASSERT_GE(mine.size(), 4u);
        double lo = 1e9, hi = -1e9;
        std::set<double> delays;
        for (const ReconstructConfig& c : mine) {
            lo = std::min(lo, c.interp_delay_s);
            hi = std::max(hi, c.interp_delay_s);
            delays.insert(c.interp_delay_s);
            EXPECT_GE(c.interp_delay_s, 0.05 - 1e-12);
            EXPECT_LE(c.interp_delay_s, 0.2 + 1e-12);
        }
        EXPECT_DOUBLE_EQ(lo, 0.05) << strategy_name(s);
        EXPECT_DOUBLE_EQ(hi, 0.2) << strategy_name(s);
        EXPECT_EQ(delays.size(), mine.size()) << "no delay twice";
        EXPECT_DOUBLE_EQ(mine.front().interp_delay_s, ReconstructConfig{}.interp_delay_s) << "the default first";
    }
}

TEST(Sweep, DeadblendSodSweepsEachOfItsFields) {
    const ReconstructConfig base;
    const std::vector<ReconstructConfig> v = of_strategy(sweep_variants(base, {Strategy::DeadBlendSod}), Strategy::DeadBlendSod);
    ASSERT_GT(v.size(), 10u);
    ReconstructConfig d = base;
    d.strategy = Strategy::DeadBlendSod;
    EXPECT_TRUE(same_swept_fields(v.front(), d));
    // Each field the grid sweeps is actually varied by some variant.
    bool f = false, zeta = false, accel = false, ratio = false, predict = false, root_f = false, root_a = false;
    for (const ReconstructConfig& c : v) {
        root_f |= c.root_correction_f != base.root_correction_f;
        root_a |= c.root_accel_max != base.root_accel_max;
        predict |= c.predict_root_halflife_s != base.predict_root_halflife_s;
        f |= c.correction_sod.f != base.correction_sod.f;
        zeta |= c.correction_sod.zeta != base.correction_sod.zeta;
        accel |= c.correction_accel_max != base.correction_accel_max;
        ratio |= c.correction_min_ratio != base.correction_min_ratio;
        predict |= c.predict_halflife_s != base.predict_halflife_s;
    }
    EXPECT_TRUE(f && zeta && accel && ratio && predict && root_f && root_a);
}

// The look-ahead form sweeps its own frequency and budgets, never the velocity-only ones.
TEST(Sweep, DeadblendSodAheadSweepsItsOwnFields) {
    const ReconstructConfig base;
    const std::vector<ReconstructConfig> v =
        of_strategy(sweep_variants(base, {Strategy::DeadBlendSodAhead}), Strategy::DeadBlendSodAhead);
    ASSERT_GT(v.size(), 10u);
    bool f = false, accel = false, root_a = false;
    for (const ReconstructConfig& c : v) {
        f |= c.ahead_correction_f != base.ahead_correction_f;
        accel |= c.ahead_correction_accel_max != base.ahead_correction_accel_max;
        root_a |= c.ahead_root_accel_max != base.ahead_root_accel_max;
        EXPECT_EQ(c.correction_sod.f, base.correction_sod.f) << variant_label(c);
        EXPECT_EQ(c.correction_accel_max, base.correction_accel_max) << variant_label(c);
        EXPECT_EQ(c.root_accel_max, base.root_accel_max) << variant_label(c);
    }
    EXPECT_TRUE(f && accel && root_a);
}

// The grid contains the default's own values (f 6, blend 50 ms...): it must not list them twice.
TEST(Sweep, EveryVariantAfterTheDefaultDiffersFromIt) {
    const ReconstructConfig base;
    for (Strategy s : {Strategy::DeadBlendSod, Strategy::DeadBlendSodAhead, Strategy::DeadBlend, Strategy::Interp, Strategy::Hermite}) {
        const std::vector<ReconstructConfig> v = sweep_variants(base, {s});
        ASSERT_FALSE(v.empty());
        for (size_t i = 1; i < v.size(); ++i)
            EXPECT_FALSE(same_swept_fields(v[i], v.front())) << strategy_name(s) << " variant " << i << " ("
                                                             << variant_label(v[i]) << ") is the default again";
        // And no two variants are the same point.
        for (size_t i = 0; i < v.size(); ++i)
            for (size_t j = i + 1; j < v.size(); ++j)
                EXPECT_FALSE(same_swept_fields(v[i], v[j])) << strategy_name(s) << " variants " << i << " and " << j;
    }
}

TEST(Sweep, LabelsNameTheSweptSettings) {
    const std::vector<ReconstructConfig> v = sweep_variants(ReconstructConfig{}, all_strategies());
    for (const ReconstructConfig& c : v) {
        const std::string l = variant_label(c);
        if (c.strategy == Strategy::Snap || c.strategy == Strategy::Extrap) {
            EXPECT_TRUE(l.empty()) << strategy_name(c.strategy);
        } else {
            EXPECT_FALSE(l.empty()) << strategy_name(c.strategy);
        }
    }
    ReconstructConfig c;
    c.strategy = Strategy::Interp;
    c.interp_delay_s = 0.075;
    EXPECT_EQ(variant_label(c), "delay 75 ms");
    c.strategy = Strategy::Hermite;
    c.interp_delay_s = 0.2;
    EXPECT_EQ(variant_label(c), "delay 200 ms");
    c.strategy = Strategy::DeadBlend;
    c.deadblend_blend_s = 0.1f;
    c.deadblend_halflife_s = 0.3f;
    EXPECT_EQ(variant_label(c), "blend 100 ms halflife 0.3 s");
    c = ReconstructConfig{};
    c.strategy = Strategy::DeadBlendSod;
    EXPECT_EQ(variant_label(c), "f 10 zeta 1 accel 960 root 12/150 floor 0.25 predict 0.12/1");
    // Variants that differ in a swept field have different labels (within a strategy).
    for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = i + 1; j < v.size(); ++j)
            if (v[i].strategy == v[j].strategy && !same_swept_fields(v[i], v[j])) {
                EXPECT_NE(variant_label(v[i]), variant_label(v[j])) << strategy_name(v[i].strategy);
            }
}
