// kinesync-tool info (being written).
#include "server/tool/commands.h"

namespace ks::tool {
void add_info_command(CLI::App&) {}
}  // namespace ks::tool
