// The address clients reach an Agones GameServer at: agones_public_address() on the JSON of the
// SDK's GET /gameserver (realistic documents, other orders, missing or unscheduled status, IPv6,
// malformed JSON), and fetch_agones_public_address() against a fake sidecar on loopback (late,
// not yet scheduled, never answering, stopped).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "programs/server/ops/agones_sdk.h"
#include "programs/server/ops/http_endpoint.h"
#include "tests/support/wait.h"

using namespace ks::ops;
using ks::test::kDeadlineS;

namespace {

// What the SDK sidecar answers (grpc-gateway, proto field names, unpopulated fields included) for
// a GameServer with a Dynamic "default" port and a second one. The annotation holds a
// "status" with another address inside a string, and a label is called "status": neither counts.
const char* kGameServer = R"json({
  "object_meta": {
    "name": "kinesync-7xk2p",
    "namespace": "default",
    "uid": "2b8f6c1e-95fe-11ea-ab97-0242ac110002",
    "resource_version": "1178858",
    "generation": "2",
    "creation_timestamp": "1718000000",
    "deletion_timestamp": "0",
    "annotations": {
      "agones.dev/sdk-version": "1.41.0",
      "kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"GameServer\",\"status\":{\"address\":\"10.9.9.9\",\"ports\":[{\"name\":\"default\",\"port\":1}]}}\n"
    },
    "labels": {"agones.dev/fleet": "kinesync", "status": "decoy"}
  },
  "spec": {
    "health": {"disabled": false, "period_seconds": 5, "failure_threshold": 3, "initial_delay_seconds": 10}
  },
  "status": {
    "state": "Ready",
    "address": "203.0.113.5",
    "addresses": [
      {"type": "InternalIP", "address": "10.128.0.7"},
      {"type": "ExternalIP", "address": "203.0.113.5"},
      {"type": "Hostname", "address": "gke-pool-1-node-7"}
    ],
    "ports": [
      {"name": "metrics", "port": 7123},
      {"name": "default", "port": 7042}
    ],
    "players": null,
    "counters": {},
    "lists": {}
  }
})json";

std::optional<std::string> parse(const std::string& json, std::string* why = nullptr) { return agones_public_address(json, why); }

HttpEndpointConfig loopback() {
    HttpEndpointConfig cfg;
    cfg.bind = "127.0.0.1";
    cfg.port = 0;
    return cfg;
}

std::string scheduled(const std::string& address, int port) {
    return R"({"object_meta":{"name":"gs"},"status":{"state":"Scheduled","address":")" + address +
           R"(","ports":[{"name":"default","port":)" + std::to_string(port) + "}]}}";
}

}  // namespace

TEST(AgonesAddress, ARealisticGameServer) {
    std::string why;
    EXPECT_EQ(parse(kGameServer, &why), "203.0.113.5:7042") << why;
}

TEST(AgonesAddress, KeyOrderWhiteSpaceAndPortChoice) {
    // status first, ports before address, "default" first, no white space at all.
    EXPECT_EQ(parse(R"({"status":{"ports":[{"port":7042,"name":"default"},{"name":"b","port":7001}],"address":"198.51.100.1"},"object_meta":{}})"),
              "198.51.100.1:7042");
    // White space of every kind between every token.
    EXPECT_EQ(parse(" \r\n\t{ \"status\" :\n{\t\"address\" : \"198.51.100.1\" ,\r\n \"ports\" : [ { \"name\" : \"default\" , \"port\" : 7042 } ] } }\n "),
              "198.51.100.1:7042");
    // No port named "default": the first one.
    EXPECT_EQ(parse(R"({"status":{"address":"198.51.100.1","ports":[{"name":"game","port":7500},{"name":"query","port":7501}]}})"),
              "198.51.100.1:7500");
    // No names at all, or null ones.
    EXPECT_EQ(parse(R"({"status":{"address":"198.51.100.1","ports":[{"port":7600},{"name":null,"port":7601}]}})"), "198.51.100.1:7600");
    // A port as a string of digits (proto3 JSON allows it).
    EXPECT_EQ(parse(R"({"status":{"address":"198.51.100.1","ports":[{"name":"default","port":"7042"}]}})"), "198.51.100.1:7042");
    // Escapes in strings, a member given twice (the last counts), a port entry with more in it.
    EXPECT_EQ(parse(R"({"status":{"address":"1.1.1.1","address":"\u0031\u0039\u0038.51.100.1","ports":[{"name":"def\u0061ult","port":7042,"protocol":"UDP","x":[1,{"y":[]}]}]}})"),
              "198.51.100.1:7042");
    // The chosen port must be right; another one need not be.
    EXPECT_EQ(parse(R"({"status":{"address":"198.51.100.1","ports":[{"name":"odd","port":-1},{"name":"default","port":7042}]}})"),
              "198.51.100.1:7042");
}

