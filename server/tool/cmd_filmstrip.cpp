// kinesync-tool filmstrip (being written).
#include "server/tool/commands.h"

namespace ks::tool {
void add_filmstrip_command(CLI::App&) {}
}  // namespace ks::tool
