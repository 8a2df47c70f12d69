#pragma once
// What kinesync-server answers on its operations port (--http-port):
//   GET /healthz  200 "ok" while the tick loop runs and keeps up; 503 and why otherwise
//   GET /readyz   200 "ready" once listening and not draining; 503 and why otherwise
//   GET /metrics  200, Prometheus text format 0.0.4 (programs/server/ops/metrics_text.h)
// Other paths 404, other methods than GET and HEAD 405.

#include <functional>
#include <string>
#include <string_view>

#include "programs/server/ops/http_endpoint.h"
#include "programs/server/ops/metrics_text.h"

namespace ks::ops {

struct OpsProbes {
    std::function<std::string()> unhealthy;  // empty while healthy, else why not
    std::function<std::string()> unready;    // empty while ready, else why not
    std::function<MetricsSnapshot()> metrics;
};

HttpResponse ops_response(std::string_view method, std::string_view path, const OpsProbes& probes);

}  // namespace ks::ops
