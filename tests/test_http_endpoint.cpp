// The operations HTTP endpoint (programs/server/ops/http_endpoint.h) with kinesync-server's routes
// (programs/server/ops/ops_http.h), over real TCP on loopback: answers, refusals, bad and slow peers that
// must not stop it; the tiny client and the Agones SDK calls made with it.
#include <gtest/gtest.h>

#include <array>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <poll.h>

#include "programs/server/ops/agones_sdk.h"
#include "programs/server/ops/http_endpoint.h"
#include "programs/server/ops/ops_http.h"
#include "tests/support/wait.h"

using namespace ks;
using namespace ks::ops;
using asio::ip::tcp;
using ks::test::kDeadlineS;
using ks::test::wait_until;

namespace {

// Sends `request` (as is) and returns everything the endpoint answers until it closes; "" when
// it closed without answering. Gives up after `timeout_s` (and says so in the answer).
std::string http_exchange(uint16_t port, const std::string& request, double timeout_s = kDeadlineS) {
    asio::io_context io;
    tcp::socket s(io);
    std::string answer;
    std::array<char, 4096> buf{};
    bool closed = false;
    std::function<void()> read = [&] {
        s.async_read_some(asio::buffer(buf), [&](const asio::error_code& ec, size_t n) {
            answer.append(buf.data(), n);
            if (ec) {
                closed = true;
                return;
            }
            read();
        });
    };
    s.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), [&](const asio::error_code& ec) {
        if (ec) {
            answer = "connect failed: " + ec.message();
            closed = true;
            return;
        }
        asio::async_write(s, asio::buffer(request), [&](const asio::error_code&, size_t) {});
        read();
    });
    io.run_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s)));
    if (!closed) answer += "<<timed out>>";
    return answer;
}

std::string get(uint16_t port, const std::string& path) { return http_exchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"); }

int status_of(const std::string& answer) {
    if (answer.size() < 12 || answer.compare(0, 9, "HTTP/1.1 ") != 0) return -1;
    return std::atoi(answer.substr(9, 3).c_str());
}

std::string body_of(const std::string& answer) {
    const size_t end = answer.find("\r\n\r\n");
    return end == std::string::npos ? "" : answer.substr(end + 4);
}

struct Probes {
    std::atomic<bool> healthy{true}, ready{true};
    OpsProbes probes() {
        OpsProbes p;
        p.unhealthy = [this] { return healthy ? std::string() : std::string("tick loop stalled"); };
        p.unready = [this] { return ready ? std::string() : std::string("draining"); };
        p.metrics = [] {
            MetricsSnapshot m;
            m.ticks = 42;
            return m;
        };
        return p;
    }
};

HttpEndpointConfig loopback(double idle_timeout_s = 2.0) {
    HttpEndpointConfig cfg;
    cfg.bind = "127.0.0.1";
    cfg.port = 0;
    cfg.idle_timeout_s = idle_timeout_s;
    return cfg;
}

// Connections the endpoint cuts only when a test makes it.
HttpEndpointConfig patient() {
    HttpEndpointConfig cfg = loopback(10 * kDeadlineS);
    cfg.header_timeout_s = 10 * kDeadlineS;
    return cfg;
}

// Whether the endpoint closed `s` (end of stream or reset, nothing sent) within `timeout_s`.
bool closed_within(tcp::socket& s, double timeout_s) {
    pollfd p{s.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, int(timeout_s * 1000)) != 1) return false;
    std::array<char, 64> buf{};
    asio::error_code ec;
    const size_t n = s.read_some(asio::buffer(buf), ec);
    return n == 0 && (ec == asio::error::eof || ec == asio::error::connection_reset);
}

// Whether `s` is still open, nothing received.
bool still_open(tcp::socket& s) {
    pollfd p{s.native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
}

}  // namespace