TEST(AgonesAddress, IPv6IsBracketed) {
    EXPECT_EQ(parse(scheduled("2001:db8::5", 7042)), "[2001:db8::5]:7042");
    EXPECT_EQ(parse(scheduled("2001:DB8:0:0::5", 7042)), "[2001:db8::5]:7042");  // written canonically
    EXPECT_EQ(parse(scheduled("::ffff:203.0.113.5", 7042)), "[::ffff:203.0.113.5]:7042");
    std::string why;
    EXPECT_FALSE(parse(scheduled("fe80::1%eth0", 7042), &why));  // a link-local scope is nobody's public address
    EXPECT_NE(why.find("not an IP address"), std::string::npos) << why;
}

TEST(AgonesAddress, MissingOrUnscheduledStatusSaysWhat) {
    std::string why;
    EXPECT_FALSE(parse(R"({"object_meta":{"name":"gs"},"spec":{}})", &why));
    EXPECT_NE(why.find("no status"), std::string::npos) << why;
    EXPECT_FALSE(parse(R"({"status":null})", &why));
    EXPECT_NE(why.find("no status"), std::string::npos) << why;
    // A "status" nested somewhere else is not the GameServer's.
    EXPECT_FALSE(parse(R"({"object_meta":{"labels":{"x":{"status":{"address":"1.2.3.4","ports":[{"name":"default","port":7}]}}}}})", &why));
    EXPECT_NE(why.find("no status"), std::string::npos) << why;
    // Before the pod is scheduled: an empty address, no ports.
    EXPECT_FALSE(parse(R"({"status":{"state":"Creating","address":"","ports":[]}})", &why));
    EXPECT_NE(why.find("status.address is empty"), std::string::npos) << why;
    EXPECT_FALSE(parse(R"({"status":{"state":"Creating","address":null,"ports":null}})", &why));
    EXPECT_NE(why.find("status.address is empty"), std::string::npos) << why;
    EXPECT_FALSE(parse(R"({"status":{"address":"203.0.113.5","ports":[]}})", &why));
    EXPECT_NE(why.find("status.ports is empty"), std::string::npos) << why;
    EXPECT_FALSE(parse(R"({"status":{"address":"203.0.113.5"}})", &why));
    EXPECT_NE(why.find("status.ports is empty"), std::string::npos) << why;
}

TEST(AgonesAddress, WrongAddressesAndPortsAreRefused) {
    std::string why;
    EXPECT_FALSE(parse(scheduled("gke-pool-1-node-7.example.com", 7042), &why));  // a DNS name: not what tokens name
    EXPECT_NE(why.find("\"gke-pool-1-node-7.example.com\" is not an IP address"), std::string::npos) << why;
    for (const char* addr : {"203.0.113", "203.0.113.5:7042", "[2001:db8::5]", " 203.0.113.5", "203.0.113.256"})
        EXPECT_FALSE(parse(scheduled(addr, 7042))) << addr;
    for (const char* port : {"0", "65536", "-1", "7042.0", "7e3", "\"\"", "\"70x\"", "\"-5\"", "true", "{}", "[7042]", "null"}) {
        const std::string doc = std::string(R"({"status":{"address":"203.0.113.5","ports":[{"name":"default","port":)") + port + "}]}}";
        EXPECT_FALSE(parse(doc, &why)) << port;
    }
    EXPECT_TRUE(parse(scheduled("203.0.113.5", 65535)));
    EXPECT_TRUE(parse(scheduled("203.0.113.5", 1)));
    EXPECT_FALSE(parse(R"({"status":{"address":7,"ports":[{"name":"default","port":7042}]}})"));
    EXPECT_FALSE(parse(R"({"status":{"address":"203.0.113.5","ports":{"name":"default","port":7042}}})"));
    EXPECT_FALSE(parse(R"({"status":{"address":"203.0.113.5","ports":["default:7042"]}})"));
    EXPECT_FALSE(parse(R"({"status":"Ready"})"));
}

