// kinesync-client: N test clients ("bots") in one process against a server, each reconstructing
// with a strategy, optionally through the network simulator; a stats line, a JSON report.
#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <spdlog/fmt/fmt.h>
#include <string>
#include <thread>

#include <kinesync/common/errors.h>

#include "common/src/net/secure_channel.h"
#include "programs/testbench/bot.h"
#include "programs/testbench/cli_common.h"
#include "programs/testbench/cli_options.h"

using namespace ks;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct ClientOptions {
    std::string server = "127.0.0.1:40000", strategy = "deadblend+sod", report, profile, token_file, key_file, skeleton_cache;
    int bots = 1;
    double duration = 0, stats_every = 5, connect_timeout = 10;
    uint64_t seed = 1;
    uint64_t player_id = 0;  // 0: a random one for this process
    NetworkOptions net;
    ReconstructConfig rc;
    std::vector<float> viewpoint;
};

void add_client_options(CLI::App& app, ClientOptions& o) {
    app.add_option("--server", o.server, "HOST:PORT of the server")->capture_default_str()->check(host_port_validator());
    app.add_option("--bots", o.bots, "independent clients in this process")->capture_default_str()->check(CLI::Range(1, 1000));
    app.add_option("--strategy", o.strategy,
                   "snap, interp, hermite, extrap, deadblend, deadblend+sod (sod: second-order dynamics, the correction's spring)")
        ->capture_default_str()
        ->check(CLI::IsMember({"snap", "interp", "hermite", "extrap", "deadblend", "deadblend+sod"}));
    app.add_option("--duration", o.duration, "seconds to run (0: until SIGINT/SIGTERM)")->capture_default_str();
    app.add_option("--connect-timeout", o.connect_timeout,
                   "give up (exit 1) when no bot has connected after this many seconds (0: keep trying)")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--report", o.report, "write a JSON report here at the end");
    app.add_option("--profile", o.profile,
                   "simulated network: lan, broadband, mobile, hostile, or one behind a bottleneck: broadband-128k, broadband-64k, "
                   "mobile-128k (default: none)")
        ->check(CLI::IsMember({"lan", "broadband", "mobile", "hostile", "broadband-128k", "broadband-64k", "mobile-128k"}));
    add_network_options(app, o.net);
    app.add_option("--seed", o.seed, "seed of the network simulator")->capture_default_str();
    add_reconstruct_options(app, o.rc);
    app.add_option("--stats-every", o.stats_every, "seconds between stats lines")->capture_default_str();
    app.add_option("--viewpoint", o.viewpoint, "X Y Z (metres): where the bots watch from; the server sends the nearest first")
        ->expected(3);
    app.add_option("--token", o.token_file, "a connect token file (kinesync-token issue) for a server that requires one (one bot)");
    app.add_option("--key-file", o.key_file,
                   "the servers' private key: mint a fresh token for every bot and connection, as a game's backend would (test bench)");
    app.add_option("--player-id", o.player_id,
                   "with --key-file: the first bot's player id (the next bots count on); default: random per process, so two "
                   "processes never share a player (a server holds one live session per player)")
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 62));
    app.add_option("--skeleton-cache", o.skeleton_cache,
                   "a directory where the bots keep the skeletons they receive and offer them to the server next time "
                   "(by hash: the server then sends references, and joining is quicker)");
}

std::vector<uint8_t> read_token(const ClientOptions& o) {
    if (o.bots != 1) throw std::runtime_error("--token opens one session: use --bots 1, or --key-file to mint tokens");
    std::ifstream in(o.token_file, std::ios::binary);
    if (!in) throw std::runtime_error(o.token_file + ": cannot read the token file");
    std::vector<uint8_t> token(std::istreambuf_iterator<char>(in), {});
    std::string why;
    if (!net::parse_connect_token(token, &why)) throw std::runtime_error(o.token_file + ": " + why);
    return token;
}

uint64_t random_player_id() {
    std::array<uint8_t, 8> b{};
    net::random_bytes(b);
    uint64_t v = 0;
    for (uint8_t x : b) v = (v << 8) | x;
    return 1 + (v >> 4);  // within 1..2^60, so the bots' ids count on without wrapping
}

