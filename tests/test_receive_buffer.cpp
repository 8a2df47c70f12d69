// The UDP socket's receive buffer (ServerConfig::receive_buffer_bytes): set after the bind, the
// size the kernel granted known, capped at net.core.rmem_max on Linux.
#include <gtest/gtest.h>

#include <fstream>

#include "server/src/net/server.h"

using namespace ks;

namespace {
size_t granted(size_t asked) {
    asio::io_context io;
    net::Roster roster;
    net::ServerConfig cfg;
    cfg.bind = "127.0.0.1";
    cfg.port = 0;
    cfg.worker_threads = 0;
    cfg.receive_buffer_bytes = asked;
    net::Server server(io, cfg, roster);
    return server.receive_buffer_bytes();
}
}  // namespace

TEST(ReceiveBuffer, TheSizeAskedIsSetAndReported) {
    EXPECT_EQ(granted(0), 0u) << "0 leaves the kernel's default alone";
    EXPECT_EQ(granted(64 * 1024), 64u * 1024u);
    EXPECT_EQ(net::ServerConfig{}.receive_buffer_bytes, size_t(4) << 20);
}

#ifdef __linux__
TEST(ReceiveBuffer, LinuxCapsItAtRmemMax) {
    std::ifstream f("/proc/sys/net/core/rmem_max");
    size_t rmem_max = 0;
    if (!(f >> rmem_max) || rmem_max == 0 || rmem_max > (size_t(1) << 29)) GTEST_SKIP() << "net.core.rmem_max not readable";
    EXPECT_EQ(granted(rmem_max * 2), rmem_max);
}
#endif