TEST(AgonesAddress, MalformedJsonIsRefused) {
    const std::string good = scheduled("203.0.113.5", 7042);
    ASSERT_TRUE(parse(good));
    std::vector<std::string> bad = {
        "", " ", "null", "[]", "\"x\"", "{", "}", "{}}", "{\"status\"}", "{\"status\":}",
        good + "x", good + "{}", good.substr(0, good.size() - 1),
        R"({"status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042},]}})",  // trailing comma
        R"({"status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042}],}})",
        R"({'status':{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",  // single quotes
        R"({status:{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",
        R"({"status":{"address":"203.0.113.5","ports":[{"name":"default","port":07042}]}})",  // leading zero
        R"({"x":tru,"status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",
        R"({"x":"\q","status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",  // bad escape
        R"({"x":"\ud800","status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",  // lone surrogate
        R"({"x":"\u12","status":{"address":"203.0.113.5","ports":[{"name":"default","port":7042}]}})",
        std::string("{\"x\":\"a\nb\",") + good.substr(1),  // a raw control character in a string
        std::string("{\"x\":1,") + good.substr(1, 20),     // cut short
    };
    // Nesting past 64 levels is refused rather than recursed into; up to that is read.
    bad.push_back("{\"x\":" + std::string(100, '[') + std::string(100, ']') + "," + good.substr(1));
    bad.push_back("{\"x\":" + std::string(100000, '[') + "," + good.substr(1));
    for (const std::string& doc : bad) {
        std::string why;
        EXPECT_FALSE(parse(doc, &why)) << doc.substr(0, 120);
        EXPECT_NE(why.find("not a JSON object"), std::string::npos) << doc.substr(0, 120) << " -> " << why;
    }
    EXPECT_TRUE(parse("{\"x\":" + std::string(60, '[') + std::string(60, ']') + "," + good.substr(1)));
    EXPECT_TRUE(parse(R"({"x":"\ud83d\ude00 \" \\ \/ \b\f\n\r\t","y":[-0.5e+3,1E2,0,true,false,null],)" + good.substr(1)));
}

TEST(AgonesAddress, FetchedFromTheSidecarOnceScheduled) {
    // The first answers come before the pod is scheduled (an empty address), then one that is not
    // 200, then the real thing.
    std::atomic<int> calls{0};
    HttpEndpoint sidecar(loopback(), [&](std::string_view method, std::string_view path) {
        if (method != "GET" || path != "/gameserver") return HttpResponse{404, "text/plain", "no\n"};
        const int n = ++calls;
        if (n <= 2) return HttpResponse{200, "application/json", R"({"status":{"state":"Creating","address":"","ports":[]}})"};
        if (n == 3) return HttpResponse{503, "application/json", "{}"};
        return HttpResponse{200, "application/json", kGameServer};
    });
    AgonesConfig cfg;
    cfg.port = sidecar.port();
    std::string why;
    EXPECT_EQ(fetch_agones_public_address(cfg, kDeadlineS, &why, {}, 0.05), "203.0.113.5:7042") << why;
    EXPECT_EQ(calls, 4);
}

TEST(AgonesAddress, FetchWaitsForALateSidecar) {
    uint16_t port = 0;
    {
        HttpEndpoint probe(loopback(), [](std::string_view, std::string_view) { return HttpResponse{}; });
        port = probe.port();
    }
    std::atomic<bool> done{false};
    std::thread late([port, &done] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        HttpEndpointConfig c = loopback();
        c.port = port;
        HttpEndpoint sidecar(c, [](std::string_view, std::string_view) { return HttpResponse{200, "application/json", scheduled("2001:db8::7", 7300)}; });
        ks::test::wait_until([&] { return done.load(); }, kDeadlineS, std::chrono::milliseconds(10));
    });
    AgonesConfig cfg;
    cfg.port = port;
    cfg.timeout_s = 0.2;
    std::string why;
    EXPECT_EQ(fetch_agones_public_address(cfg, kDeadlineS, &why, {}, 0.05), "[2001:db8::7]:7300") << why;
    done = true;
    late.join();
}

TEST(AgonesAddress, FetchGivesUpInTimeSayingWhy) {
    HttpEndpoint sidecar(loopback(), [](std::string_view, std::string_view) {
        return HttpResponse{200, "application/json", R"({"status":{"state":"Scheduled","address":"node-7.example.com","ports":[{"name":"default","port":7042}]}})"};
    });
    AgonesConfig cfg;
    cfg.port = sidecar.port();
    cfg.timeout_s = 0.2;
    std::string why;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(fetch_agones_public_address(cfg, 0.4, &why, {}, 0.05));
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, std::chrono::milliseconds(300)) << "not before its time";
    EXPECT_NE(why.find("GET /gameserver from 127.0.0.1:" + std::to_string(cfg.port)), std::string::npos) << why;
    EXPECT_NE(why.find("\"node-7.example.com\" is not an IP address"), std::string::npos) << why;

    // Nobody there at all: the connection error. And stop() cuts the wait short.
    const uint16_t port = sidecar.port();
    sidecar.stop();
    t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(fetch_agones_public_address(cfg, 10 * kDeadlineS, &why, [&] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(200); }));
    took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, std::chrono::duration<double>(kDeadlineS)) << "stopped, not waited out";
    EXPECT_NE(why.find("(stopped)"), std::string::npos) << why;
    EXPECT_NE(why.find("connect"), std::string::npos) << why;
    EXPECT_NE(why.find(std::to_string(port)), std::string::npos) << why;
}
