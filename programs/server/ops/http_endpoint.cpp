#include "programs/server/ops/http_endpoint.h"

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <cctype>
#include <chrono>
#include <functional>
#include <set>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <thread>

namespace ks::ops {

namespace {

using asio::ip::tcp;

std::chrono::steady_clock::duration after(double seconds) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

template <class... Args>
void log_warn(spdlog::format_string_t<Args...> f, Args&&... args) {
    if (auto log = spdlog::get("server")) log->warn(f, std::forward<Args>(args)...);
}

bool ieq(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

// The value of header `name` in a response head (up to the blank line), or nothing.
std::optional<std::string_view> header_value(std::string_view head, std::string_view name) {
    size_t pos = head.find("\r\n");
    while (pos != std::string_view::npos && pos + 2 < head.size()) {
        const size_t start = pos + 2, end = head.find("\r\n", start);
        const std::string_view line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        const size_t colon = line.find(':');
        if (colon != std::string_view::npos && ieq(line.substr(0, colon), name)) {
            std::string_view v = line.substr(colon + 1);
            while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
            return v;
        }
        pos = end;
    }
    return std::nullopt;
}

}  // namespace

const char* http_status_text(int status) {
    switch (status) {
        case 200: return "OK";
        case 204: return "No Content";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return "Unknown";
    }
}

std::string http_response_text(const HttpResponse& r, bool head_only) {
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + http_status_text(r.status) + "\r\n";
    out += "Content-Type: " + r.content_type + "\r\n";
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    out += "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
    if (!head_only) out += r.body;
    return out;
}

std::optional<HttpRequestLine> parse_http_request_line(std::string_view head) {
    const size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const size_t s1 = line.find(' ');
    if (s1 == std::string_view::npos) return std::nullopt;
    const size_t s2 = line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos || line.find(' ', s2 + 1) != std::string_view::npos) return std::nullopt;
    const std::string_view method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1), version = line.substr(s2 + 1);
    if (method.empty() || method.size() > 16) return std::nullopt;
    for (char c : method)
        if (c < 'A' || c > 'Z') return std::nullopt;
    if (target.empty() || target.front() != '/' || target.size() > 2048) return std::nullopt;
    for (char c : target)
        if (c <= 0x20 || c >= 0x7f) return std::nullopt;
    if (version != "HTTP/1.1" && version != "HTTP/1.0") return std::nullopt;
    return HttpRequestLine{std::string(method), std::string(target.substr(0, target.find_first_of("?#")))};
}

struct HttpEndpoint::Impl {
    struct Connection;
    HttpEndpointConfig cfg;
    HttpHandler handler;
    std::set<Connection*> connections;  // open ones (the I/O thread only); outlives io's handlers
    asio::io_context io;
    tcp::acceptor acceptor{io};
    asio::steady_timer accept_retry{io};
    std::thread thread;
    bool stopped = false;

    void accept();
    bool make_room(const asio::ip::address& peer);
};

struct HttpEndpoint::Impl::Connection : std::enable_shared_from_this<Connection> {
    Impl& owner;
    tcp::socket socket;
    asio::steady_timer deadline, head_deadline;
    std::string in, out;
    std::array<char, 512> scratch{};
    asio::ip::address peer;
    std::chrono::steady_clock::time_point opened = std::chrono::steady_clock::now();
    bool head_done = false, closed = false;

    Connection(Impl& o, tcp::socket s) : owner(o), socket(std::move(s)), deadline(owner.io), head_deadline(owner.io) {
        asio::error_code ec;
        peer = socket.remote_endpoint(ec).address();
        owner.connections.insert(this);
    }
    ~Connection() { owner.connections.erase(this); }

    void start() {
        deadline.expires_after(after(owner.cfg.idle_timeout_s));
        deadline.async_wait([self = shared_from_this()](const asio::error_code& ec) {
            if (!ec) self->close();
        });
        head_deadline.expires_after(after(owner.cfg.header_timeout_s));
        head_deadline.async_wait([self = shared_from_this()](const asio::error_code& ec) {
            if (!ec && !self->head_done) self->close();
        });
        asio::async_read_until(socket, asio::dynamic_buffer(in, owner.cfg.max_request_bytes), "\r\n\r\n",
                               [self = shared_from_this()](const asio::error_code& ec, size_t n) { self->on_head(ec, n); });
    }

