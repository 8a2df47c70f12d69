#pragma once
// A minimal HTTP/1.1 endpoint for operations (health, readiness, metrics) on a TCP port, on a
// thread of its own, and the tiny HTTP client the Agones SDK calls use.
//
// The endpoint reads one request head of at most max_request_bytes, hands the method and path
// (query string dropped) to the handler, writes its answer with Content-Length and
// "Connection: close", and closes the connection. A request that is not HTTP, too long, or too slow
// (its head later than header_timeout_s, the whole exchange later than idle_timeout_s) gets 400 or
// is dropped; connections held open without a request (slowloris) cannot keep a probe out: one
// address holds at most max_connections_per_address, and a newcomer evicts the oldest connection
// still sending its head when every slot is taken; a handler that throws gives 500; HEAD gets the
// headers only. Nothing a peer sends can stop it, block it for longer than the timeout, or reach
// the caller other than through the handler, which runs on the endpoint's thread (so it must be
// thread-safe with respect to the rest of the program).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ks::ops {

struct HttpResponse {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

using HttpHandler = std::function<HttpResponse(std::string_view method, std::string_view path)>;

struct HttpEndpointConfig {
    std::string bind = "127.0.0.1";
    uint16_t port = 0;                // 0: any free port (see HttpEndpoint::port())
    size_t max_request_bytes = 4096;  // the request head (request line and headers)
    double header_timeout_s = 1.0;    // the request head must have arrived this long after the connection opened
    double idle_timeout_s = 2.0;      // a connection is closed this long after it opened, whatever it did
    int max_connections = 32;         // at most this many at once: a newcomer then evicts the oldest
                                      // one still sending its head (slowloris), or is closed if none is
    int max_connections_per_address = 8;  // more from one address are closed as soon as accepted
};

class HttpEndpoint {
public:
    // Binds and starts serving. Throws std::runtime_error("cannot listen on TCP HOST:PORT: why").
    HttpEndpoint(const HttpEndpointConfig& cfg, HttpHandler handler);
    ~HttpEndpoint();  // stop()
    HttpEndpoint(const HttpEndpoint&) = delete;
    HttpEndpoint& operator=(const HttpEndpoint&) = delete;

    // Stops accepting, drops open connections, joins the thread. Idempotent.
    void stop();
    uint16_t port() const { return port_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    uint16_t port_ = 0;
};

// The request line of a head ("GET /path?q HTTP/1.1\r\n..."), or nothing when it is not one:
// method (upper-case letters), path (from '/', without the query string), HTTP/1.0 or 1.1.
struct HttpRequestLine {
    std::string method, path;
};
std::optional<HttpRequestLine> parse_http_request_line(std::string_view head);

const char* http_status_text(int status);

// A complete response: status line, Content-Type, Content-Length, Connection: close, body (left
// out for HEAD, the length kept).
std::string http_response_text(const HttpResponse& r, bool head_only = false);

// The client side, for the Agones SDK: POSTs `body` (application/json) to http://HOST:PORT/PATH
// (HOST an IP address) and waits at most timeout_s for the whole answer. Returns the status code,
// or nothing with `error` saying why (refused, timed out, not HTTP).
std::optional<int> http_post(const std::string& host, uint16_t port, std::string_view path, std::string_view body,
                             double timeout_s, std::string* error = nullptr);

// GETs http://HOST:PORT/PATH, waiting at most timeout_s for the whole answer and reading at most
// max_bytes of it (head and body). The body is the Content-Length bytes, the chunks of a chunked
// one, or (with neither) all until the peer closes. Returns the status and body, or nothing with
// `error` saying why (refused, timed out, not HTTP, over max_bytes, cut short).
struct HttpGetResult {
    int status = 0;
    std::string body;
};
std::optional<HttpGetResult> http_get(const std::string& host, uint16_t port, std::string_view path, double timeout_s,
                                      std::string* error = nullptr, size_t max_bytes = 65536);

}  // namespace ks::ops