TEST(HttpEndpoint, ServesHealthReadinessAndMetrics) {
    Probes state;
    const OpsProbes probes = state.probes();
    HttpEndpoint ep(loopback(), [&](std::string_view m, std::string_view p) { return ops_response(m, p, probes); });
    ASSERT_NE(ep.port(), 0);

    std::string a = get(ep.port(), "/healthz");
    EXPECT_EQ(status_of(a), 200) << a;
    EXPECT_EQ(body_of(a), "ok\n");
    EXPECT_NE(a.find("Content-Length: 3\r\n"), std::string::npos) << a;
    EXPECT_NE(a.find("Connection: close\r\n"), std::string::npos) << a;

    a = get(ep.port(), "/readyz");
    EXPECT_EQ(status_of(a), 200) << a;
    a = get(ep.port(), "/metrics?x=1");  // the query string is not part of the path
    EXPECT_EQ(status_of(a), 200) << a;
    EXPECT_NE(a.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << a;
    EXPECT_NE(body_of(a).find("\nkinesync_ticks_total 42\n"), std::string::npos) << a;

    state.healthy = false;
    state.ready = false;
    a = get(ep.port(), "/healthz");
    EXPECT_EQ(status_of(a), 503) << a;
    EXPECT_EQ(body_of(a), "tick loop stalled\n");
    a = get(ep.port(), "/readyz");
    EXPECT_EQ(status_of(a), 503) << a;
    EXPECT_EQ(body_of(a), "draining\n");

    EXPECT_EQ(status_of(get(ep.port(), "/nope")), 404);
    EXPECT_EQ(status_of(get(ep.port(), "/")), 404);
    EXPECT_EQ(status_of(http_exchange(ep.port(), "POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n")), 405);
    // HEAD: the headers (with the body's length), no body.
    a = http_exchange(ep.port(), "HEAD /healthz HTTP/1.0\r\n\r\n");
    EXPECT_EQ(status_of(a), 503) << a;
    EXPECT_NE(a.find("Content-Length: 18\r\n"), std::string::npos) << a;
    EXPECT_EQ(body_of(a), "");
}

TEST(HttpEndpoint, BadRequestsGet400AndTheNextRequestIsServed) {
    Probes state;
    const OpsProbes probes = state.probes();
    HttpEndpoint ep(loopback(), [&](std::string_view m, std::string_view p) { return ops_response(m, p, probes); });
    const std::vector<std::string> bad = {
        "GARBAGE\r\n\r\n",
        "GET /healthz\r\n\r\n",                          // no version
        "GET healthz HTTP/1.1\r\n\r\n",                  // not a path
        "GET /healthz HTTP/2.0\r\n\r\n",
        "get /healthz HTTP/1.1\r\n\r\n",
        "GET /a b HTTP/1.1\r\n\r\n",
        std::string("GET /\x01 HTTP/1.1\r\n\r\n"),
        std::string(3, '\0') + "\r\n\r\n",
        std::string(5000, 'A'),                          // no end of head within 4 KB
        "GET /healthz HTTP/1.1\r\nX: " + std::string(8000, 'x') + "\r\n\r\n",  // head over 4 KB
    };
    for (const std::string& req : bad) {
        const std::string a = http_exchange(ep.port(), req);
        EXPECT_EQ(status_of(a), 400) << req.substr(0, 40) << " -> " << a;
        EXPECT_EQ(status_of(get(ep.port(), "/healthz")), 200) << "after " << req.substr(0, 40);
    }
    // A head of exactly 4 KB is still read.
    std::string req = "GET /healthz HTTP/1.1\r\nX: ";
    req += std::string(4096 - req.size() - 4, 'x') + "\r\n\r\n";
    ASSERT_EQ(req.size(), 4096u);
    EXPECT_EQ(status_of(http_exchange(ep.port(), req)), 200);
}

TEST(HttpEndpoint, SlowAndSilentPeersAreCutOffWithoutBlockingOthers) {
    Probes state;
    const OpsProbes probes = state.probes();
    asio::io_context io;
    auto peers = [&](const HttpEndpoint& ep, tcp::socket& silent, tcp::socket& half) {
        silent.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
        half.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
        asio::write(half, asio::buffer(std::string("GET /healthz HTTP/1.1\r\n")));
    };
    {
        // Two peers that connect and say nothing (or half a request) stay open meanwhile...
        HttpEndpoint ep(patient(), [&](std::string_view m, std::string_view p) { return ops_response(m, p, probes); });
        tcp::socket silent(io), half(io);
        peers(ep, silent, half);
        // ...while others are served.
        EXPECT_EQ(status_of(get(ep.port(), "/healthz")), 200);
        EXPECT_TRUE(still_open(silent) && still_open(half)) << "served while they held their connections";
    }
    // And they are closed after the idle timeout (0.3 s), with nothing sent.
    HttpEndpoint ep(loopback(0.3), [&](std::string_view m, std::string_view p) { return ops_response(m, p, probes); });
    tcp::socket silent(io), half(io);
    const auto t0 = std::chrono::steady_clock::now();
    peers(ep, silent, half);
    EXPECT_TRUE(closed_within(silent, kDeadlineS));
    EXPECT_TRUE(closed_within(half, kDeadlineS));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300)) << "not before the timeout";
}

