// kinesync-tool loop (being written).
#include "server/tool/commands.h"

namespace ks::tool {
void add_loop_command(CLI::App&) {}
}  // namespace ks::tool
