#include "programs/testbench/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ks {

std::vector<ReconstructConfig> sweep_variants(const ReconstructConfig& base, const std::vector<Strategy>& strategies) {
    std::vector<ReconstructConfig> out;
    for (Strategy s : strategies) {
        ReconstructConfig d = base;
        d.strategy = s;
        out.push_back(d);  // the default first
        auto add = [&](ReconstructConfig c) {
            c.strategy = s;
            if (variant_label(c) != variant_label(d)) out.push_back(c);  // the default is already in
        };
        switch (s == Strategy::HermiteAhead ? Strategy::Snap : base_strategy(s)) {  // hermite+ahead has no delay to sweep
            case Strategy::Snap:
            case Strategy::Extrap:
            case Strategy::HermiteAhead:
                break;
            case Strategy::Interp:
            case Strategy::Hermite:
                for (double delay : {0.05, 0.075, 0.125, 0.15, 0.2}) {
                    ReconstructConfig c = d;
                    c.interp_delay_s = delay;
                    add(c);
                }
                break;
            case Strategy::DeadBlend:
                for (float blend : {0.02f, 0.05f, 0.1f, 0.2f})
                    for (float hl : {0.3f, 5.0f}) {
                        ReconstructConfig c = d;
                        c.deadblend_blend_s = blend;
                        c.deadblend_halflife_s = hl;
                        add(c);
                    }
                break;
            case Strategy::DeadBlendSod:
            case Strategy::DeadBlendSodAhead:  // its own f and budget over the same grid
                for (float f : {4.0f, 6.0f, 10.0f, 14.0f})
                    for (float accel : {80.0f, 160.0f, 240.0f, 480.0f, 960.0f, 1e5f})
                        for (float floor : {0.25f, 0.5f}) {
                            ReconstructConfig c = d;
                            (s == Strategy::DeadBlendSodAhead ? c.ahead_correction_f : c.correction_sod.f) = f;
                            (s == Strategy::DeadBlendSodAhead ? c.ahead_correction_accel_max : c.correction_accel_max) = accel;
                            c.correction_min_ratio = floor;
                            add(c);
                        }
                for (float zeta : {0.6f, 0.8f, 0.9f, 1.5f}) {
                    ReconstructConfig c = d;
                    c.correction_sod.zeta = zeta;
                    add(c);
                }
                for (float root : {50.0f, 100.0f, 200.0f, 400.0f, 1e5f}) {
                    ReconstructConfig c = d;
                    (s == Strategy::DeadBlendSodAhead ? c.ahead_root_accel_max : c.root_accel_max) = root;
                    add(c);
                }
                for (float root_f : {6.0f, 9.0f, 18.0f}) {
                    ReconstructConfig c = d;
                    c.root_correction_f = root_f;
                    add(c);
                }
                for (float hl : {0.05f, 0.2f, 0.3f, 1.0f, 1e6f}) {
                    ReconstructConfig c = d;
                    c.predict_halflife_s = hl;
                    add(c);
                }
                for (float hl : {0.3f, 0.5f, 3.0f, 1e9f}) {
                    ReconstructConfig c = d;
                    c.predict_root_halflife_s = hl;
                    add(c);
                }
                break;
        }
    }
    return out;
}

std::string variant_label(const ReconstructConfig& c) {
    char buf[160];
    switch (c.strategy == Strategy::HermiteAhead ? Strategy::Snap : base_strategy(c.strategy)) {
        case Strategy::Interp:
        case Strategy::Hermite:
            std::snprintf(buf, sizeof buf, "delay %.0f ms", c.interp_delay_s * 1000.0);
            break;
        case Strategy::DeadBlend:
            std::snprintf(buf, sizeof buf, "blend %.0f ms halflife %g s", double(c.deadblend_blend_s) * 1000.0,
                          double(c.deadblend_halflife_s));
            break;
        case Strategy::DeadBlendSod:
            std::snprintf(buf, sizeof buf, "f %g zeta %g accel %g root %g/%g floor %g predict %g/%g",
                          double(c.strategy == Strategy::DeadBlendSodAhead ? c.ahead_correction_f : c.correction_sod.f),
                          double(c.correction_sod.zeta),
                          double(c.strategy == Strategy::DeadBlendSodAhead ? c.ahead_correction_accel_max : c.correction_accel_max),
                          double(c.root_correction_f),
                          double(c.strategy == Strategy::DeadBlendSodAhead ? c.ahead_root_accel_max : c.root_accel_max),
                          double(c.correction_min_ratio),
                          double(c.predict_halflife_s), double(c.predict_root_halflife_s));
            break;
        default:
            buf[0] = '\0';
    }
    return buf;
}

}  // namespace ks
