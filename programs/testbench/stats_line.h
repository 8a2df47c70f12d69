#pragma once
// kinesync-server's periodic stats line: one line whose length does not grow with the number of
// clients (counts, totals, and min/mean/max over the clients), plus one detail line per client for
// the debug log. Header-only; used by programs/server/main.cpp.

#include <algorithm>
#include <array>
#include <cstdint>
#include <spdlog/fmt/fmt.h>
#include <string>
#include <string_view>
#include <vector>

#include "server/src/net/server.h"

namespace ks {

// The figures of one stats line other than the per-client ones.
struct ServerStatsFigures {
    uint64_t tick = 0;
    size_t characters = 0;
    double tick_p50_us = 0, tick_p99_us = 0;
    uint64_t missed_ticks = 0, malformed = 0, refused = 0;
    // Malformed datagrams by net::DecodeError (net::ServerStats::malformed_by_reason).
    std::array<uint64_t, size_t(net::DecodeError::Count)> malformed_by_reason{};
    // Dropped by authentication and admission: tokens refused, unauthenticated, forged, replayed,
    // over a session's rate, at an admission limit (shown only when some were).
    uint64_t tokens_refused = 0, unauthenticated = 0, forged = 0, replayed = 0, rate_limited = 0, admission_limited = 0;
};

// "(too short 10, bad cookie 2)": the reasons with a count, most frequent first (ties in the
// enum's order); empty when there are none. At most 16 reasons, so the line stays bounded.
inline std::string malformed_reasons_text(const std::array<uint64_t, size_t(net::DecodeError::Count)>& by_reason) {
    std::vector<size_t> reasons;
    for (size_t r = 0; r < by_reason.size(); ++r)
        if (by_reason[r] && r != size_t(net::DecodeError::None)) reasons.push_back(r);
    if (reasons.empty()) return {};
    std::stable_sort(reasons.begin(), reasons.end(), [&](size_t a, size_t b) { return by_reason[a] > by_reason[b]; });
    std::string out = "(";
    for (size_t i = 0; i < reasons.size(); ++i)
        out += fmt::format("{}{} {}", i ? ", " : "", net::decode_error_name(net::DecodeError(reasons[i])), by_reason[reasons[i]]);
    return out + ")";
}

// "WHEN: tick T | clients N | characters C | tick time p50 X us p99 Y us | missed ticks M |
// malformed A (REASON a1, REASON a2) | refused B [| dropped: tokens t, unauthenticated u, forged f,
// replayed r, over rate o, admission limits a] | out TOTAL kB/s, per client min/mean/max a/b/c kB/s | rtt min/mean/max
// d/e/f ms" (the last two parts only when a client is connected). Bytes are wire bytes, as the
// budget counts them (UDP payload + 28 bytes of IPv4/UDP headers); rtt is measured as the clients
// measure theirs (net::ClientReport).
inline std::string stats_summary_line(std::string_view when, const ServerStatsFigures& f,
                                      const std::vector<net::ClientReport>& clients) {
    const std::string reasons = f.malformed ? malformed_reasons_text(f.malformed_by_reason) : std::string();
    std::string line = fmt::format("{}: tick {} | clients {} | characters {} | tick time p50 {:.0f} us p99 {:.0f} us | "
                                   "missed ticks {} | malformed {}{} | refused {}",
                                   when, f.tick, clients.size(), f.characters, f.tick_p50_us, f.tick_p99_us, f.missed_ticks,
                                   f.malformed, reasons.empty() ? "" : " " + reasons, f.refused);
    if (f.tokens_refused || f.unauthenticated || f.forged || f.replayed || f.rate_limited || f.admission_limited)
        line += fmt::format(" | dropped: tokens {}, unauthenticated {}, forged {}, replayed {}, over rate {}, admission limits {}",
                            f.tokens_refused, f.unauthenticated, f.forged, f.replayed, f.rate_limited, f.admission_limited);
    if (clients.empty()) return line;
    double bps_min = clients[0].bytes_per_s, bps_max = bps_min, bps_sum = 0;
    double rtt_min = clients[0].rtt_ms, rtt_max = rtt_min, rtt_sum = 0;
    for (const net::ClientReport& c : clients) {
        bps_min = std::min(bps_min, c.bytes_per_s);
        bps_max = std::max(bps_max, c.bytes_per_s);
        bps_sum += c.bytes_per_s;
        rtt_min = std::min(rtt_min, c.rtt_ms);
        rtt_max = std::max(rtt_max, c.rtt_ms);
        rtt_sum += c.rtt_ms;
    }
    const double n = double(clients.size());
    line += fmt::format(" | out {:.1f} kB/s, per client min/mean/max {:.1f}/{:.1f}/{:.1f} kB/s | rtt min/mean/max {:.1f}/{:.1f}/{:.1f} ms",
                        bps_sum / 1000.0, bps_min / 1000.0, bps_sum / n / 1000.0, bps_max / 1000.0, rtt_min, rtt_sum / n, rtt_max);
    return line;
}

// One client's figures, for the debug log: "client ID (ENDPOINT): X kB/s, rtt Y ms, N snapshots sent".
inline std::string client_stats_line(const net::ClientReport& c) {
    return fmt::format("client {} ({}): {:.1f} kB/s, rtt {:.1f} ms, {} snapshots sent", c.id, c.endpoint, c.bytes_per_s / 1000.0,
                       c.rtt_ms, c.snapshots_sent);
}

}  // namespace ks
