#pragma once
// kinesync-server's metrics in the Prometheus text exposition format 0.0.4 (what GET /metrics
// serves): "# HELP" and "# TYPE" before each family, names prefixed kinesync_, counters ending in
// _total, times in seconds. A pure function of a snapshot of the figures, so it is testable alone.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "server/src/net/server.h"

namespace ks::ops {

// The Content-Type of the format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

struct MetricsSnapshot {
    net::ServerStats net;        // counters of the network side (malformed_by_reason included)
    uint64_t ticks = 0;          // ticks published to clients (and the recording)
    uint64_t missed_ticks = 0;   // ticks that started more than a tick late
    uint64_t recording_frames_dropped = 0;  // ticks the recording's writer could not keep up with
    size_t recording_queue_bytes = 0;       // waiting for the recording's writer now
    uint64_t ticks_not_published = 0;       // not handed to the network thread (it was too far behind)
    size_t clients = 0, characters = 0;
    double tick_p50_s = 0, tick_p99_s = 0;  // time spent per tick, over the last stats interval
    bool healthy = false, ready = false, draining = false;
    std::string version;         // kinesync_build_info{version="..."}
    std::vector<net::ClientReport> client_reports;  // per-client gauges (the rate each is sent at)
};

std::string metrics_text(const MetricsSnapshot& m);

// A label value with \ " and newline escaped (\\ \" \n), as the format wants.
std::string prometheus_escape_label(std::string_view value);
// A HELP text with \ and newline escaped.
std::string prometheus_escape_help(std::string_view text);
// A sample value: integers as they are, others in their shortest form; NaN, +Inf, -Inf.
std::string prometheus_value(double v);

// Writes families one after the other: family() then that family's samples.
class PrometheusText {
public:
    using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;
    void family(std::string_view name, std::string_view type, std::string_view help);
    void sample(std::string_view name, Labels labels, double value);
    void sample(std::string_view name, Labels labels, uint64_t value);
    void counter(std::string_view name, std::string_view help, uint64_t value);
    void gauge(std::string_view name, std::string_view help, double value);
    const std::string& text() const { return text_; }

private:
    void labels_and_value(Labels labels, const std::string& value);
    std::string text_;
};

}  // namespace ks::ops