TEST(HttpEndpoint, ANewcomerEvictsTheOldestPeerStillSendingItsHeadWhenEverySlotIsTaken) {
    HttpEndpointConfig cfg = patient();  // only a newcomer closes a connection here
    cfg.max_connections = 2;
    HttpEndpoint ep(cfg, [](std::string_view, std::string_view) { return HttpResponse{200, "text/plain", "hi\n"}; });
    asio::io_context io;
    tcp::socket a(io), b(io);
    a.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both accepted, both silent
    EXPECT_EQ(status_of(get(ep.port(), "/")), 200);                // a third is served...
    EXPECT_TRUE(closed_within(a, kDeadlineS));                     // ...in the oldest one's place
    EXPECT_TRUE(still_open(b));
}

TEST(HttpEndpoint, SlowlorisHoldingEverySlotStillLetsReadinessThrough) {
    // 32 connections (every slot, from many "addresses" as far as the limit goes) each trickling a
    // head that never ends, and no timeout to free their slots: /readyz and /healthz still answer.
    Probes state;
    const OpsProbes probes = state.probes();
    HttpEndpointConfig cfg = patient();
    cfg.max_connections_per_address = 1000;  // loopback stands for many attackers here
    HttpEndpoint ep(cfg, [&](std::string_view m, std::string_view p) { return ops_response(m, p, probes); });
    asio::io_context io;
    std::vector<std::unique_ptr<tcp::socket>> slow;
    for (int i = 0; i < cfg.max_connections; ++i) {
        slow.push_back(std::make_unique<tcp::socket>(io));
        slow.back()->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
        asio::write(*slow.back(), asio::buffer(std::string("GET /healthz HTTP/1.1\r\nX-a: ")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const char* path : {"/readyz", "/healthz", "/readyz"}) EXPECT_EQ(status_of(get(ep.port(), path)), 200) << path;
}

TEST(HttpEndpoint, OneAddressHoldsAtMostItsShareAndHeadsHaveADeadline) {
    HttpEndpointConfig cfg = loopback(10 * kDeadlineS);
    cfg.max_connections_per_address = 3;
    cfg.header_timeout_s = 0.3;
    HttpEndpoint ep(cfg, [](std::string_view, std::string_view) { return HttpResponse{200, "text/plain", "hi\n"}; });
    asio::io_context io;
    std::vector<std::unique_ptr<tcp::socket>> held;
    for (int i = 0; i < 5; ++i) {
        held.push_back(std::make_unique<tcp::socket>(io));
        held.back()->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep.port()));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // The 4th and 5th are closed at once; the first three when their heads are late (0.3 s, long
    // before the idle timeout).
    for (size_t i = 0; i < held.size(); ++i) EXPECT_TRUE(closed_within(*held[i], kDeadlineS)) << i;
    EXPECT_EQ(status_of(get(ep.port(), "/")), 200);
}

TEST(HttpEndpoint, RefusesANonsenseConfigurationNamingTheField) {
    auto handler = [](std::string_view, std::string_view) { return HttpResponse{}; };
    HttpEndpointConfig cfg = loopback();
    cfg.header_timeout_s = 0;
    try {
        HttpEndpoint ep(cfg, handler);
        ADD_FAILURE() << "a zero head deadline was taken";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("header_timeout_s"), std::string::npos) << e.what();
    }
    cfg = loopback();
    cfg.max_connections_per_address = 0;
    EXPECT_THROW(HttpEndpoint(cfg, handler), std::invalid_argument);
}

TEST(HttpEndpoint, AThrowingHandlerGives500) {
    HttpEndpoint ep(loopback(), [](std::string_view, std::string_view p) -> HttpResponse {
        if (p == "/boom") throw std::runtime_error("boom");
        return {200, "text/plain", "fine\n"};
    });
    EXPECT_EQ(status_of(get(ep.port(), "/boom")), 500);
    EXPECT_EQ(body_of(get(ep.port(), "/")), "fine\n");
}

