// kinesync-client: N test clients ("bots") in one process against a server, each reconstructing
// with a strategy, optionally through the network simulator; a stats line, a JSON report.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include "programs/testbench/bot.h"
#include "programs/testbench/cli_options.h"
#include "programs/testbench/cli_common.h"

using namespace ks;

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-client: test clients that connect to a kinesync server, decode its snapshots and reconstruct\n"
                 "the characters with a strategy, optionally through a simulated network (both directions)."};
    std::string server = "127.0.0.1:40000", strategy = "deadblend+sod", report, profile;
    int bots = 1;
    double duration = 0, stats_every = 5, connect_timeout = 10;
    uint64_t seed = 1;
    NetworkOptions net;
    ReconstructConfig rc;
    app.add_option("--server", server, "HOST:PORT of the server")->capture_default_str()->check(host_port_validator());
    app.add_option("--bots", bots, "independent clients in this process")->capture_default_str()->check(CLI::Range(1, 1000));
    app.add_option("--strategy", strategy, "snap, interp, hermite, extrap, deadblend, deadblend+sod")->capture_default_str()
        ->check(CLI::IsMember({"snap", "interp", "hermite", "extrap", "deadblend", "deadblend+sod"}));
    app.add_option("--duration", duration, "seconds to run (0: until SIGINT/SIGTERM)")->capture_default_str();
    app.add_option("--connect-timeout", connect_timeout,
                   "give up (exit 1) when no bot has connected after this many seconds (0: keep trying)")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--report", report, "write a JSON report here at the end");
    app.add_option("--profile", profile, "simulated network: lan, broadband, mobile, hostile (default: none)")
        ->check(CLI::IsMember({"lan", "broadband", "mobile", "hostile"}));
    add_network_options(app, net);
    app.add_option("--seed", seed, "seed of the network simulator")->capture_default_str();
    app.add_option("--interp-delay", rc.interp_delay_s, "interp/hermite display delay, s")->capture_default_str();
    app.add_option("--blend-time", rc.deadblend_blend_s, "deadblend cross-fade time, s")->capture_default_str();
    app.add_option("--halflife", rc.deadblend_halflife_s, "deadblend extrapolation velocity half-life, s")->capture_default_str();
    add_correction_options(app, rc);
    app.add_option("--stats-every", stats_every, "seconds between stats lines")->capture_default_str();
    std::vector<float> viewpoint;
    app.add_option("--viewpoint", viewpoint, "X Y Z (metres): where the bots watch from; the server sends the nearest first")
        ->expected(3);
    std::string token_file, key_file;
    app.add_option("--token", token_file, "a connect token file (kinesync-token issue) for a server that requires one (one bot)");
    app.add_option("--key-file", key_file,
                   "the servers' private key: mint a fresh token for every bot and connection, as a game's backend would (test bench)");
    cli::add_version_flag(app, "kinesync-client", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;

    BotConfig bc;
    if (viewpoint.size() == 3) bc.viewpoint = vec3{viewpoint[0], viewpoint[1], viewpoint[2]};
    const HostPort hp = parse_host_port(server);  // validated by the option's check
    bc.host = hp.host;
    bc.port = hp.port;
    strategy_from_name(strategy, rc.strategy);
    bc.reconstruct = rc;
    std::vector<uint8_t> token;
    try {
        if (!key_file.empty()) bc.token_key = net::read_key_file(key_file);
        if (!token_file.empty()) {
            if (bots != 1) throw std::runtime_error("--token opens one session: use --bots 1, or --key-file to mint tokens");
            std::ifstream in(token_file, std::ios::binary);
            if (!in) throw std::runtime_error(token_file + ": cannot read the token file");
            token.assign(std::istreambuf_iterator<char>(in), {});
            std::string why;
            if (!net::parse_connect_token(token, &why)) throw std::runtime_error(token_file + ": " + why);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-client: %s\n", e.what());
        return 2;
    }
    if (!profile.empty() || any_network_option(app)) {
        try {
            bc.profile = resolve_network(app, net, profile);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kinesync-client: %s\n", e.what());
            return 2;
        }
        std::printf("network: %s\n", describe(*bc.profile).c_str());
    }
    std::vector<std::unique_ptr<Bot>> all;
    try {
        for (int i = 0; i < bots; ++i) {
            BotConfig b = bc;
            b.seed = seed * 1000 + uint64_t(i);
            b.connect_token = token;
            all.push_back(std::make_unique<Bot>(b));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-client: cannot reach %s: %s\n", server.c_str(), e.what());
        return 1;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const auto t0 = std::chrono::steady_clock::now();
    auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    for (auto& b : all) b->start(now());
    double next_stats = stats_every;
    auto stats_line = [&](double t) {
        uint64_t received = 0, lost = 0;
        double bps = 0, rtt = 0;
        int connected = 0;
        for (auto& b : all) {
            const BotReport r = b->report(t);
            received += r.snapshots_received;
            lost += r.snapshots_lost;
            bps += r.bytes_per_s;
            rtt += r.rtt_ms;
            connected += b->state() == ConnectionState::Connected;
        }
        std::printf("[%6.1f s] bots %d connected %d | snapshots %llu received, %llu lost | %.1f kB/s per bot | rtt %.1f ms\n", t,
                    int(all.size()), connected, (unsigned long long)received, (unsigned long long)lost,
                    bps / double(all.size()) / 1000.0, rtt / double(all.size()));
        std::fflush(stdout);
    };
    // A client no server ever answers gives up instead of waiting forever; once any bot has
    // connected, losing the server later is the bots' to handle (they reconnect).
    bool ever_connected = false;
    auto no_server = [&](double waited) {
        const std::string why = all.empty() ? std::string() : all.front()->disconnect_reason();
        std::fprintf(stderr, "kinesync-client: no server answered at %s within %g s%s\n", server.c_str(), std::round(waited * 10.0) / 10.0,
                     why.empty() ? "" : (" (" + why + ")").c_str());
        return 1;
    };
    while (!g_stop && (duration <= 0 || now() < duration)) {
        const double t = now();
        for (auto& b : all) {
            b->poll(t);
            ever_connected = ever_connected || b->state() == ConnectionState::Connected;
        }
        if (!ever_connected && connect_timeout > 0 && t >= connect_timeout) return no_server(connect_timeout);
        if (t >= next_stats) {
            stats_line(t);
            next_stats += stats_every;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const double t = now();
    stats_line(t);
    if (!ever_connected && !g_stop) return no_server(t);  // --duration ended before --connect-timeout
    if (!report.empty()) {
        std::ofstream f(report);
        if (!f) {
            std::fprintf(stderr, "kinesync-client: %s: cannot write the report\n", report.c_str());
            return 1;
        }
        f << "{\n  \"strategy\": \"" << strategy << "\",\n  \"duration_s\": " << t << ",\n  \"clients\": [\n";
        for (size_t i = 0; i < all.size(); ++i) {
            const BotReport r = all[i]->report(t);
            char line[512];
            std::snprintf(line, sizeof line,
                          "    {\"snapshots_received\": %llu, \"snapshots_lost\": %llu, \"bytes_per_s\": %.1f, \"rtt_ms\": %.2f, "
                          "\"time_sync_err_ms\": %.2f, \"reconstruct_ns_per_character\": %.0f, \"reconnects\": %llu, "
                          "\"entries_refused\": %llu, \"resyncs_sent\": %llu, \"characters_shown\": %zu, \"joints_shown\": %zu, "
                          "\"state\": \"%s\"}%s\n",
                          (unsigned long long)r.snapshots_received, (unsigned long long)r.snapshots_lost, r.bytes_per_s, r.rtt_ms,
                          r.time_sync_err_ms, r.reconstruct_ns_per_character, (unsigned long long)r.reconnects,
                          (unsigned long long)r.entries_refused, (unsigned long long)r.resyncs_sent, r.characters_shown, r.joints_shown,
                          r.state.c_str(), i + 1 < all.size() ? "," : "");
            f << line;
        }
        f << "  ]\n}\n";
    }
    return 0;
}