// The bots' shared settings; an exit code (after saying why) when the options cannot make them.
std::optional<int> make_bot_config(ClientOptions& o, const CLI::App& app, BotConfig& bc, std::vector<uint8_t>& token) {
    if (o.viewpoint.size() == 3) bc.viewpoint = vec3{o.viewpoint[0], o.viewpoint[1], o.viewpoint[2]};
    const HostPort hp = parse_host_port(o.server);  // validated by the option's check
    bc.host = hp.host;
    bc.port = hp.port;
    strategy_from_name(o.strategy, o.rc.strategy);
    bc.reconstruct = o.rc;
    bc.skeleton_cache_dir = o.skeleton_cache;
    try {
        if (!o.key_file.empty()) bc.token_key = net::read_key_file(o.key_file);
        if (!o.token_file.empty()) token = read_token(o);
        if (!o.profile.empty() || any_network_option(app)) {
            bc.profile = resolve_network(app, o.net, o.profile);
            bc.up_profile = resolve_uplink(app, o.net, *bc.profile, o.profile.empty() ? NetProfile{} : net_profile(o.profile));
            std::printf("network: %s\n", describe(*bc.profile).c_str());
            if (bc.up_profile->bottlenecked() != bc.profile->bottlenecked() || bc.up_profile->bandwidth_kbps != bc.profile->bandwidth_kbps ||
                bc.up_profile->trace != bc.profile->trace)
                std::printf("uplink: %s\n", describe(*bc.up_profile).c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-client: %s\n", e.what());
        return 2;
    }
    return std::nullopt;
}

void stats_line(const std::vector<std::unique_ptr<Bot>>& all, double t) {
    uint64_t received = 0, lost = 0, datagrams_lost = 0;
    double bps = 0, rtt = 0, rate = 0;
    int connected = 0;
    size_t characters = 0, joints = 0, arriving = 0;
    uint64_t requests = 0, answered = 0, forged = 0, by_reference = 0, in_full = 0;
    static bool problem_said = false;
    for (const auto& b : all) {
        const BotReport r = b->report(t);
        by_reference += r.skeletons_by_reference;
        in_full += r.skeletons_in_full;
        if (!r.problem.empty() && !problem_said) {  // once: the counts go on in the report
            std::fprintf(stderr, "kinesync-client: skeletons: %s\n", r.problem.c_str());
            problem_said = true;
        }
        requests += r.connect_requests;
        answered += r.challenges;
        forged += r.challenges_forged;
        received += r.snapshots_received;
        lost += r.snapshots_lost;
        datagrams_lost += r.datagrams_lost;
        bps += r.bytes_per_s;
        rtt += r.rtt_ms;
        rate += r.rate_given_bps;
        connected += b->state() == ConnectionState::Connected;
        characters += r.characters_shown;
        joints += r.joints_shown;
        arriving += r.characters_arriving;
    }
    // The handshake's figures say how hard it was to get in (a flood answers a share of requests).
    const std::string handshake = forged ? fmt::format("handshake {} sent, {} answered, {} forged refused", requests, answered, forged)
                                         : fmt::format("handshake {} sent, {} answered", requests, answered);
    std::printf("[%6.1f s] bots %d connected %d | snapshots %llu received, %llu lost (datagrams %llu lost) | %.1f kB/s per bot (given %.0f kbit/s) | rtt %.1f ms | %s | "
                "shown %zu characters, %zu joints%s%s\n",
                t, int(all.size()), connected, (unsigned long long)received, (unsigned long long)lost,
                (unsigned long long)datagrams_lost, bps / double(all.size()) / 1000.0, rate / double(all.size()) / 1000.0,
                rtt / double(all.size()), handshake.c_str(), characters, joints,
                arriving ? fmt::format(", {} still arriving", arriving).c_str() : "",
                by_reference ? fmt::format(" | skeletons {} by reference, {} in full", by_reference, in_full).c_str() : "");
    std::fflush(stdout);
}

int no_server(const ClientOptions& o, const std::vector<std::unique_ptr<Bot>>& all, double waited) {
    const std::string why = all.empty() ? std::string() : all.front()->disconnect_reason();
    std::fprintf(stderr, "kinesync-client: no server answered at %s within %g s%s\n", o.server.c_str(), std::round(waited * 10.0) / 10.0,
                 why.empty() ? "" : (" (" + why + ")").c_str());
    return 1;
}

bool write_report(const ClientOptions& o, const std::vector<std::unique_ptr<Bot>>& all, double t) {
    std::ofstream f(o.report);
    if (!f) {
        std::fprintf(stderr, "kinesync-client: %s: cannot write the report\n", o.report.c_str());
        return false;
    }
    f << "{\n  \"strategy\": \"" << o.strategy << "\",\n  \"duration_s\": " << t << ",\n  \"clients\": [\n";
    for (size_t i = 0; i < all.size(); ++i) {
        const BotReport r = all[i]->report(t);
        char line[2048];
        std::snprintf(line, sizeof line,
                      "    {\"snapshots_received\": %llu, \"snapshots_lost\": %llu, \"datagrams_lost\": %llu, \"bytes_per_s\": %.1f, \"rtt_ms\": %.2f, "
                      "\"time_sync_err_ms\": %.2f, \"rate_given_kbps\": %.1f, \"reconstruct_ns_per_character\": %.0f, \"reconstruct_ns_per_character_median\": %.0f, \"reconnects\": %llu, "
                      "\"entries_refused\": %llu, \"entries_early\": %llu, \"resyncs_sent\": %llu, \"characters_shown\": %zu, \"joints_shown\": %zu, "
                      "\"characters_arriving\": %zu, \"skeletons_by_reference\": %llu, \"skeletons_in_full\": %llu, "
                      "\"skeleton_errors\": %llu, \"skeleton_cache_refused\": %llu, "
                      "\"connect_requests\": %llu, \"challenges\": %llu, \"challenges_forged\": %llu, \"challenges_own\": %llu, \"state\": \"%s\"}%s\n",
                      (unsigned long long)r.snapshots_received, (unsigned long long)r.snapshots_lost,
                      (unsigned long long)r.datagrams_lost, r.bytes_per_s, r.rtt_ms,
                      r.time_sync_err_ms, r.rate_given_bps / 1000.0, r.reconstruct_ns_per_character, r.reconstruct_ns_per_character_median, (unsigned long long)r.reconnects,
                      (unsigned long long)r.entries_refused, (unsigned long long)r.entries_early, (unsigned long long)r.resyncs_sent,
                      r.characters_shown, r.joints_shown,
                      r.characters_arriving, (unsigned long long)r.skeletons_by_reference, (unsigned long long)r.skeletons_in_full,
                      (unsigned long long)r.skeleton_errors, (unsigned long long)r.skeleton_cache_refused, (unsigned long long)r.connect_requests, (unsigned long long)r.challenges, (unsigned long long)r.challenges_forged,
                      (unsigned long long)r.challenges_own, r.state.c_str(), i + 1 < all.size() ? "," : "");
        f << line;
    }
    f << "  ]\n}\n";
    return true;
}

// Polls every bot until the duration or a signal; a stats line every stats_every seconds. A
// client no server ever answers gives up instead of waiting forever; once any bot has connected,
// losing the server later is the bots' to handle (they reconnect).
int run(const ClientOptions& o, std::vector<std::unique_ptr<Bot>>& all) {
    const auto t0 = std::chrono::steady_clock::now();
    auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    for (auto& b : all) b->start(now());
    double next_stats = o.stats_every;
    bool ever_connected = false;
    while (!g_stop && (o.duration <= 0 || now() < o.duration)) {
        const double t = now();
        for (auto& b : all) {
            b->poll(t);
            ever_connected = ever_connected || b->state() == ConnectionState::Connected;
        }
        if (!ever_connected && o.connect_timeout > 0 && t >= o.connect_timeout) return no_server(o, all, o.connect_timeout);
        if (t >= next_stats) {
            stats_line(all, t);
            next_stats += o.stats_every;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const double t = now();
    stats_line(all, t);
    if (!ever_connected && !g_stop) return no_server(o, all, t);  // --duration ended before --connect-timeout
    return o.report.empty() || write_report(o, all, t) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-client: test clients that connect to a kinesync server, decode its snapshots and reconstruct\n"
                 "the characters with a strategy, optionally through a simulated network (both directions)."};
    ClientOptions o;
    add_client_options(app, o);
    cli::add_version_flag(app, "kinesync-client", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;
    BotConfig bc;
    std::vector<uint8_t> token;
    if (const auto rc = make_bot_config(o, app, bc, token)) return *rc;
    if (o.player_id == 0) o.player_id = random_player_id();
    std::vector<std::unique_ptr<Bot>> all;
    try {
        for (int i = 0; i < o.bots; ++i) {
            BotConfig b = bc;
            b.seed = o.seed * 1000 + uint64_t(i);
            b.player_id = o.player_id + uint64_t(i);
            b.connect_token = token;
            all.push_back(std::make_unique<Bot>(b));
        }
    } catch (const Error& e) {
        if (e.code() != Errc::InvalidConfig) {
            std::fprintf(stderr, "kinesync-client: cannot reach %s: %s\n", o.server.c_str(), e.what());
            return 1;
        }
        std::fprintf(stderr, "kinesync-client: %s\n", e.what());  // e.g. --skeleton-cache
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-client: cannot reach %s: %s\n", o.server.c_str(), e.what());
        return 1;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    return run(o, all);
}
