#pragma once
// The codes of the protocol's Disconnect message (schema/protocol.fbs).

#include <cstdint>

namespace ks {

// Why a session ended or a handshake failed, for a program to act on (the reason text says more).
// The values travel in the protocol's Disconnect message and equal the C API's ks_disconnect_code.
enum class DisconnectCode : uint8_t {
    None = 0,                // not disconnected
    Unspecified = 1,         // a reason without a code
    ClientClosed = 2,        // this client said goodbye (disconnect())
    ServerShutdown = 3,      // the server closed or drained
    TimedOut = 4,            // connected, then silence for timeout_s
    NoAnswer = 5,            // the handshake got no answer: server down, wrong address or port, or filtered
    ServerFull = 6,          // max_clients reached
    TooManyFromAddress = 7,  // max_sessions_per_address reached
    TokenExpired = 8,        // the connect token's time is up (checked before sending, and by the server)
    TokenInvalid = 9,        // the server cannot open the token: issued with another key, or damaged
    TokenWrongServer = 10,   // the token does not name this server
    TokenUsed = 11,          // a token opens one session
    TokenRequired = 12,      // the server wants a connect token and this client has none
    VersionMismatch = 13,    // the server speaks another protocol version
    NotAcknowledging = 14,   // dropped for leaving reliable messages unacknowledged
    NoToken = 15,            // fetch_token gave none (it threw)
    SessionInUse = 16,       // a session from this address (or for this player) is live: retry once it ends
};
const char* disconnect_code_name(DisconnectCode c);

}  // namespace ks
