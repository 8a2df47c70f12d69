#include "programs/testbench/view_meta.h"

#include <initializer_list>

#include "programs/testbench/sweep.h"
#include "offline/src/text.h"
#include "programs/testbench/metrics/report.h"

namespace ks {

namespace {

std::string num(double v) { return json_number(v); }
// f(0), f(1), ... f(n - 1) separated by `sep`.
template <class F>
std::string joined(size_t n, F f, const char* sep = ", ") {
    std::string o;
    for (size_t i = 0; i < n; ++i) {
        if (i) o += sep;
        o += f(i);
    }
    return o;
}
// (Appended piece by piece: "[" + std::string trips GCC 12's -Wrestrict.)
std::string bracketed(std::initializer_list<double> values) {
    std::string o = "[";
    for (double v : values) {
        if (o.size() > 1) o += ", ";
        o += num(v);
    }
    return o += "]";
}
std::string vec(vec3 v) { return bracketed({v.x, v.y, v.z}); }

std::string settings_json(const ReconstructConfig& c) {
    return "{\"interp_delay_s\": " + num(c.interp_delay_s) + ", \"extrap_cap_s\": " + num(c.extrap_cap_s) +
           ", \"extrap_decay_halflife_s\": " + num(c.extrap_decay_halflife_s) + ", \"deadblend_blend_s\": " +
           num(c.deadblend_blend_s) + ", \"deadblend_halflife_s\": " + num(c.deadblend_halflife_s) +
           ", \"correction_f_hz\": " + num(c.correction_sod.f) + ", \"correction_zeta\": " + num(c.correction_sod.zeta) +
           ", \"correction_accel_max\": " + num(c.correction_accel_max) + ", \"root_correction_f_hz\": " +
           num(c.root_correction_f) + ", \"root_accel_max\": " + num(c.root_accel_max) + ", \"predict_halflife_s\": " +
           num(c.predict_halflife_s) + "}";
}

}  // namespace

std::string view_meta_json(const RecordingScan& scan, const ReplayConfig& cfg, const ReplayResult& result, const ViewCapture& capture) {
    const RecordingHeader& h = scan.header;
    const NetProfile& p = cfg.profile;
    std::string o = "{\"format\": \"kinesync-view\", \"version\": 1";
    o += ",\n \"recording\": " + json_string(scan.path);
    o += ",\n \"profile\": {\"name\": " + json_string(p.name) + ", \"latency_ms\": " + num(p.latency_ms) + ", \"jitter_ms\": " +
         num(p.jitter_ms) + ", \"loss\": " + num(p.loss) + ", \"burst\": " + num(p.burst ? p.burst_length : 0.0) +
         ", \"duplicate\": " + num(p.duplicate) + "}";
    o += ",\n \"snapshot_hz\": " + num(cfg.snapshot_hz) + ", \"render_hz\": " + num(cfg.render_hz) +
         ", \"seed\": " + std::to_string(cfg.seed) + ", \"bandwidth_kbps\": " + num(cfg.bandwidth_bps / 1000.0);
    o += ",\n \"t0\": " + num(capture.t0()) + ", \"frames\": " + std::to_string(capture.frames());
    o += ",\n \"default_strategy\": " + json_string(strategy_name(ReconstructConfig{}.strategy));
    o += ",\n \"streams\": [{\"name\": \"truth\"}";
    for (const ReplayStrategyResult& s : result.strategies) {
        const FidelityResult& r = s.result;
        o += ",\n  {\"name\": " + json_string(strategy_name(s.strategy)) + ", \"label\": " + json_string(variant_label(s.config)) +
             ", \"display_delay_ms\": " + num(r.display_delay_ms) + ", \"settings\": " + settings_json(s.config) +
             ", \"metrics\": {\"present_err_cm_mean\": " + num(r.present_err_cm.mean) + ", \"present_err_cm_p99\": " +
             num(r.present_err_cm.p99) + ", \"accel_rms_ratio\": " + num(r.accel_rms_ratio) + ", \"pops\": " +
             std::to_string(r.pops) + "}}";
    }
    o += "]";
    o += ",\n \"characters\": [" + joined(h.characters.size(), [&](size_t i) {
        const auto& c = h.characters[i];
        return "{\"id\": " + std::to_string(c.id) + ", \"skeleton\": " + std::to_string(c.skeleton) + ", \"name\": " + json_string(c.name) + "}";
    }) + "]";
    o += ",\n \"skeletons\": [" + joined(h.skeletons.size(), [&](size_t s) {
        const Skeleton& sk = h.skeletons[s];
        return "{\"name\": " + json_string(s < h.skeleton_names.size() ? h.skeleton_names[s] : "") + ", \"parents\": [" +
               joined(sk.parents.size(), [&](size_t j) { return std::to_string(sk.parents[j]); }) + "], \"joint_names\": [" +
               joined(sk.names.size(), [&](size_t j) { return json_string(sk.names[j]); }) + "]}";
    }, ",\n  ") + "]";
    // Epoch changes by character index.
    o += ",\n \"epochs\": [" + joined(scan.epoch_changes.size(), [&](size_t i) {
        const auto& [id, mark] = scan.epoch_changes[i];
        size_t ci = 0;
        while (ci < h.characters.size() && h.characters[ci].id != id) ++ci;
        return "{\"t\": " + num(mark.time_s) + ", \"character\": " + std::to_string(ci) +
               ", \"kind\": " + (mark.kind == EpochKind::Teleport ? "\"teleport\"" : "\"reset\"") + "}";
    }) + "]";
    const auto pair = [](std::pair<double, double> p) { return bracketed({p.first, p.second}); };
    o += ",\n \"blackouts\": [" + joined(result.blackout_spans_s.size(), [&](size_t i) { return pair(result.blackout_spans_s[i]); }) + "]";
    o += ",\n \"pops\": {" + joined(result.strategies.size(), [&](size_t k) {
        const auto& pt = result.strategies[k].pop_times_s;
        return json_string(strategy_name(result.strategies[k].strategy)) + ": [" + joined(pt.size(), [&](size_t i) { return num(pt[i]); }) + "]";
    }) + "}";
    // The character (index) of each of those pops.
    o += ",\n \"pop_characters\": {" + joined(result.strategies.size(), [&](size_t k) {
        const auto& pc = result.strategies[k].pop_characters;
        return json_string(strategy_name(result.strategies[k].strategy)) + ": [" + joined(pc.size(), [&](size_t i) {
            size_t ci = 0;
            while (ci < h.characters.size() && h.characters[ci].id != pc[i]) ++ci;
            return std::to_string(ci);
        }) + "]";
    }) + "}";
    o += ",\n \"snapshots\": [" + joined(capture.snapshots().size(), [&](size_t i) { return pair(capture.snapshots()[i]); }) + "]";
    o += "\n}\n";
    return o;
}

std::string view_roots_json(const ViewCapture& capture) {
    std::string o = ",\n  \"view_roots\": [";
    const auto& all = capture.root_samples();
    o += joined(all.size(), [&](size_t i) {
        const ViewRootSample& s = all[i];
        return "\n    {\"frame\": " + std::to_string(s.frame) + ", \"t\": " + num(s.t) + ", \"character\": " + std::to_string(s.character) +
               ", \"roots\": {" + joined(s.roots.size(), [&](size_t k) { return json_string(s.roots[k].first) + ": " + vec(s.roots[k].second); }) +
               "}}";
    }, ",");
    o += all.empty() ? "]" : "\n  ]";
    return o;
}

}  // namespace ks
