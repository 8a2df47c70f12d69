#pragma once
// Connect tokens (schema/token.fbs), on the model of netcode.io: a game's backend that knows the
// private key it shares with its servers issues, per player and connection, a short-lived token
// naming the servers it is good for, the player's id, its expiry and two fresh session keys. The
// client gets the whole token (over the backend's own secure channel) and passes its sealed private
// part to the server, which alone can open it. See schema/PROTOCOL.md, "Connect tokens".

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"

namespace ks::net {

constexpr size_t kMaxTokenServers = 8;
constexpr size_t kMaxTokenUserData = 256;
constexpr size_t kMaxConnectTokenBytes = 2048;

// "127.0.0.1:40000", "[::1]:40000": the canonical text of an address and port, or "" when the
// text is not a numeric address with a port (host names are resolved by the caller).
std::string canonical_address(std::string_view address_and_port);

// Hex text of a key (64 characters) and back (nullopt unless exactly 64 hex digits).
std::string key_to_hex(const Key& key);
std::optional<Key> key_from_hex(std::string_view hex);
// Reads a key file (64 hex digits, surrounding white space ignored); throws std::runtime_error
// naming the file when it cannot.
Key read_key_file(const std::string& path);

struct TokenRequest {
    uint64_t client_id = 0;
    std::vector<std::string> servers;  // "address:port" (numeric), 1..kMaxTokenServers
    uint32_t valid_for_s = 45;         // expiry = now + this
    std::vector<uint8_t> user_data;    // at most kMaxTokenUserData bytes
};

// Issues a connect token at unix time now_s. Throws std::invalid_argument for a request that
// breaks a limit (no server, a server that is not "address:port", too much user data).
std::vector<uint8_t> issue_connect_token(const Key& private_key, const TokenRequest& request, uint64_t now_s);

// The client's view of a token.
struct ConnectToken {
    uint64_t client_id = 0, create_s = 0, expire_s = 0;
    std::vector<std::string> servers;
    Key client_to_server{}, server_to_client{};
    std::vector<uint8_t> private_token;  // sealed; passed to the server as is
};
// Checks a token's structure (not its seal, which only a server can open); nullopt with *error
// saying what is wrong.
std::optional<ConnectToken> parse_connect_token(std::span<const uint8_t> bytes, std::string* error = nullptr);

// The server's view: what the sealed private part says, once opened.
struct PrivateToken {
    uint64_t client_id = 0;
    Key client_to_server{}, server_to_client{};
    std::vector<std::string> servers;
    std::vector<uint8_t> user_data;
    std::array<uint8_t, kSealTagBytes> mac{};  // the seal's tag: identifies the token (single use)
};
// Opens and checks a sealed private token: it must authenticate under the private key with this
// expiry; nullopt (with *error) otherwise. Expiry against the clock and the server address are
// the caller's checks.
std::optional<PrivateToken> open_private_token(const Key& private_key, uint64_t expire_s, std::span<const uint8_t> sealed,
                                               std::string* error = nullptr);

uint64_t unix_now_s();

}  // namespace ks::net
