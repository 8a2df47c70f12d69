#include "server/ops/agones_sdk.h"

#include <chrono>
#include <cstdlib>
#include <spdlog/spdlog.h>
#include <stdexcept>

#include "server/ops/http_endpoint.h"

namespace ks::ops {

namespace {
std::shared_ptr<spdlog::logger> ops_log() { return spdlog::get("server"); }
}  // namespace

std::optional<uint16_t> AgonesSdk::port_from_env() {
    const char* v = std::getenv("AGONES_SDK_HTTP_PORT");
    if (!v || !*v) return std::nullopt;
    const std::string s(v);
    size_t used = 0;
    long port = 0;
    try {
        port = std::stol(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != s.size() || port < 1 || port > 65535)
        throw std::invalid_argument("AGONES_SDK_HTTP_PORT=" + s + ": not a port number (1..65535)");
    return uint16_t(port);
}

AgonesSdk::AgonesSdk(const AgonesConfig& cfg, std::function<bool()> healthy) : cfg_(cfg), healthy_(std::move(healthy)) {
    thread_ = std::thread([this] { run(); });
}

AgonesSdk::~AgonesSdk() { stop_thread(); }

void AgonesSdk::stop_thread() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool AgonesSdk::post(const char* path) {
    std::string why;
    const std::optional<int> status = http_post(cfg_.host, cfg_.port, path, "{}", cfg_.timeout_s, &why);
    const bool ok = status && *status >= 200 && *status < 300;
    if (!ok && status) why = "HTTP " + std::to_string(*status);
    if (auto l = ops_log()) {
        if (!ok) l->log(failing_ ? spdlog::level::debug : spdlog::level::warn, "agones: POST {} to {}:{} failed: {}", path, cfg_.host,
                        cfg_.port, why);
        else if (failing_) l->info("agones: POST {} to {}:{} works again", path, cfg_.host, cfg_.port);
    }
    failing_ = !ok;
    return ok;
}

void AgonesSdk::run() {
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(cfg_.health_every_s));
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_);
            if (cv_.wait_until(lock, next, [this] { return stop_; })) return;
        }
        next += period;
        if (!ready_sent_) {
            if (post("/ready")) {
                ready_sent_ = true;
                if (auto l = ops_log()) l->info("agones: ready (SDK on {}:{})", cfg_.host, cfg_.port);
            }
            continue;  // retried at the next period until the sidecar answers
        }
        if (healthy_ && !healthy_()) continue;  // no ping: Agones counts the missing ones
        if (post("/health")) ++health_sent_;
    }
}

bool AgonesSdk::shutdown() {
    stop_thread();
    if (shutdown_sent_.exchange(true)) return true;
    const bool ok = post("/shutdown");
    if (ok)
        if (auto l = ops_log()) l->info("agones: shutdown requested");
    return ok;
}

}  // namespace ks::ops
