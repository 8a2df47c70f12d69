// kinesync-tool: offline tools for motion data and tuning.
#include <cstdio>
#include <exception>

#include "server/tool/commands.h"

int main(int argc, char** argv) {
    CLI::App app{"kinesync-tool: offline tools for kinesync motion data and tuning"};
    app.require_subcommand(1);
    ks::tool::add_info_command(app);
    ks::tool::add_loop_command(app);
    ks::tool::add_filmstrip_command(app);
    ks::tool::add_dynamics_command(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kinesync-tool: %s\n", e.what());
        return 1;
    }
    return 0;
}