TEST(HttpEndpoint, RefusesABusyPortOrABadAddressByName) {
    HttpEndpoint first(loopback(), [](std::string_view, std::string_view) { return HttpResponse{}; });
    HttpEndpointConfig cfg = loopback();
    cfg.port = first.port();
    try {
        HttpEndpoint second(cfg, [](std::string_view, std::string_view) { return HttpResponse{}; });
        FAIL() << "a second endpoint on a busy port";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot listen on TCP 127.0.0.1:" + std::to_string(first.port())), std::string::npos)
            << e.what();
    }
    cfg.bind = "not-an-address";
    EXPECT_THROW(HttpEndpoint(cfg, [](std::string_view, std::string_view) { return HttpResponse{}; }), std::runtime_error);
}

TEST(HttpEndpoint, StopsPromptlyWithConnectionsOpen) {
    auto ep = std::make_unique<HttpEndpoint>(patient(), [](std::string_view, std::string_view) { return HttpResponse{}; });
    asio::io_context io;
    tcp::socket idle(io);
    idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), ep->port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto t0 = std::chrono::steady_clock::now();
    ep->stop();
    ep->stop();  // idempotent
    ep.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::duration<double>(kDeadlineS)) << "not after the connection's timeout";
    std::array<char, 8> buf{};
    asio::error_code ec;
    EXPECT_EQ(idle.read_some(asio::buffer(buf), ec), 0u);
    EXPECT_TRUE(ec) << "the idle connection was closed";
}

