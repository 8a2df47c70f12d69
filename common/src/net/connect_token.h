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

#include <kinesync/common/net/tokens.h>

#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"

namespace ks::net {



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


}  // namespace ks::net
