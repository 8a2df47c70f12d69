// kinesync-token: keys and connect tokens, as a game's backend makes them (the library call is
// ks::net::issue_connect_token, common/src/net/connect_token.h).
//   kinesync-token keygen --out server.key
//   kinesync-token issue --key-file server.key --server 127.0.0.1:40000 --client-id 7 --out player7.kstoken
//   kinesync-token show player7.kstoken
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include "programs/testbench/cli_common.h"
#include "common/src/net/connect_token.h"

using namespace ks;

namespace {

int fail(const std::string& what) {
    std::fprintf(stderr, "kinesync-token: %s\n", what.c_str());
    return 1;
}

std::string utc(uint64_t unix_s) {
    const std::time_t t = std::time_t(unix_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kinesync-token: the private key a game's backend shares with its kinesync servers, and the connect tokens it\n"
                 "issues to players (each good for one session on the servers it names, until it expires)."};
    app.require_subcommand(1);
    std::string out, key_file, user_data, file;
    std::vector<std::string> servers;
    uint64_t client_id = 0;
    uint32_t valid_for = 45;
    CLI::App* keygen = app.add_subcommand("keygen", "a new random private key (64 hex digits), to stdout or --out (mode 0600)");
    keygen->add_option("--out", out, "write the key here");
    CLI::App* issue = app.add_subcommand("issue", "a connect token for one player");
    issue->add_option("--key-file", key_file, "the private key (kinesync-token keygen)")->required();
    issue->add_option("--server", servers, "ADDRESS:PORT the token is good for (numeric; up to 8, in the order the client tries)")->required();
    issue->add_option("--client-id", client_id, "the backend's id for the player (the server logs it)")->capture_default_str();
    issue->add_option("--valid-for", valid_for, "seconds until the token expires")->capture_default_str()->check(CLI::Range(1u, 86400u));
    issue->add_option("--user-data", user_data, "text the server can read (at most 256 bytes)");
    issue->add_option("--out", out, "write the token here")->required();
    CLI::App* show = app.add_subcommand("show", "what a token says (not its keys)");
    show->add_option("file", file, "a token file")->required();
    cli::add_version_flag(app, "kinesync-token", KS_VERSION);
    if (const auto exit_code = cli::parse_or_exit(app, argc, argv)) return *exit_code;

    try {
        if (keygen->parsed()) {
            const std::string hex = net::key_to_hex(net::random_key());
            if (out.empty()) {
                std::printf("%s\n", hex.c_str());
                return 0;
            }
            const std::string line = hex + "\n";
            net::write_secret_file(out, std::vector<uint8_t>(line.begin(), line.end()));
            return 0;
        }
        if (issue->parsed()) {
            net::TokenRequest r;
            r.client_id = client_id;
            r.servers = servers;
            r.valid_for_s = valid_for;
            r.user_data.assign(user_data.begin(), user_data.end());
            const std::vector<uint8_t> token = net::issue_connect_token(net::read_key_file(key_file), r, net::unix_now_s());
            net::write_secret_file(out, token);  // it holds the session keys: the owner's only
            return 0;
        }
        std::ifstream in(file, std::ios::binary);
        if (!in) return fail(file + ": cannot read");
        const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
        std::string why;
        const std::optional<net::ConnectToken> t = net::parse_connect_token(bytes, &why);
        if (!t) return fail(file + ": " + why);
        std::printf("client id %llu\ncreated   %s\nexpires   %s (%s)\n", (unsigned long long)t->client_id, utc(t->create_s).c_str(),
                    utc(t->expire_s).c_str(), t->expire_s > net::unix_now_s() ? "valid" : "expired");
        for (const std::string& s : t->servers) std::printf("server    %s\n", s.c_str());
        std::printf("sealed    %zu bytes\n", t->private_token.size());
        return 0;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
