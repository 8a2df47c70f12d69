#include "programs/server/ops/agones_sdk.h"

#include <asio/ip/address.hpp>
#include <chrono>
#include <cstdlib>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <vector>

#include "programs/server/ops/http_endpoint.h"

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

namespace ks::ops {

namespace {

// A strict JSON reader (RFC 8259) that walks a document without building it: objects and arrays
// are visited member by member, values nobody asked for are checked and skipped. Any error makes
// every later call fail.
class JsonReader {
public:
    static constexpr int kMaxDepth = 64;

    explicit JsonReader(std::string_view text) : s_(text) {}

    bool ok() const { return ok_; }
    size_t offset() const { return i_; }

    // What comes next (after white space): '{', '[', '"', 't', 'f', 'n', or a number's first byte.
    char peek() {
        ws();
        return i_ < s_.size() ? s_[i_] : '\0';
    }
    bool at_end() {
        ws();
        return ok_ && i_ == s_.size();
    }

    bool string(std::string* out) {
        if (!eat('"')) return fail();
        std::string v;
        for (;;) {
            if (i_ >= s_.size()) return fail();
            const unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') break;
            if (c < 0x20) return fail();
            if (c != '\\') {
                v += char(c);
                continue;
            }
            if (i_ >= s_.size()) return fail();
            switch (s_[i_++]) {
                case '"': v += '"'; break;
                case '\\': v += '\\'; break;
                case '/': v += '/'; break;
                case 'b': v += '\b'; break;
                case 'f': v += '\f'; break;
                case 'n': v += '\n'; break;
                case 'r': v += '\r'; break;
                case 't': v += '\t'; break;
                case 'u': {
                    uint32_t cp = 0;
                    if (!hex4(cp)) return fail();
                    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail();  // a lone low surrogate
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        uint32_t lo = 0;
                        if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') return fail();
                        i_ += 2;
                        if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return fail();
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    utf8(v, cp);
                    break;
                }
                default: return fail();
            }
        }
        if (out) *out = std::move(v);
        return true;
    }

    // A number's text, as written (-?int frac? exp?).
    bool number(std::string_view* out) {
        ws();
        const size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-') ++i_;
        if (i_ < s_.size() && s_[i_] == '0') ++i_;
        else if (!digits()) return fail();
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (!digits()) return fail();
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (!digits()) return fail();
        }
        if (out) *out = s_.substr(start, i_ - start);
        return true;
    }

    bool null() { return word("null"); }

    // An object: member(key) reads (or skips) each member's value and returns whether it could.
    template <class F>
    bool object(int depth, F&& member) {
        if (depth > kMaxDepth || !eat('{')) return fail();
        if (eat('}')) return true;
        for (;;) {
            std::string key;
            if (!string(&key) || !eat(':') || !member(key) || !ok_) return fail();
            if (eat(',')) continue;
            return eat('}') || fail();
        }
    }

    // An array: element(index) reads (or skips) each element.
    template <class F>
    bool array(int depth, F&& element) {
        if (depth > kMaxDepth || !eat('[')) return fail();
        if (eat(']')) return true;
        for (size_t n = 0;; ++n) {
            if (!element(n) || !ok_) return fail();
            if (eat(',')) continue;
            return eat(']') || fail();
        }
    }

    // Any value, checked and dropped; `depth` is the depth of the value's container.
    bool skip(int depth) {
        switch (peek()) {
            case '{': return object(depth + 1, [&](const std::string&) { return skip(depth + 1); });
            case '[': return array(depth + 1, [&](size_t) { return skip(depth + 1); });
            case '"': return string(nullptr);
            case 't': return word("true");
            case 'f': return word("false");
            case 'n': return word("null");
            default: return number(nullptr);
        }
    }

private:
    bool fail() {
        ok_ = false;
        return false;
    }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    bool eat(char c) {
        if (!ok_) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool word(std::string_view w) {
        ws();
        if (!ok_ || s_.substr(i_, w.size()) != w) return fail();
        i_ += w.size();
        return true;
    }
    bool digits() {
        const size_t start = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        return i_ > start;
    }
    bool hex4(uint32_t& v) {
        if (i_ + 4 > s_.size()) return false;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[i_++];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return false;
            v = v * 16 + uint32_t(d);
        }
        return true;
    }
    static void utf8(std::string& out, uint32_t cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string_view s_;
    size_t i_ = 0;
    bool ok_ = true;
};

// "7042" (digits only, 1..65535) as a port.
std::optional<uint16_t> port_number(std::string_view digits) {
    if (digits.empty() || digits.size() > 5) return std::nullopt;
    unsigned v = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + unsigned(c - '0');
    }
    if (v < 1 || v > 65535) return std::nullopt;
    return uint16_t(v);
}

}  // namespace

