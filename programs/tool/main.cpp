// kinesync-tool: offline tools for motion data and tuning.
#include <cstdio>
#include <exception>

#include "programs/testbench/cli_common.h"
#include "programs/tool/commands.h"

int main(int argc, char** argv) {
    CLI::App app{"kinesync-tool: offline tools for kinesync motion data and tuning"};
    app.require_subcommand(1);
    ks::tool::add_info_command(app);
    ks::tool::add_loop_command(app);
    ks::tool::add_filmstrip_command(app);
    ks::tool::add_codec_command(app);
    ks::tool::add_dynamics_command(app);
    ks::cli::add_version_flag(app, "kinesync-tool", KS_VERSION);
    // Subcommands run inside the parse: an option error exits 2, a failure while running 1.
    try {
        if (const auto exit_code = ks::cli::parse_or_exit(app, argc, argv)) return *exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-tool: %s\n", e.what());
        return 1;
    }
    return 0;
}