    void on_head(const asio::error_code& ec, size_t n) {
        head_done = true;
        head_deadline.cancel();
        // A full buffer without the end of the head: too long (or not HTTP at all).
        if (ec == asio::error::not_found) return respond({400, "text/plain; charset=utf-8", "request too large\n"}, false);
        if (ec) return close();  // the peer went away, or the deadline closed the socket
        const std::optional<HttpRequestLine> line = parse_http_request_line(std::string_view(in).substr(0, n));
        if (!line) return respond({400, "text/plain; charset=utf-8", "bad request\n"}, false);
        HttpResponse r;
        try {
            r = owner.handler(line->method, line->path);
        } catch (const std::exception& e) {
            log_warn("http {} {}: {}", line->method, line->path, e.what());
            r = {500, "text/plain; charset=utf-8", "internal error\n"};
        }
        respond(r, line->method == "HEAD");
    }

    void respond(const HttpResponse& r, bool head_only) {
        out = http_response_text(r, head_only);
        asio::async_write(socket, asio::buffer(out), [self = shared_from_this()](const asio::error_code& ec, size_t) {
            if (ec) return self->close();
            // Closing with unread input would reset the connection and could lose the answer on
            // its way: end our side, then read and drop until the peer closes (or the deadline).
            asio::error_code ignored;
            self->socket.shutdown(tcp::socket::shutdown_send, ignored);
            self->linger();
        });
    }

    void linger() {
        socket.async_read_some(asio::buffer(scratch), [self = shared_from_this()](const asio::error_code& ec, size_t) {
            if (ec) return self->close();
            self->linger();
        });
    }

    void close() {
        asio::error_code ignored;
        closed = true;
        deadline.cancel();
        head_deadline.cancel();
        socket.close(ignored);
    }
};

// Room for a newcomer from `peer`: false when its address holds its share; else true, after
// evicting the oldest connection still sending its head if every slot is taken (false if none is).
bool HttpEndpoint::Impl::make_room(const asio::ip::address& peer) {
    int live = 0, same = 0;
    Connection* oldest_slow = nullptr;
    for (Connection* c : connections) {
        if (c->closed) continue;
        ++live;
        same += c->peer == peer;
        if (!c->head_done && (!oldest_slow || c->opened < oldest_slow->opened)) oldest_slow = c;
    }
    if (same >= cfg.max_connections_per_address) return false;
    if (live < cfg.max_connections) return true;
    if (!oldest_slow) return false;
    oldest_slow->close();
    return true;
}

void HttpEndpoint::Impl::accept() {
    acceptor.async_accept([this](const asio::error_code& ec, tcp::socket s) {
        if (stopped || !acceptor.is_open()) return;
        if (ec) {
            // Out of descriptors and the like: try again a little later rather than spin.
            log_warn("http accept: {}", ec.message());
            accept_retry.expires_after(std::chrono::milliseconds(100));
            accept_retry.async_wait([this](const asio::error_code& e) {
                if (!e) accept();
            });
            return;
        }
        asio::error_code pe;
        const asio::ip::address peer = s.remote_endpoint(pe).address();
        if (pe || !make_room(peer)) {
            asio::error_code ignored;
            s.close(ignored);
        } else {
            std::make_shared<Connection>(*this, std::move(s))->start();
        }
        accept();
    });
}