std::optional<std::string> agones_public_address(std::string_view json, std::string* why) {
    auto fail = [&](std::string w) -> std::optional<std::string> {
        if (why) *why = std::move(w);
        return std::nullopt;
    };
    struct Port {
        std::string name;
        std::optional<uint16_t> port;
        bool bad = false;  // a port that is not one (kept: only the chosen one has to be right)
    };
    bool has_status = false;
    std::optional<std::string> address;  // null or absent: nothing
    std::vector<Port> ports;
    JsonReader r(json);
    // {"status": {"address": "...", "ports": [{"name": "...", "port": N}, ...], ...}, ...}: the
    // rest is checked and skipped. A member given twice: the last one counts.
    auto read_port = [&](size_t) {
        Port p;
        const bool ok = r.object(4, [&](const std::string& key) {
            if (key == "name") {
                if (r.peek() == 'n') return r.null();
                return r.string(&p.name);
            }
            if (key == "port") {
                p.port.reset();
                p.bad = false;
                if (r.peek() == 'n') return r.null();
                if (r.peek() == '"') {
                    std::string text;
                    if (!r.string(&text)) return false;
                    p.port = port_number(text);
                } else {
                    std::string_view number;
                    if (!r.number(&number)) return false;
                    p.port = port_number(number);
                }
                p.bad = !p.port;
                return true;
            }
            return r.skip(4);
        });
        if (ok) ports.push_back(std::move(p));
        return ok;
    };
    auto read_status = [&] {
        has_status = true;
        return r.object(2, [&](const std::string& key) {
            if (key == "address") {
                if (r.peek() == 'n') {
                    address.reset();
                    return r.null();
                }
                std::string a;
                if (!r.string(&a)) return false;
                address = std::move(a);
                return true;
            }
            if (key == "ports") {
                ports.clear();
                if (r.peek() == 'n') return r.null();
                return r.array(3, read_port);
            }
            return r.skip(2);
        });
    };
    const bool parsed = r.object(1, [&](const std::string& key) {
        if (key != "status") return r.skip(1);
        has_status = false;
        address.reset();
        ports.clear();
        if (r.peek() == 'n') return r.null();
        return read_status();
    });
    if (!parsed || !r.at_end()) return fail("not a JSON object (at byte " + std::to_string(r.offset()) + ")");
    if (!has_status) return fail("the GameServer has no status");
    if (!address || address->empty()) return fail("status.address is empty (the GameServer is not scheduled yet)");
    if (ports.empty()) return fail("status.ports is empty (the GameServer is not scheduled yet)");
    const Port* chosen = &ports.front();
    for (const Port& p : ports)
        if (p.name == "default") {
            chosen = &p;
            break;
        }
    if (!chosen->port) return fail("status.ports: port \"" + chosen->name + "\" has " + (chosen->bad ? "no valid" : "no") + " port number");
    asio::error_code ec;
    const asio::ip::address ip = asio::ip::make_address(*address, ec);
    // A DNS name is not an address a connect token can name; an IPv6 scope (fe80::1%eth0) is not reachable from outside.
    if (ec || (ip.is_v6() && ip.to_v6().scope_id() != 0))
        return fail("status.address \"" + *address + "\" is not an IP address");
    const std::string host = ip.is_v6() ? "[" + ip.to_string() + "]" : ip.to_string();
    return host + ":" + std::to_string(*chosen->port);
}

std::optional<std::string> fetch_agones_public_address(const AgonesConfig& cfg, double wait_s, std::string* why,
                                                       const std::function<bool()>& stop, double retry_every_s) {
    using clock = std::chrono::steady_clock;
    const auto seconds = [](double s) { return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s)); };
    const auto deadline = clock::now() + seconds(wait_s);
    std::string last;
    for (;;) {
        const auto attempt = clock::now();
        const std::optional<HttpGetResult> got = http_get(cfg.host, cfg.port, "/gameserver", cfg.timeout_s, &last);
        if (got && got->status == 200) {
            if (std::optional<std::string> a = agones_public_address(got->body, &last)) return a;
        } else if (got) {
            last = "HTTP " + std::to_string(got->status);
        }
        last = "GET /gameserver from " + cfg.host + ":" + std::to_string(cfg.port) + ": " + last;
        if (auto l = ops_log()) l->debug("agones: {}", last);
        const auto next = attempt + seconds(retry_every_s);
        if (next >= deadline) break;
        while (clock::now() < next) {
            if (stop && stop()) {
                if (why) *why = last + " (stopped)";
                return std::nullopt;
            }
            std::this_thread::sleep_for(std::min<clock::duration>(next - clock::now(), std::chrono::milliseconds(50)));
        }
    }
    if (why) *why = last;
    return std::nullopt;
}

}  // namespace ks::ops
