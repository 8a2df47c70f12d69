#include "programs/server/ops/ops_http.h"

namespace ks::ops {

HttpResponse ops_response(std::string_view method, std::string_view path, const OpsProbes& probes) {
    const std::string text = "text/plain; charset=utf-8";
    if (method != "GET" && method != "HEAD") return {405, text, "only GET and HEAD\n"};
    if (path == "/healthz") {
        const std::string why = probes.unhealthy ? probes.unhealthy() : std::string();
        return why.empty() ? HttpResponse{200, text, "ok\n"} : HttpResponse{503, text, why + "\n"};
    }
    if (path == "/readyz") {
        const std::string why = probes.unready ? probes.unready() : std::string();
        return why.empty() ? HttpResponse{200, text, "ready\n"} : HttpResponse{503, text, why + "\n"};
    }
    if (path == "/metrics") return {200, kPrometheusContentType, metrics_text(probes.metrics ? probes.metrics() : MetricsSnapshot{})};
    return {404, text, "not found (try /healthz, /readyz, /metrics)\n"};
}

}  // namespace ks::ops