TEST(HttpEndpoint, ParsesTheRequestLine) {
    auto r = parse_http_request_line("GET /metrics?name=x HTTP/1.1\r\nHost: y\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->method, "GET");
    EXPECT_EQ(r->path, "/metrics");
    r = parse_http_request_line("HEAD /a#frag HTTP/1.0\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->path, "/a");
    EXPECT_FALSE(parse_http_request_line(""));
    EXPECT_FALSE(parse_http_request_line("GET  /a HTTP/1.1\r\n"));
    EXPECT_FALSE(parse_http_request_line("GET /a HTTP/1.1 x\r\n"));
    EXPECT_FALSE(parse_http_request_line("G3T /a HTTP/1.1\r\n"));
}

TEST(HttpClient, PostsAndReadsTheStatus) {
    std::mutex m;
    std::vector<std::string> seen;
    HttpEndpoint ep(loopback(), [&](std::string_view method, std::string_view path) {
        std::lock_guard<std::mutex> lock(m);
        seen.push_back(std::string(method) + " " + std::string(path));
        return path == "/missing" ? HttpResponse{404, "text/plain", "no\n"} : HttpResponse{200, "application/json", "{}"};
    });
    std::string why;
    EXPECT_EQ(http_post("127.0.0.1", ep.port(), "/ready", "{}", 2.0, &why), 200) << why;
    EXPECT_EQ(http_post("127.0.0.1", ep.port(), "/missing", "{}", 2.0, &why), 404) << why;
    {
        std::lock_guard<std::mutex> lock(m);
        EXPECT_EQ(seen, (std::vector<std::string>{"POST /ready", "POST /missing"}));
    }
    // Nobody listening: the connection's error, not the timeout.
    const uint16_t port = ep.port();
    ep.stop();
    EXPECT_FALSE(http_post("127.0.0.1", port, "/ready", "{}", kDeadlineS, &why));
    EXPECT_NE(why.find("connect"), std::string::npos) << why;
    EXPECT_EQ(why.find("no answer within"), std::string::npos) << why;
    // A peer that accepts and never answers: the timeout.
    asio::io_context io;
    tcp::acceptor mute(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    EXPECT_FALSE(http_post("127.0.0.1", mute.local_endpoint().port(), "/ready", "{}", 0.3, &why));
    EXPECT_NE(why.find("no answer within 0.3 s"), std::string::npos) << why;
}

namespace {

// A peer on loopback that answers every request with `pieces` written as they are (20 ms apart),
// then ends its side and waits for the client to close: for answers HttpEndpoint never gives
// (chunked, without a length, cut short, too long). Keeps the last request head.
class RawPeer {
public:
    explicit RawPeer(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~RawPeer() {
        io_.stop();
        thread_.join();
    }
    uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::string request() {
        std::lock_guard<std::mutex> lock(m_);
        return request_;
    }

private:
    void accept() {
        acceptor_.async_accept([this](const asio::error_code& ec, tcp::socket s) {
            if (ec) return;
            serve(s);  // one at a time, on the I/O thread
            accept();
        });
    }
    void serve(tcp::socket& s) {
        asio::error_code ec;
        std::string head;
        const size_t n = asio::read_until(s, asio::dynamic_buffer(head), "\r\n\r\n", ec);
        if (ec) return;
        {
            std::lock_guard<std::mutex> lock(m_);
            request_ = head.substr(0, n);
        }
        for (size_t i = 0; i < pieces_.size() && !ec; ++i) {
            if (i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            asio::write(s, asio::buffer(pieces_[i]), ec);
        }
        s.shutdown(tcp::socket::shutdown_send, ec);
        std::array<char, 256> sink{};
        while (!ec) s.read_some(asio::buffer(sink), ec);  // until the client closes
    }

    std::vector<std::string> pieces_;
    asio::io_context io_;
    tcp::acceptor acceptor_{io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
    std::thread thread_;
    std::mutex m_;
    std::string request_;
};

}  // namespace

TEST(HttpClient, GetsTheStatusAndBody) {
    HttpEndpoint ep(loopback(), [&](std::string_view method, std::string_view path) {
        if (method != "GET") return HttpResponse{405, "text/plain", "no\n"};
        return path == "/gameserver" ? HttpResponse{200, "application/json", R"({"status":{}})"} : HttpResponse{404, "text/plain", "none\n"};
    });
    std::string why;
    auto r = http_get("127.0.0.1", ep.port(), "/gameserver", 2.0, &why);
    ASSERT_TRUE(r) << why;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, R"({"status":{}})");
    r = http_get("127.0.0.1", ep.port(), "/other", 2.0, &why);
    ASSERT_TRUE(r) << why;
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(r->body, "none\n");
}

TEST(HttpClient, GetReadsChunkedAndUnsizedBodiesAndRefusesCutOrLongOnes) {
    std::string why;
    {
        // Chunked (as Go's net/http sends a body it did not know the length of), split mid-chunk,
        // with a chunk extension and a trailer.
        RawPeer peer({"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{\"sta",
                      "tus\"\r\nA;ext=1\r\n:{\"x\":[1]}\r\n1\r\n}\r\n0\r\nX-Trailer: y\r\n\r\n"});
        const auto r = http_get("127.0.0.1", peer.port(), "/gameserver", 2.0, &why);
        ASSERT_TRUE(r) << why;
        EXPECT_EQ(r->status, 200);
        EXPECT_EQ(r->body, R"({"status":{"x":[1]}})");
        const std::string req = peer.request();
        EXPECT_EQ(req.substr(0, req.find("\r\n")), "GET /gameserver HTTP/1.1") << req;
        EXPECT_NE(req.find("\r\nHost: 127.0.0.1:" + std::to_string(peer.port()) + "\r\n"), std::string::npos) << req;
        EXPECT_NE(req.find("\r\nConnection: close\r\n"), std::string::npos) << req;
    }
    {
        // Neither a length nor chunks: the body ends when the peer closes.
        RawPeer peer({"HTTP/1.0 200 OK\r\n\r\n{\"a\":", "1}"});
        const auto r = http_get("127.0.0.1", peer.port(), "/gameserver", 2.0, &why);
        ASSERT_TRUE(r) << why;
        EXPECT_EQ(r->body, "{\"a\":1}");
    }
    {
        // Fewer bytes than Content-Length, or a chunked body without its last chunk: cut short.
        RawPeer a({"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\":"});
        EXPECT_FALSE(http_get("127.0.0.1", a.port(), "/gameserver", 2.0, &why));
        EXPECT_NE(why.find("cut short"), std::string::npos) << why;
        RawPeer b({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"});
        EXPECT_FALSE(http_get("127.0.0.1", b.port(), "/gameserver", 2.0, &why));
        EXPECT_NE(why.find("cut short"), std::string::npos) << why;
        RawPeer c({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"});
        EXPECT_FALSE(http_get("127.0.0.1", c.port(), "/gameserver", 2.0, &why));
    }
    {
        // Over 64 KiB: refused after reading one byte more, whatever the peer would still send.
        RawPeer peer({"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n", std::string(200000, 'x')});
        EXPECT_FALSE(http_get("127.0.0.1", peer.port(), "/gameserver", 2.0, &why));
        EXPECT_NE(why.find("answer over 65536 bytes"), std::string::npos) << why;
        // A smaller limit, and an answer just within it.
        RawPeer small({"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd"});
        const size_t size = std::string("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd").size();
        EXPECT_TRUE(http_get("127.0.0.1", small.port(), "/", 2.0, &why, size)) << why;
        EXPECT_FALSE(http_get("127.0.0.1", small.port(), "/", 2.0, &why, size - 1));
    }
    {
        // Not HTTP; and a peer that never answers: the timeout.
        RawPeer peer({"SSH-2.0-OpenSSH\r\n"});
        EXPECT_FALSE(http_get("127.0.0.1", peer.port(), "/gameserver", 2.0, &why));
        EXPECT_NE(why.find("not an HTTP answer"), std::string::npos) << why;
        asio::io_context io;
        tcp::acceptor mute(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_FALSE(http_get("127.0.0.1", mute.local_endpoint().port(), "/gameserver", 0.3, &why));
        EXPECT_NE(why.find("no answer within 0.3 s"), std::string::npos) << why;
        EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300)) << "the timeout waited for";
    }
}

TEST(AgonesSdk, ReadyThenHealthPingsThenShutdown) {
    std::mutex m;
    std::vector<std::string> seen;
    HttpEndpoint sidecar(loopback(), [&](std::string_view method, std::string_view path) {
        std::lock_guard<std::mutex> lock(m);
        seen.push_back(std::string(method) + " " + std::string(path));
        return HttpResponse{200, "application/json", "{}"};
    });
    std::atomic<bool> healthy{true};
    std::atomic<int> unhealthy_periods{0};  // periods the SDK found the server unhealthy
    AgonesConfig cfg;
    cfg.port = sidecar.port();
    cfg.health_every_s = 0.05;
    AgonesSdk sdk(cfg, [&] {
        if (healthy) return true;
        ++unhealthy_periods;
        return false;
    });
    wait_until([&] { return sdk.health_sent() >= 3; });
    EXPECT_TRUE(sdk.ready_sent());
    EXPECT_GE(sdk.health_sent(), 3u);
    // Unhealthy: the pings stop. Once the SDK has seen it, a ping sent before has been counted.
    healthy = false;
    wait_until([&] { return unhealthy_periods >= 1; });
    const uint64_t pings = sdk.health_sent();
    wait_until([&] { return unhealthy_periods >= 4; });
    EXPECT_EQ(sdk.health_sent(), pings);
    EXPECT_TRUE(sdk.shutdown());
    std::lock_guard<std::mutex> lock(m);
    ASSERT_GE(seen.size(), 5u);
    EXPECT_EQ(seen.front(), "POST /ready");
    EXPECT_EQ(seen[1], "POST /health");
    EXPECT_EQ(seen.back(), "POST /shutdown");
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "POST /ready"), 1);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "POST /shutdown"), 1);
}

TEST(AgonesSdk, ReadyIsRetriedUntilTheSidecarAnswers) {
    // The sidecar may start after the game server: /ready fails, then succeeds once it is up.
    uint16_t port = 0;
    {
        HttpEndpoint probe(loopback(), [](std::string_view, std::string_view) { return HttpResponse{}; });
        port = probe.port();
    }
    AgonesConfig cfg;
    cfg.port = port;
    cfg.health_every_s = 0.05;
    cfg.timeout_s = 0.2;
    AgonesSdk sdk(cfg, [] { return true; });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_FALSE(sdk.ready_sent());
    HttpEndpointConfig late = loopback();
    late.port = port;
    HttpEndpoint sidecar(late, [](std::string_view, std::string_view) { return HttpResponse{200, "application/json", "{}"}; });
    EXPECT_TRUE(wait_until([&] { return sdk.ready_sent(); }));
}

TEST(AgonesSdk, PortComesFromTheEnvironment) {
    unsetenv("AGONES_SDK_HTTP_PORT");
    EXPECT_FALSE(AgonesSdk::port_from_env());
    setenv("AGONES_SDK_HTTP_PORT", "9358", 1);
    EXPECT_EQ(AgonesSdk::port_from_env(), 9358);
    for (const char* bad : {"0", "65536", "93x", "-1", "abc"}) {
        setenv("AGONES_SDK_HTTP_PORT", bad, 1);
        EXPECT_THROW(AgonesSdk::port_from_env(), std::invalid_argument) << bad;
    }
    unsetenv("AGONES_SDK_HTTP_PORT");
}
