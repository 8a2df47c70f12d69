#include "programs/server/ops/metrics_text.h"

#include <cmath>
#include <spdlog/fmt/fmt.h>

namespace ks::ops {

std::string prometheus_escape_label(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string prometheus_escape_help(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string prometheus_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", v);
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, prometheus_escape_help(help), name, type);
}

void PrometheusText::labels_and_value(Labels labels, const std::string& value) {
    if (labels.size()) {
        text_ += '{';
        bool first = true;
        for (const auto& [k, v] : labels) {
            text_ += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, prometheus_escape_label(v));
            first = false;
        }
        text_ += '}';
    }
    text_ += ' ';
    text_ += value;
    text_ += '\n';
}

void PrometheusText::sample(std::string_view name, Labels labels, double value) {
    text_ += name;
    labels_and_value(labels, prometheus_value(value));
}

void PrometheusText::sample(std::string_view name, Labels labels, uint64_t value) {
    text_ += name;
    labels_and_value(labels, std::to_string(value));
}

void PrometheusText::counter(std::string_view name, std::string_view help, uint64_t value) {
    family(name, "counter", help);
    sample(name, {}, value);
}

void PrometheusText::gauge(std::string_view name, std::string_view help, double value) {
    family(name, "gauge", help);
    sample(name, {}, value);
}

