#pragma once
// The Agones SDK's REST side (the sidecar on localhost:AGONES_SDK_HTTP_PORT), as kinesync-server
// uses it: POST /ready once listening (retried until the sidecar answers: it may start after the
// game server), POST /health every health_every_s while the server is healthy (Agones marks the
// GameServer Unhealthy when the pings stop), POST /shutdown when draining. Failures are logged
// (spdlog "server"), never fatal. Also GET /gameserver, for the address clients are given
// (agones_public_address, fetch_agones_public_address).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace ks::ops {

struct AgonesConfig {
    std::string host = "127.0.0.1";
    uint16_t port = 9358;
    double health_every_s = 2.0;
    double timeout_s = 1.0;  // per request
};

class AgonesSdk {
public:
    // AGONES_SDK_HTTP_PORT: nothing when unset or empty; throws std::invalid_argument when it is
    // not a port number (1..65535).
    static std::optional<uint16_t> port_from_env();

    // Starts the thread: /ready at once, then /health pings while healthy() (called on that thread).
    AgonesSdk(const AgonesConfig& cfg, std::function<bool()> healthy);
    ~AgonesSdk();  // stops the pings (no /shutdown)
    AgonesSdk(const AgonesSdk&) = delete;
    AgonesSdk& operator=(const AgonesSdk&) = delete;

    // Stops the pings, then POSTs /shutdown (at most timeout_s; once). Returns whether it was accepted.
    bool shutdown();

    bool ready_sent() const { return ready_sent_; }
    uint64_t health_sent() const { return health_sent_; }

private:
    void run();
    bool post(const char* path);
    void stop_thread();

    AgonesConfig cfg_;
    std::function<bool()> healthy_;
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool failing_ = false;  // the last request failed (so a new failure is logged at debug only)
    std::atomic<bool> ready_sent_{false};
    std::atomic<uint64_t> health_sent_{0};
    std::atomic<bool> shutdown_sent_{false};
    std::thread thread_;
};

// The address clients reach this GameServer at, from the JSON of the SDK's GET /gameserver
// ({"object_meta": {...}, "status": {"state": "Ready", "address": "203.0.113.5",
// "ports": [{"name": "default", "port": 7042}], ...}, ...}): "ADDRESS:PORT" with status.address
// (an IPv4 address, or an IPv6 one, written "[ADDRESS]:PORT") and the port of status.ports named
// "default", else the first one (a port number, or its digits as a string). Nothing, with `why`
// saying what is missing or wrong, when the document is not JSON (nesting over 64 deep included),
// has no status, an empty address or no ports (not scheduled yet), or an address or port that is
// not one.
std::optional<std::string> agones_public_address(std::string_view json, std::string* why = nullptr);

// Asks the sidecar (cfg.host:cfg.port, each request at most cfg.timeout_s) for the GameServer
// until agones_public_address() finds the address: retried every retry_every_s for up to wait_s
// (the sidecar may start after the game server, and the address and ports are filled in once
// the pod is scheduled), and given up early when stop() says so. Nothing, with `why` saying what
// the last try got, when it does not find it in time.
std::optional<std::string> fetch_agones_public_address(const AgonesConfig& cfg, double wait_s, std::string* why = nullptr,
                                                       const std::function<bool()>& stop = {}, double retry_every_s = 0.5);

}  // namespace ks::ops
