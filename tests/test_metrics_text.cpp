// kinesync-server's /metrics text: Prometheus exposition format 0.0.4 (HELP and TYPE before each
// family, kinesync_ names, label escaping, the figures where they belong).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "programs/server/ops/metrics_text.h"

using namespace ks;
using namespace ks::ops;

namespace {

MetricsSnapshot sample_snapshot() {
    MetricsSnapshot m;
    m.net.datagrams_in = 101;
    m.net.datagrams_out = 102;
    m.net.bytes_in = 103;
    m.net.bytes_out = 104;
    m.net.send_failures = 105;
    m.net.malformed = 12;
    m.net.malformed_by_reason[size_t(net::DecodeError::TooShort)] = 10;
    m.net.malformed_by_reason[size_t(net::DecodeError::VerifyFailed)] = 2;
    m.net.unexpected = 106;
    m.net.refused = 107;
    m.net.connects = 108;
    m.net.disconnects = 109;
    m.net.timeouts = 110;
    m.net.stalled = 111;
    m.net.tokens_refused = 112;
    m.net.unauthenticated = 113;
    m.net.forged = 114;
    m.net.replayed = 115;
    m.net.rate_limited = 116;
    m.net.resyncs = 117;
    m.net.echoes_refused = 19;
    m.net.unsent_by_reason[1] = 118;  // too large
    m.net.unsent_by_reason[3] = 119;  // starved
    m.net.entries_at_rest = 128;
    m.net.entries_held = 129;
    m.net.entries_late = 130;
    m.net.admission_limited[size_t(net::AdmissionLimit::ChallengeAll)] = 120;
    m.net.admission_limited[size_t(net::AdmissionLimit::SessionOpen)] = 121;
    m.net.tokens_opened = 122;
    m.net.used_tokens_full = 124;
    m.ticks = 123456;
    m.missed_ticks = 7;
    m.recording_frames_dropped = 125;
    m.recording_queue_bytes = 126;
    m.ticks_not_published = 127;
    m.clients = 3;
    m.characters = 8;
    m.tick_p50_s = 0.00031;
    m.tick_p99_s = 0.0012;
    m.healthy = true;
    m.ready = true;
    m.version = "0.1.0";
    return m;
}

// sample name (with labels) -> value text, from the text's sample lines.
std::map<std::string, std::string> samples(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const size_t sp = line.rfind(' ');
        out[line.substr(0, sp)] = line.substr(sp + 1);
    }
    return out;
}

}  // namespace

TEST(MetricsText, EveryFamilyHasHelpThenTypeBeforeItsSamples) {
    const std::string text = metrics_text(sample_snapshot());
    ASSERT_FALSE(text.empty());
    ASSERT_EQ(text.back(), '\n');
    std::istringstream in(text);
    const std::regex help(R"(# HELP (kinesync_[a-z0-9_]+) \S.*)"), type(R"(# TYPE (kinesync_[a-z0-9_]+) (counter|gauge))");
    const std::regex sample(R"((kinesync_[a-z0-9_]+)(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? (-?[0-9.e+-]+|NaN|[+-]Inf))");
    std::string family, family_type, pending_help;
    std::set<std::string> families;
    int sample_lines = 0;
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_match(line, m, help)) {
            pending_help = m[1];
            EXPECT_TRUE(families.insert(pending_help).second) << "family twice: " << line;
        } else if (std::regex_match(line, m, type)) {
            EXPECT_EQ(m[1], pending_help) << "TYPE not right after its HELP: " << line;
            family = m[1];
            family_type = m[2];
            if (family_type == "counter") {
                EXPECT_TRUE(family.ends_with("_total")) << family;
            }
        } else if (std::regex_match(line, m, sample)) {
            EXPECT_EQ(m[1], family) << "sample outside its family: " << line;
            ++sample_lines;
        } else {
            ADD_FAILURE() << "not a valid line: '" << line << "'";
        }
    }
    EXPECT_GE(families.size(), 20u);
    EXPECT_GE(sample_lines, 35);
    for (const char* f : {"kinesync_ticks_total", "kinesync_clients_connected", "kinesync_connects_total", "kinesync_disconnects_total",
                          "kinesync_timeouts_total", "kinesync_received_datagrams_total", "kinesync_sent_datagrams_total",
                          "kinesync_received_bytes_total", "kinesync_sent_bytes_total", "kinesync_malformed_datagrams_total",
                          "kinesync_malformed_datagrams_by_reason_total", "kinesync_refused_total", "kinesync_stalled_total",
                          "kinesync_missed_ticks_total", "kinesync_tick_time_p50_seconds", "kinesync_tick_time_p99_seconds",
                          "kinesync_send_failures_total"})
        EXPECT_TRUE(families.count(f)) << f;
}

