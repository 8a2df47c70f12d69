#pragma once
// Subcommands of kinesync-tool; each registers itself on the app.
#include <CLI/CLI.hpp>

namespace ks::tool {
void add_dynamics_command(CLI::App& app);
}  // namespace ks::tool