std::string metrics_text(const MetricsSnapshot& m) {
    PrometheusText p;
    const net::ServerStats& n = m.net;
    p.family("kinesync_build_info", "gauge", "Always 1; the version as a label.");
    p.sample("kinesync_build_info", {{"version", m.version}}, uint64_t(1));
    p.gauge("kinesync_healthy", "1 while the tick loop runs and keeps up (what /healthz says).", m.healthy ? 1 : 0);
    p.gauge("kinesync_ready", "1 while listening and not draining (what /readyz says).", m.ready ? 1 : 0);
    p.gauge("kinesync_draining", "1 once a SIGTERM/SIGINT (or --duration) started the shutdown.", m.draining ? 1 : 0);
    p.counter("kinesync_ticks_total", "Ticks published to clients and the recording.", m.ticks);
    p.counter("kinesync_missed_ticks_total", "Ticks that started more than one tick period late.", m.missed_ticks);
    p.gauge("kinesync_tick_time_p50_seconds", "Median time spent per tick (quantize, snapshots, recording) over the last stats interval.",
            m.tick_p50_s);
    p.gauge("kinesync_tick_time_p99_seconds", "99th percentile of the time spent per tick over the last stats interval.", m.tick_p99_s);
    p.counter("kinesync_recording_ticks_dropped_total",
              "Ticks left out of the recording because its writer fell behind (a slow or blocked disk) or failed.",
              m.recording_frames_dropped);
    p.counter("kinesync_ticks_not_published_total",
              "Ticks not sent nor recorded because the network thread was too far behind (an overloaded machine).",
              m.ticks_not_published);
    p.gauge("kinesync_recording_queue_bytes", "Bytes of ticks waiting for the recording's writer.", double(m.recording_queue_bytes));
    p.gauge("kinesync_clients_connected", "Clients connected now.", double(m.clients));
    p.gauge("kinesync_characters", "Characters streamed now.", double(m.characters));
    p.counter("kinesync_connects_total", "Clients accepted.", n.connects);
    p.counter("kinesync_disconnects_total", "Clients that said goodbye.", n.disconnects);
    p.counter("kinesync_timeouts_total", "Clients dropped for silence.", n.timeouts);
    p.counter("kinesync_stalled_total", "Clients dropped for not acknowledging reliable messages.", n.stalled);
    p.counter("kinesync_refused_total", "Connection attempts refused (bad cookie, server full, too many from one address).", n.refused);
    p.counter("kinesync_tokens_refused_total", "Connect tokens refused (missing, expired, for another server, invalid or already used).",
              n.tokens_refused);
    p.counter("kinesync_unauthenticated_total", "Clear datagrams other than the handshake while connect tokens are required.",
              n.unauthenticated);
    p.counter("kinesync_forged_total", "Sealed datagrams that did not authenticate under their session's key.", n.forged);
    p.counter("kinesync_replayed_total", "Sealed datagrams seen before or older than the replay window.", n.replayed);
    p.counter("kinesync_rate_limited_total", "Session datagrams over the session's rate.", n.rate_limited);
    p.family("kinesync_admission_limited_total", "counter", "Handshake datagrams dropped at an admission limit, by limit.");
    for (size_t l = 0; l < n.admission_limited.size(); ++l)
        p.sample("kinesync_admission_limited_total", {{"limit", net::admission_limit_name(l)}}, n.admission_limited[l]);
    p.counter("kinesync_tokens_opened_total", "Connect tokens decrypted (only for handshakes whose cookie proved the address).",
              n.tokens_opened);
    p.counter("kinesync_used_tokens_full_total", "Good connect tokens refused because the table of used tokens was full.",
              n.used_tokens_full);
    p.counter("kinesync_received_datagrams_total", "UDP datagrams received.", n.datagrams_in);
    p.counter("kinesync_sent_datagrams_total", "UDP datagrams sent.", n.datagrams_out);
    p.counter("kinesync_received_bytes_total", "UDP payload bytes received.", n.bytes_in);
    p.counter("kinesync_sent_bytes_total", "UDP payload bytes sent.", n.bytes_out);
    p.counter("kinesync_send_failures_total", "Datagrams the socket would not take (buffer full): dropped.", n.send_failures);
    p.counter("kinesync_unexpected_datagrams_total", "Well-formed datagrams not acceptable from their sender in its state.", n.unexpected);
    p.counter("kinesync_malformed_datagrams_total", "Datagrams that failed to decode, all reasons.", n.malformed);
    p.family("kinesync_malformed_datagrams_by_reason_total", "counter", "Datagrams that failed to decode, by reason.");
    for (size_t r = 0; r < n.malformed_by_reason.size(); ++r)
        if (r != size_t(net::DecodeError::None))
            p.sample("kinesync_malformed_datagrams_by_reason_total", {{"reason", net::decode_error_name(net::DecodeError(r))}},
                     n.malformed_by_reason[r]);
    p.counter("kinesync_sessions_in_use_total", "Handshakes refused because a live session holds that address or player.",
              n.sessions_in_use);
    p.counter("kinesync_resyncs_total", "Full updates of one character (or part) that clients asked for after refusing an entry.",
              n.resyncs);
    p.counter("kinesync_skeletons_by_reference_total", "Skeletons sent to clients by hash because they held them already.",
              n.skeletons_by_reference);
    p.counter("kinesync_skeletons_in_full_total", "Skeleton definitions sent to clients in full.", n.skeletons_in_full);
    p.counter("kinesync_echoes_refused_total", "Ping echoes that gave no round trip (negative or over 10 s): forged or stale.",
              n.echoes_refused);
    p.family("kinesync_unsent_total", "counter",
             "Snapshot entries (characters, or parts of large ones) not sent, summed over clients, by reason.");
    for (size_t r = 0; r < n.unsent_by_reason.size(); ++r)
        p.sample("kinesync_unsent_total", {{"reason", net::unsent_reason_name(r)}}, n.unsent_by_reason[r]);
    p.counter("kinesync_entries_at_rest_total", "Snapshot entries not needed, summed over clients: every joint at rest as acknowledged.",
              n.entries_at_rest);
    p.counter("kinesync_entries_held_total",
              "Snapshot entries not needed, summed over clients: what the client holds predicts them (look-ahead curve).",
              n.entries_held);
    p.counter("kinesync_entries_late_total", "Look-ahead entries sent after their tick in place of a newer one, summed over clients.",
              n.entries_late);
    p.family("kinesync_rate_changes_total", "counter",
             "Changes of the clients' send rates, summed over clients, by cause: lowered for queueing delay or loss, fallen "
             "for a silent path, restored after one.");
    const std::pair<const char*, uint64_t> causes[] = {
        {"delay", n.rate_lowered_delay}, {"loss", n.rate_lowered_loss}, {"silence", n.rate_silences}, {"recovered", n.rate_recovered}};
    for (const auto& [cause, count] : causes) p.sample("kinesync_rate_changes_total", {{"cause", cause}}, count);
    if (!m.client_reports.empty()) {
        p.family("kinesync_client_rate_bps", "gauge",
                 "The rate each client is sent at now (wire bits/s, between the floor and the budget) and its last change's cause.");
        for (const net::ClientReport& c : m.client_reports)
            p.sample("kinesync_client_rate_bps", {{"client", std::to_string(c.id)}, {"last_change", c.rate_change}}, c.rate_bps);
    }
    return p.text();
}

}  // namespace ks::ops
