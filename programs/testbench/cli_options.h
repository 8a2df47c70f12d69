#pragma once
// Command-line options shared by kinesync-client and kinesync-replay (CLI11, header-only, so the
// client library itself does not depend on it).

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "client/src/reconstruct.h"
#include "common/src/netsim/netsim.h"

namespace ks {

// A UDP port given on the command line: a decimal number 1..65535, nothing else. Returns the
// reason it is not one ("" when it is).
inline std::string port_error(const std::string& text) {
    unsigned long v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
        return "port '" + text + "' is not a number (expected 1..65535)";
    if (ec == std::errc::result_out_of_range || v < 1 || v > 65535) return "port " + text + " is out of range 1..65535";
    return "";
}

struct HostPort {
    std::string host;
    uint16_t port = 0;
};

// "HOST:PORT" (the last colon separates them) with a non-empty host and a port 1..65535; throws
// std::invalid_argument with a one-line message naming the value otherwise.
inline HostPort parse_host_port(const std::string& text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0)
        throw std::invalid_argument("'" + text + "' is not HOST:PORT");
    const std::string port = text.substr(colon + 1);
    if (const std::string why = port_error(port); !why.empty()) throw std::invalid_argument(why + " in '" + text + "'");
    return {text.substr(0, colon), uint16_t(std::stoul(port))};
}

// CLI11 check for a HOST:PORT option (an error exits as any other bad option does).
inline CLI::Validator host_port_validator() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            try {
                parse_host_port(value);
                return "";
            } catch (const std::invalid_argument& e) {
                return e.what();
            }
        },
        "HOST:PORT");
}

// Every strategy's settings (kinesync/client/reconstruct_config.h), for the programs that
// reconstruct: kinesync-client and kinesync-replay.
inline void add_correction_options(CLI::App& app, ReconstructConfig& rc);
inline void add_reconstruct_options(CLI::App& app, ReconstructConfig& rc) {
    app.add_option("--interp-delay", rc.interp_delay_s, "interp/hermite display delay, s")->capture_default_str();
    app.add_option("--extrap-cap", rc.extrap_cap_s, "constant-velocity extrapolation limit, s")->capture_default_str();
    app.add_option("--blend-time", rc.deadblend_blend_s, "deadblend cross-fade time, s")->capture_default_str();
    app.add_option("--halflife", rc.deadblend_halflife_s, "deadblend extrapolation velocity half-life, s")->capture_default_str();
    add_correction_options(app, rc);
}

inline void add_correction_options(CLI::App& app, ReconstructConfig& rc) {
    app.add_option("--sod-f", rc.correction_sod.f, "deadblend+sod (dead blending with a second-order-dynamics correction): its frequency f, Hz")->capture_default_str()
        ->check(CLI::Range(0.1f, 100.0f));
    app.add_option("--sod-zeta", rc.correction_sod.zeta, "deadblend+sod: correction damping zeta")->capture_default_str()
        ->check(CLI::Range(0.05f, 10.0f));
    app.add_option("--correction-accel", rc.correction_accel_max,
                   "deadblend+sod: largest acceleration a correction may add, m/s^2")->capture_default_str()
        ->check(CLI::Range(0.1f, 1e6f));
    app.add_option("--ahead-sod-f", rc.ahead_correction_f, "deadblend+sod+ahead: correction frequency f, Hz")
        ->capture_default_str()->check(CLI::Range(0.1f, 100.0f));
    app.add_option("--ahead-correction-accel", rc.ahead_correction_accel_max,
                   "deadblend+sod+ahead: largest acceleration a correction may add, m/s^2")->capture_default_str()
        ->check(CLI::Range(0.1f, 1e6f));
    app.add_option("--ahead-root-accel", rc.ahead_root_accel_max,
                   "deadblend+sod+ahead: largest acceleration the root translation's correction may add, m/s^2")
        ->capture_default_str()->check(CLI::Range(0.1f, 1e6f));
    app.add_option("--correction-floor", rc.correction_min_ratio,
                   "deadblend+sod: the budget never slows a correction below this fraction of f")
        ->capture_default_str()->check(CLI::Range(0.01f, 1.0f));
    app.add_option("--root-f", rc.root_correction_f, "deadblend+sod: the root translation's correction frequency, Hz")
        ->capture_default_str()->check(CLI::Range(0.1f, 100.0f));
    app.add_option("--root-accel", rc.root_accel_max,
                   "deadblend+sod: largest acceleration the root translation's correction may add, m/s^2")
        ->capture_default_str()->check(CLI::Range(0.1f, 1e6f));
    app.add_option("--predict-root-halflife", rc.predict_root_halflife_s,
                   "deadblend+sod: velocity half-life of the root's prediction, s")->capture_default_str()
        ->check(CLI::Range(0.01f, 1e10f));
    app.add_option("--predict-halflife", rc.predict_halflife_s, "deadblend+sod: velocity half-life of the prediction, s")
        ->capture_default_str()->check(CLI::Range(0.01f, 1e6f));
}

// --latency --jitter --loss --burst --dup, each overriding one field of the chosen profile.
struct NetworkOptions {
    NetProfile custom;
    // The bottleneck of each direction: "link" server -> client, "uplink" client -> server.
    double link_kbps = 0, link_queue_ms = 0, uplink_kbps = 0, uplink_queue_ms = 0;
    size_t link_queue_bytes = 0, uplink_queue_bytes = 0;
    std::string link_trace, uplink_trace;
};