TEST(MetricsText, FiguresLandInTheirSamples) {
    const auto s = samples(metrics_text(sample_snapshot()));
    const std::map<std::string, std::string> want = {
        {"kinesync_ticks_total", "123456"},
        {"kinesync_missed_ticks_total", "7"},
        {"kinesync_clients_connected", "3"},
        {"kinesync_characters", "8"},
        {"kinesync_received_datagrams_total", "101"},
        {"kinesync_sent_datagrams_total", "102"},
        {"kinesync_received_bytes_total", "103"},
        {"kinesync_sent_bytes_total", "104"},
        {"kinesync_send_failures_total", "105"},
        {"kinesync_unexpected_datagrams_total", "106"},
        {"kinesync_refused_total", "107"},
        {"kinesync_connects_total", "108"},
        {"kinesync_disconnects_total", "109"},
        {"kinesync_timeouts_total", "110"},
        {"kinesync_stalled_total", "111"},
        {"kinesync_tokens_refused_total", "112"},
        {"kinesync_unauthenticated_total", "113"},
        {"kinesync_forged_total", "114"},
        {"kinesync_replayed_total", "115"},
        {"kinesync_rate_limited_total", "116"},
        {"kinesync_resyncs_total", "117"},
        {"kinesync_echoes_refused_total", "19"},
        {"kinesync_unsent_total{reason=\"budget\"}", "0"},
        {"kinesync_unsent_total{reason=\"too_large\"}", "118"},
        {"kinesync_unsent_total{reason=\"no_precision\"}", "0"},
        {"kinesync_unsent_total{reason=\"starved\"}", "119"},
        {"kinesync_entries_at_rest_total", "128"},
        {"kinesync_entries_held_total", "129"},
        {"kinesync_entries_late_total", "130"},
        {"kinesync_admission_limited_total{limit=\"challenge_all\"}", "120"},
        {"kinesync_admission_limited_total{limit=\"handshake_token\"}", "0"},
        {"kinesync_admission_limited_total{limit=\"handshake_address\"}", "0"},
        {"kinesync_admission_limited_total{limit=\"handshake_prefix\"}", "0"},
        {"kinesync_admission_limited_total{limit=\"session_open\"}", "121"},
        {"kinesync_tokens_opened_total", "122"},
        {"kinesync_recording_ticks_dropped_total", "125"},
        {"kinesync_recording_queue_bytes", "126"},
        {"kinesync_ticks_not_published_total", "127"},
        {"kinesync_used_tokens_full_total", "124"},
        {"kinesync_malformed_datagrams_total", "12"},
        {"kinesync_malformed_datagrams_by_reason_total{reason=\"too short\"}", "10"},
        {"kinesync_malformed_datagrams_by_reason_total{reason=\"flatbuffer verification failed\"}", "2"},
        {"kinesync_malformed_datagrams_by_reason_total{reason=\"bad cookie\"}", "0"},
        {"kinesync_tick_time_p50_seconds", "0.00031"},
        {"kinesync_tick_time_p99_seconds", "0.0012"},
        {"kinesync_healthy", "1"},
        {"kinesync_ready", "1"},
        {"kinesync_draining", "0"},
        {"kinesync_build_info{version=\"0.1.0\"}", "1"},
    };
    for (const auto& [name, value] : want) {
        const auto it = s.find(name);
        ASSERT_NE(it, s.end()) << name;
        EXPECT_EQ(it->second, value) << name;
    }
    // Every reason but "none", each once: a stable set of series.
    size_t reasons = 0;
    for (const auto& [name, value] : s) reasons += name.starts_with("kinesync_malformed_datagrams_by_reason_total{");
    EXPECT_EQ(reasons, size_t(net::DecodeError::Count) - 1);
    EXPECT_EQ(s.count("kinesync_malformed_datagrams_by_reason_total{reason=\"none\"}"), 0u);
}

TEST(MetricsText, DrainingFlipsTheGauges) {
    MetricsSnapshot m = sample_snapshot();
    m.ready = m.healthy = false;
    m.draining = true;
    const auto s = samples(metrics_text(m));
    EXPECT_EQ(s.at("kinesync_ready"), "0");
    EXPECT_EQ(s.at("kinesync_healthy"), "0");
    EXPECT_EQ(s.at("kinesync_draining"), "1");
}

TEST(MetricsText, LabelValuesAndHelpAreEscaped) {
    EXPECT_EQ(prometheus_escape_label("plain"), "plain");
    EXPECT_EQ(prometheus_escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    EXPECT_EQ(prometheus_escape_help("x \"quoted\" \\ y\nz"), "x \"quoted\" \\\\ y\\nz");  // quotes stay in HELP
    MetricsSnapshot m = sample_snapshot();
    m.version = "1.0 \"beta\"\n\\";
    const std::string text = metrics_text(m);
    EXPECT_NE(text.find("kinesync_build_info{version=\"1.0 \\\"beta\\\"\\n\\\\\"} 1\n"), std::string::npos) << text;
    PrometheusText p;
    p.family("kinesync_x", "gauge", "two\nlines");
    p.sample("kinesync_x", {{"a", "1"}, {"b", "q\""}}, 2.5);
    EXPECT_EQ(p.text(), "# HELP kinesync_x two\\nlines\n# TYPE kinesync_x gauge\nkinesync_x{a=\"1\",b=\"q\\\"\"} 2.5\n");
}

TEST(MetricsText, ValuesAreWrittenAsTheFormatWants) {
    EXPECT_EQ(prometheus_value(0), "0");
    EXPECT_EQ(prometheus_value(42), "42");
    EXPECT_EQ(prometheus_value(0.25), "0.25");
    EXPECT_EQ(prometheus_value(1e-6), "1e-06");
    EXPECT_EQ(prometheus_value(std::nan("")), "NaN");
    EXPECT_EQ(prometheus_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(prometheus_value(-std::numeric_limits<double>::infinity()), "-Inf");
    // Counters past 2^53 keep every digit.
    MetricsSnapshot m;
    m.net.bytes_out = 18446744073709551615ull;
    EXPECT_EQ(samples(metrics_text(m)).at("kinesync_sent_bytes_total"), "18446744073709551615");
}
