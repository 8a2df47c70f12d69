#include "common/src/net/connect_token.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/src/net/protocol.h"
#include "common/src/platform/files.h"
#include "common/src/platform/inet.h"
#include "schema/token_generated.h"

namespace ks::net {

namespace tok = ::kinesync::token;

namespace {

// Associated data of the private token's seal: protocol id, version, expiry (little-endian), so a
// token cannot be moved to another protocol or have its expiry extended.
std::array<uint8_t, 14> token_ad(uint64_t expire_s) {
    std::array<uint8_t, 14> ad{};
    for (int i = 0; i < 4; ++i) ad[size_t(i)] = uint8_t(kProtocolId >> (8 * i));
    ad[4] = uint8_t(kProtocolVersion);
    ad[5] = uint8_t(kProtocolVersion >> 8);
    for (int i = 0; i < 8; ++i) ad[6 + size_t(i)] = uint8_t(expire_s >> (8 * i));
    return ad;
}

bool copy_key(const flatbuffers::Vector<uint8_t>* v, Key& out) {
    if (!v || v->size() != kKeyBytes) return false;
    std::copy(v->begin(), v->end(), out.begin());
    return true;
}

bool read_servers(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v, std::vector<std::string>& out) {
    if (!v || v->size() == 0 || v->size() > kMaxTokenServers) return false;
    for (const flatbuffers::String* s : *v) {
        if (!s || s->size() > 64) return false;
        out.push_back(s->str());
    }
    return true;
}

}  // namespace

std::string canonical_address(std::string_view text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 >= text.size()) return {};
    std::string host(text.substr(0, colon));
    const std::string_view port_text = text.substr(colon + 1);
    unsigned port = 0;
    for (char c : port_text) {
        if (c < '0' || c > '9' || port > 65535) return {};
        port = port * 10 + unsigned(c - '0');
    }
    if (port == 0 || port > 65535 || port_text.size() > 5) return {};  // 0: no server listens there
    const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
    if (bracketed) host = host.substr(1, host.size() - 2);
    char buf[INET6_ADDRSTRLEN] = {};
    unsigned char addr[16];
    if (!bracketed && inet_pton(AF_INET, host.c_str(), addr) == 1) {
        inet_ntop(AF_INET, addr, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(port);
    }
    if (bracketed && inet_pton(AF_INET6, host.c_str(), addr) == 1) {
        inet_ntop(AF_INET6, addr, buf, sizeof buf);
        return "[" + std::string(buf) + "]:" + std::to_string(port);
    }
    return {};
}

std::string key_to_hex(const Key& key) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (uint8_t b : key) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

std::optional<Key> key_from_hex(std::string_view hex) {
    if (hex.size() != 2 * kKeyBytes) return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    Key k{};
    for (size_t i = 0; i < kKeyBytes; ++i) {
        const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        k[i] = uint8_t(hi << 4 | lo);
    }
    return k;
}

Key read_key_file(const std::string& path) {
    check_private_file(path);
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot read the key file");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
    text = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
    const std::optional<Key> k = key_from_hex(text);
    if (!k) throw std::runtime_error(path + ": not a key (expected 64 hex digits, as `kinesync-token keygen` writes)");
    return *k;
}

void write_secret_file(const std::string& path, const std::vector<uint8_t>& bytes) { write_private_file(path, bytes); }

uint64_t unix_now_s() {
    return uint64_t(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::vector<uint8_t> issue_connect_token(const Key& private_key, const TokenRequest& r, uint64_t now_s) {
    if (r.servers.empty() || r.servers.size() > kMaxTokenServers)
        throw std::invalid_argument("a connect token names 1 to " + std::to_string(kMaxTokenServers) + " servers");
    std::vector<std::string> servers;
    for (const std::string& s : r.servers) {
        const std::string c = canonical_address(s);
        if (c.empty()) throw std::invalid_argument("server \"" + s + "\" is not a numeric address:port (port 1 to 65535)");
        servers.push_back(c);
    }
    if (r.user_data.size() > kMaxTokenUserData)
        throw std::invalid_argument("user data over " + std::to_string(kMaxTokenUserData) + " bytes");
    if (r.valid_for_s == 0) throw std::invalid_argument("a connect token must be valid for at least a second");
    const Key c2s = random_key(), s2c = random_key();
    const uint64_t expire_s = now_s + r.valid_for_s;

    flatbuffers::FlatBufferBuilder pb(512);
    std::vector<flatbuffers::Offset<flatbuffers::String>> names;
    for (const std::string& s : servers) names.push_back(pb.CreateString(s));
    const auto priv = tok::CreatePrivateConnectToken(pb, r.client_id, pb.CreateVector(c2s.data(), c2s.size()),
                                                     pb.CreateVector(s2c.data(), s2c.size()), pb.CreateVector(names),
                                                     pb.CreateVector(r.user_data));
    pb.Finish(priv);
    const auto ad = token_ad(expire_s);
    const std::vector<uint8_t> sealed = seal_random_nonce(private_key, {pb.GetBufferPointer(), pb.GetSize()}, ad);
    if (sealed.size() > kMaxSealedTokenBytes) throw std::invalid_argument("connect token too large");

    flatbuffers::FlatBufferBuilder b(1024);
    std::vector<flatbuffers::Offset<flatbuffers::String>> names2;
    for (const std::string& s : servers) names2.push_back(b.CreateString(s));
    const auto token = tok::CreateConnectToken(b, kProtocolVersion, now_s, expire_s, r.client_id, b.CreateVector(names2),
                                               b.CreateVector(c2s.data(), c2s.size()), b.CreateVector(s2c.data(), s2c.size()),
                                               b.CreateVector(sealed));
    b.Finish(token, tok::ConnectTokenIdentifier());
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::optional<ConnectToken> parse_connect_token(std::span<const uint8_t> bytes, std::string* error) {
    auto fail = [&](const char* why) {
        if (error) *error = why;
        return std::nullopt;
    };
    if (bytes.size() < 8 || bytes.size() > kMaxConnectTokenBytes) return fail("not a connect token (size)");
    flatbuffers::Verifier v(bytes.data(), bytes.size(), flatbuffers::Verifier::Options{8, 64});
    if (!tok::ConnectTokenBufferHasIdentifier(bytes.data()) || !tok::VerifyConnectTokenBuffer(v))
        return fail("not a connect token (structure)");
    const tok::ConnectToken* t = tok::GetConnectToken(bytes.data());
    if (t->protocol_version() != kProtocolVersion) return fail("connect token of another protocol version");
    ConnectToken out;
    out.client_id = t->client_id();
    out.create_s = t->create_s();
    out.expire_s = t->expire_s();
    if (!read_servers(t->servers(), out.servers)) return fail("connect token without valid servers");
    if (!copy_key(t->client_to_server_key(), out.client_to_server) || !copy_key(t->server_to_client_key(), out.server_to_client))
        return fail("connect token without its keys");
    if (!t->private_token() || t->private_token()->size() < kRandomNonceBytes + kSealTagBytes ||
        t->private_token()->size() > kMaxSealedTokenBytes)
        return fail("connect token without a valid private part");
    out.private_token.assign(t->private_token()->begin(), t->private_token()->end());
    return out;
}

std::optional<PrivateToken> open_private_token(const Key& private_key, uint64_t expire_s, std::span<const uint8_t> sealed,
                                               std::string* error) {
    auto fail = [&](const char* why) {
        if (error) *error = why;
        return std::nullopt;
    };
    if (sealed.size() < kRandomNonceBytes + kSealTagBytes || sealed.size() > kMaxSealedTokenBytes) return fail("bad token size");
    std::vector<uint8_t> plain;
    const auto ad = token_ad(expire_s);
    if (!open_random_nonce(private_key, sealed, ad, plain)) return fail("token does not authenticate");
    // Sealed by a holder of the private key, so well formed unless that key leaked: verified anyway.
    flatbuffers::Verifier v(plain.data(), plain.size(), flatbuffers::Verifier::Options{8, 64});
    if (!v.VerifyBuffer<tok::PrivateConnectToken>(nullptr)) return fail("token structure");
    const auto* t = flatbuffers::GetRoot<tok::PrivateConnectToken>(plain.data());
    PrivateToken out;
    out.client_id = t->client_id();
    if (!copy_key(t->client_to_server_key(), out.client_to_server) || !copy_key(t->server_to_client_key(), out.server_to_client))
        return fail("token keys");
    if (!read_servers(t->servers(), out.servers)) return fail("token servers");
    if (t->user_data()) {
        if (t->user_data()->size() > kMaxTokenUserData) return fail("token user data");
        out.user_data.assign(t->user_data()->begin(), t->user_data()->end());
    }
    std::copy(sealed.end() - kSealTagBytes, sealed.end(), out.mac.begin());
    return out;
}

}  // namespace ks::net
