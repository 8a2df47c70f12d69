#pragma once
// What the four command-line programs (kinesync-server, -client, -replay, -tool) share: a
// --version flag and one exit-code convention. Header-only and CLI11-only, so any program can
// include it without linking anything.
//
// Exit codes: 0 success (and --help, --version), 1 a failure while running (cannot read, write,
// listen, reach a server), 2 a usage error (a bad option or value).

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace ks::cli {

inline constexpr int kExitUsage = 2;

// --version prints "NAME VERSION" and exits 0. VERSION is the project's (KS_VERSION, from CMake).
inline void add_version_flag(CLI::App& app, const std::string& name, const std::string& version) {
    app.set_version_flag("--version", name + " " + version);
}

// Parses the command line. Returns nothing to go on, or the code main should return at once:
// 0 after --help or --version (printed as CLI11 prints them), kExitUsage after an option error
// (CLI11's message on stderr). A CLI::RuntimeError thrown on purpose by a callback keeps its own
// code. Other exceptions from callbacks propagate.
inline std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv) {
    try {
        app.parse(argc, argv);
        return std::nullopt;
    } catch (const CLI::RuntimeError& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : kExitUsage;
    }
}

}  // namespace ks::cli
