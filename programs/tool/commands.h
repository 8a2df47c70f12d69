#pragma once
// Subcommands of kinesync-tool; each registers itself on the app (one file per command).
#include <CLI/CLI.hpp>

namespace ks::tool {
void add_dynamics_command(CLI::App& app);  // cmd_dynamics.cpp
void add_info_command(CLI::App& app);      // cmd_info.cpp
void add_loop_command(CLI::App& app);      // cmd_loop.cpp
void add_filmstrip_command(CLI::App& app); // cmd_filmstrip.cpp
void add_codec_command(CLI::App& app);     // cmd_codec.cpp
}  // namespace ks::tool