HttpEndpoint::HttpEndpoint(const HttpEndpointConfig& cfg, HttpHandler handler) : impl_(std::make_unique<Impl>()) {
    auto refuse = [](const char* field, double value, const char* rule) {
        throw std::invalid_argument(fmt::format("HttpEndpoint: {} = {:g}, expected {}", field, value, rule));
    };
    if (!(cfg.header_timeout_s > 0 && cfg.header_timeout_s <= 3600)) refuse("header_timeout_s", cfg.header_timeout_s, "in (0, 3600] s");
    if (!(cfg.idle_timeout_s > 0 && cfg.idle_timeout_s <= 3600)) refuse("idle_timeout_s", cfg.idle_timeout_s, "in (0, 3600] s");
    if (cfg.max_connections < 1) refuse("max_connections", cfg.max_connections, "at least 1");
    if (cfg.max_connections_per_address < 1) refuse("max_connections_per_address", cfg.max_connections_per_address, "at least 1");
    impl_->cfg = cfg;
    impl_->handler = std::move(handler);
    const std::string where = "TCP " + cfg.bind + ":" + std::to_string(cfg.port);
    asio::error_code ec;
    const asio::ip::address address = asio::ip::make_address(cfg.bind, ec);
    if (ec) throw std::runtime_error("cannot listen on " + where + ": bad address (" + ec.message() + ")");
    const tcp::endpoint ep(address, cfg.port);
    tcp::acceptor& a = impl_->acceptor;
    a.open(ep.protocol(), ec);
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);  // TIME_WAIT only; two listeners still conflict
    if (!ec) a.bind(ep, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error("cannot listen on " + where + ": " + ec.message());
    port_ = a.local_endpoint().port();
    impl_->accept();
    impl_->thread = std::thread([impl = impl_.get()] {
        for (;;) {
            try {
                impl->io.run();
                return;
            } catch (const std::exception& e) {
                log_warn("http endpoint: {}", e.what());  // and keep serving
            }
        }
    });
}

HttpEndpoint::~HttpEndpoint() { stop(); }

void HttpEndpoint::stop() {
    if (!impl_ || impl_->stopped || !impl_->thread.joinable()) return;
    asio::post(impl_->io, [impl = impl_.get()] {
        impl->stopped = true;
        asio::error_code ignored;
        impl->acceptor.close(ignored);
        impl->accept_retry.cancel();
        for (Impl::Connection* c : impl->connections) c->socket.close(ignored);
        impl->io.stop();
    });
    impl_->thread.join();
}

