#include "tests/support/udp_harness.h"

#include <spdlog/spdlog.h>

namespace ks::test {

void quiet_server_logger() {
    if (!spdlog::get("server")) spdlog::register_logger(std::make_shared<spdlog::logger>("server"));
}

}  // namespace ks::test
