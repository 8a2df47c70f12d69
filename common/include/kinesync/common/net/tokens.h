#pragma once
// What a game's backend does with kinesync: keys and connect tokens (schema/PROTOCOL.md, "Connect
// tokens"). The backend and its servers share one private key; per player and connection the
// backend issues a token naming the servers it is good for, which expires and opens one session.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <kinesync/common/net/key.h>

namespace ks::net {

constexpr size_t kMaxTokenServers = 8;
constexpr size_t kMaxTokenUserData = 256;
constexpr size_t kMaxConnectTokenBytes = 2048;

// "127.0.0.1:40000", "[::1]:40000": the canonical text of an address and port, or "" when the
// text is not a numeric address with a port of 1 to 65535 (host names are resolved by the caller).
std::string canonical_address(std::string_view address_and_port);

// Hex text of a key (64 characters) and back (nullopt unless exactly 64 hex digits).
std::string key_to_hex(const Key& key);
std::optional<Key> key_from_hex(std::string_view hex);
// Reads a key file (64 hex digits, surrounding white space ignored); throws std::runtime_error
// naming the file when it cannot, or when group or others may read or write it (as ssh refuses
// such a key: chmod 600 it).
Key read_key_file(const std::string& path);
// Writes a secret (a key, a token) to `path` so that it is never readable by anyone but the owner,
// whatever the umask: into a new file created with mode 0600 beside it, then renamed over `path`.
// Throws std::runtime_error naming the file when it cannot.
void write_secret_file(const std::string& path, const std::vector<uint8_t>& bytes);

struct TokenRequest {
    uint64_t client_id = 0;
    std::vector<std::string> servers;  // "address:port" (numeric), 1..kMaxTokenServers
    uint32_t valid_for_s = 45;         // expiry = now + this
    std::vector<uint8_t> user_data;    // at most kMaxTokenUserData bytes
};

// Issues a connect token at unix time now_s. Throws std::invalid_argument for a request that
// breaks a limit (no server, a server that is not "address:port", too much user data).
std::vector<uint8_t> issue_connect_token(const Key& private_key, const TokenRequest& request, uint64_t now_s);

// Seconds since the Unix epoch (what tokens' expiry is counted in).
uint64_t unix_now_s();
// A fresh key from the operating system's secure random source.
Key random_key();

}  // namespace ks::net