inline void add_network_options(CLI::App& app, NetworkOptions& o) {
    app.add_option("--latency", o.custom.latency_ms, "one-way delay, ms (overrides the profile's)");
    app.add_option("--jitter", o.custom.jitter_ms, "delay sd, ms");
    app.add_option("--loss", o.custom.loss, "loss rate 0..1");
    app.add_option("--burst", o.custom.burst_length, "mean burst length: losses come in Gilbert-Elliott bursts");
    app.add_option("--dup", o.custom.duplicate, "duplicate rate 0..1");
    app.add_option("--link-kbps", o.link_kbps, "server -> client bottleneck, kbit/s (0: none)")->check(CLI::NonNegativeNumber);
    app.add_option("--link-queue-ms", o.link_queue_ms, "its tail-drop queue, in ms of waiting (default 500 ms)")->check(CLI::PositiveNumber);
    app.add_option("--link-queue-bytes", o.link_queue_bytes, "or in bytes")->check(CLI::PositiveNumber);
    app.add_option("--link-trace", o.link_trace,
                   "server -> client capacity from a Mahimahi trace file (one delivery opportunity of 1,500 bytes per line, "
                   "its time in ms; repeats)")->check(CLI::ExistingFile);
    app.add_option("--uplink-kbps", o.uplink_kbps, "client -> server bottleneck, kbit/s (0: none)")->check(CLI::NonNegativeNumber);
    app.add_option("--uplink-queue-ms", o.uplink_queue_ms, "its queue, ms (default 500 ms)")->check(CLI::PositiveNumber);
    app.add_option("--uplink-queue-bytes", o.uplink_queue_bytes, "or in bytes")->check(CLI::PositiveNumber);
    app.add_option("--uplink-trace", o.uplink_trace, "client -> server capacity from a Mahimahi trace file")->check(CLI::ExistingFile);
}

inline bool any_network_option(const CLI::App& app) {
    for (const char* name : {"--latency", "--jitter", "--loss", "--burst", "--dup", "--link-kbps", "--link-queue-ms", "--link-queue-bytes",
                             "--link-trace", "--uplink-kbps", "--uplink-queue-ms", "--uplink-queue-bytes", "--uplink-trace"})
        if (app.count(name)) return true;
    return false;
}

// A bottleneck from its options (prefix "link" or "uplink"), on top of `p`'s; read_link_trace's
// errors name the file and line.
inline void apply_bottleneck(const CLI::App& app, const std::string& prefix, double kbps, double queue_ms, size_t queue_bytes,
                             const std::string& trace, NetProfile& p) {
    const bool given = app.count("--" + prefix + "-kbps") || app.count("--" + prefix + "-trace");
    if (app.count("--" + prefix + "-kbps")) p.bandwidth_kbps = kbps, p.trace.reset();
    if (app.count("--" + prefix + "-trace")) p.trace = std::make_shared<const LinkTrace>(read_link_trace(trace));
    if (given && p.queue_ms <= 0) p.queue_ms = 500;
    if (app.count("--" + prefix + "-queue-ms")) p.queue_ms = queue_ms;
    if (app.count("--" + prefix + "-queue-bytes")) p.queue_bytes = queue_bytes, p.queue_ms = 0;
}

// The client -> server direction: `down`'s profile, with the uplink's own bottleneck when given.
inline NetProfile resolve_uplink(const CLI::App& app, const NetworkOptions& o, const NetProfile& down, const NetProfile& base_up) {
    NetProfile p = down;
    p.bandwidth_kbps = base_up.bandwidth_kbps;
    p.queue_bytes = base_up.queue_bytes;
    p.queue_ms = base_up.queue_ms;
    p.trace = base_up.trace;
    apply_bottleneck(app, "uplink", o.uplink_kbps, o.uplink_queue_ms, o.uplink_queue_bytes, o.uplink_trace, p);
    validate(p);
    return p;
}

// The profile `base` (empty: a perfect network) with the options given one by one applied; named
// "custom" when any was given. Throws std::invalid_argument (validate) when the result is unusable.
// The --link-* options shape the server -> client direction only (resolve_uplink the other).
inline NetProfile resolve_network(const CLI::App& app, const NetworkOptions& o, const std::string& base) {
    NetProfile p = base.empty() ? NetProfile{} : net_profile(base);
    if (app.count("--latency")) p.latency_ms = o.custom.latency_ms;
    if (app.count("--jitter")) p.jitter_ms = o.custom.jitter_ms;
    if (app.count("--loss")) p.loss = o.custom.loss;
    if (app.count("--burst")) p.burst = true, p.burst_length = o.custom.burst_length;
    if (app.count("--dup")) p.duplicate = o.custom.duplicate;
    apply_bottleneck(app, "link", o.link_kbps, o.link_queue_ms, o.link_queue_bytes, o.link_trace, p);
    const bool shaped_only = !app.count("--latency") && !app.count("--jitter") && !app.count("--loss") && !app.count("--burst") &&
                             !app.count("--dup");
    if (any_network_option(app)) p.name = shaped_only && !base.empty() ? base + "+bottleneck" : "custom";
    else if (base.empty()) p.name = "none";
    validate(p);
    return p;
}

}  // namespace ks