namespace {

// A chunked body ("1a\r\n...\r\n0\r\n\r\n", chunk extensions and trailers allowed): the
// decoded body once the last chunk has come, nothing while it is incomplete; `bad` when it is not
// chunked encoding.
std::optional<std::string> dechunk(std::string_view in, bool& bad) {
    std::string out;
    size_t i = 0;
    for (;;) {
        const size_t eol = in.find("\r\n", i);
        if (eol == std::string_view::npos) return std::nullopt;
        size_t n = 0, digits = 0;
        for (size_t j = i; j < eol && in[j] != ';'; ++j, ++digits) {
            const char c = in[j];
            const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (v < 0 || digits >= 8) {
                bad = true;
                return std::nullopt;
            }
            n = n * 16 + size_t(v);
        }
        if (digits == 0) {
            bad = true;
            return std::nullopt;
        }
        i = eol + 2;
        if (n == 0) {
            // Trailers (ignored), then the blank line.
            for (;;) {
                const size_t t = in.find("\r\n", i);
                if (t == std::string_view::npos) return std::nullopt;
                if (t == i) return out;
                i = t + 2;
            }
        }
        if (in.size() < i + n + 2) return std::nullopt;
        if (in.compare(i + n, 2, "\r\n") != 0) {
            bad = true;
            return std::nullopt;
        }
        out.append(in.substr(i, n));
        i += n + 2;
    }
}

struct HttpAnswer {
    int status = 0;
    std::string body;
    bool body_complete = false;  // Content-Length bytes, the last chunk, or (with neither) the peer's close
};

// One request ("Connection: close") to http://HOST:PORT/PATH and its answer, within timeout_s;
// at most max_bytes of answer (head and body) are read.
std::optional<HttpAnswer> http_request(std::string_view method, const std::string& host, uint16_t port, std::string_view path,
                                       std::string_view body, double timeout_s, size_t max_bytes, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<HttpAnswer> {
        if (error) *error = why;
        return std::nullopt;
    };
    asio::error_code ec;
    const asio::ip::address address = asio::ip::make_address(host, ec);
    if (ec) return fail("bad address " + host);
    asio::io_context io;
    tcp::socket socket(io);
    const std::string authority = (address.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
    std::string request = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (method == "POST") request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    else request += "Accept: application/json\r\n";
    request += "Connection: close\r\n\r\n" + std::string(body);
    std::string answer, why;
    std::array<char, 1024> buf{};
    bool done = false, eof = false;
    // The answer's body so far, and whether it is all there (at EOF: whatever came).
    auto body_of = [&](HttpAnswer* out) -> bool {
        const size_t end = answer.find("\r\n\r\n");
        if (end == std::string::npos) return false;
        const std::string_view head = std::string_view(answer).substr(0, end + 2), rest = std::string_view(answer).substr(end + 4);
        if (const auto te = header_value(head, "Transfer-Encoding"); te && ieq(*te, "chunked")) {
            bool bad = false;
            std::optional<std::string> b = dechunk(rest, bad);
            if (out && b) out->body = std::move(*b);
            return b.has_value();
        }
        if (const auto len = header_value(head, "Content-Length")) {
            size_t n = 0;
            if (len->empty() || len->size() > 12) return false;
            for (char c : *len) {
                if (c < '0' || c > '9') return false;
                n = n * 10 + size_t(c - '0');
            }
            if (rest.size() < n) return false;
            if (out) out->body = std::string(rest.substr(0, n));
            return true;
        }
        if (out) out->body = std::string(rest);
        return eof;  // neither: the body ends when the peer closes
    };
    std::function<void()> read_more = [&] {
        // Never more than max_bytes + 1 in all: one byte over is enough to know it is too long.
        const size_t room = std::min(buf.size(), max_bytes + 1 - answer.size());
        socket.async_read_some(asio::buffer(buf.data(), room), [&](const asio::error_code& e, size_t n) {
            answer.append(buf.data(), n);
            if (answer.size() > max_bytes) {
                why = "answer over " + std::to_string(max_bytes) + " bytes";
                return;
            }
            eof = e == asio::error::eof;
            if (eof || body_of(nullptr)) {
                done = true;
                return;
            }
            if (e) {
                why = "reading the answer: " + e.message();
                return;
            }
            read_more();
        });
    };
    socket.async_connect(tcp::endpoint(address, port), [&](const asio::error_code& e) {
        if (e) {
            why = "connect: " + e.message();
            return;
        }
        asio::async_write(socket, asio::buffer(request), [&](const asio::error_code& w, size_t) {
            if (w) why = "sending: " + w.message();
            else read_more();
        });
    });
    io.run_for(after(timeout_s));
    asio::error_code ignored;
    socket.close(ignored);
    if (!done) return fail(why.empty() ? fmt::format("no answer within {:g} s", timeout_s) : why);
    // "HTTP/1.x NNN ..."
    if (answer.size() < 12 || answer.compare(0, 7, "HTTP/1.") != 0 || answer[8] != ' ') return fail("not an HTTP answer");
    HttpAnswer a;
    for (size_t i = 9; i < 12; ++i) {
        if (answer[i] < '0' || answer[i] > '9') return fail("not an HTTP answer");
        a.status = a.status * 10 + (answer[i] - '0');
    }
    a.body_complete = body_of(&a);
    return a;
}

}  // namespace

std::optional<int> http_post(const std::string& host, uint16_t port, std::string_view path, std::string_view body,
                             double timeout_s, std::string* error) {
    const std::optional<HttpAnswer> a = http_request("POST", host, port, path, body, timeout_s, 65536, error);
    if (!a) return std::nullopt;
    return a->status;
}

std::optional<HttpGetResult> http_get(const std::string& host, uint16_t port, std::string_view path, double timeout_s,
                                      std::string* error, size_t max_bytes) {
    std::optional<HttpAnswer> a = http_request("GET", host, port, path, {}, timeout_s, max_bytes, error);
    if (!a) return std::nullopt;
    if (!a->body_complete) {
        if (error) *error = "the answer was cut short";
        return std::nullopt;
    }
    return HttpGetResult{a->status, std::move(a->body)};
}

}  // namespace ks::ops
