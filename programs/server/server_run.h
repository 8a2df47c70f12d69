#pragma once
// kinesync-server's run once its options are read: the world and the stream server, the
// orchestrator's side (HTTP probes, Agones), the drift-free tick loop with its stats lines, and
// the drain on SIGINT/SIGTERM.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <spdlog/spdlog.h>
#include <string>

#include "programs/server/ops/agones_sdk.h"
#include "programs/server/ops/http_endpoint.h"
#include "programs/server/ops/ops_http.h"
#include "programs/server/server_options.h"
#include "programs/server/sim/world_streamer.h"

namespace ks {

// The signal that asks for a drain (0: none), set by the handler main installs.
extern std::atomic<int> g_server_signal;

// What the health, readiness and metrics probes read, written by the tick loop.
struct OpsState {
    std::atomic<bool> ticking{false}, draining{false};
    std::atomic<int64_t> last_step_ns{0};  // steady_clock
    std::atomic<uint32_t> stepped{0};      // ticks handed to the server
    std::atomic<uint64_t> missed{0};
    std::atomic<double> tick_p50_s{0}, tick_p99_s{0};  // over the last stats interval
};

class ServerRun {
public:
    ServerRun(ServerOptions& o, std::shared_ptr<spdlog::logger> log, std::optional<uint16_t> agones_port);
    // Loads the clips and opens the stream server; an exit code when it cannot.
    std::optional<int> open();
    int run_offline();  // --no-network: as fast as possible, then close
    int serve();        // ticks in real time until the duration or a signal, then drains

private:
    std::optional<int> start_ops();  // the HTTP probes and the Agones SDK
    std::string unhealthy() const;
    std::string unready() const;
    ops::MetricsSnapshot metrics() const;
    void stats_line(const char* when);
    int finish();
    int drain(const char* why, std::chrono::steady_clock::time_point since);

    ServerOptions& o_;
    std::shared_ptr<spdlog::logger> log_;
    std::optional<uint16_t> agones_port_;
    std::unique_ptr<ClipLibrary> lib_;
    std::unique_ptr<World> world_;
    std::unique_ptr<StreamServer> server_;
    std::unique_ptr<WorldStreamer> streamer_;
    OpsState state_;
    ops::OpsProbes probes_;
    std::unique_ptr<ops::HttpEndpoint> http_;
    std::unique_ptr<ops::AgonesSdk> agones_;
    uint64_t missed_ = 0;
    bool insecure_public_ = false;
};

// Under Agones with a key and no --public-address: asks the SDK for the GameServer's address,
// which connect tokens name. An exit code when it cannot (or a signal came first).
std::optional<int> learn_agones_address(ServerOptions& o, uint16_t agones_port, spdlog::logger& log);

}  // namespace ks
