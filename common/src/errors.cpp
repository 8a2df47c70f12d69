#include <kinesync/common/errors.h>
#include <kinesync/common/net/disconnect_code.h>

namespace ks {

const char* errc_name(Errc c) {
    switch (c) {
        case Errc::Ok: return "ok";
        case Errc::InvalidArgument: return "invalid argument";
        case Errc::Network: return "network";
        case Errc::Io: return "i/o";
        case Errc::State: return "state";
        case Errc::Internal: return "internal";
        case Errc::InvalidSkeleton: return "invalid skeleton";
        case Errc::InvalidPose: return "invalid pose";
        case Errc::InvalidConfig: return "invalid configuration";
        case Errc::UnknownId: return "unknown id";
        case Errc::InvalidToken: return "invalid token";
        case Errc::Unsupported: return "not in this build";
    }
    return "unknown";
}

const char* disconnect_code_name(DisconnectCode c) {
    switch (c) {
        case DisconnectCode::None: return "none";
        case DisconnectCode::Unspecified: return "unspecified";
        case DisconnectCode::ClientClosed: return "client closed";
        case DisconnectCode::ServerShutdown: return "server shutdown";
        case DisconnectCode::TimedOut: return "timed out";
        case DisconnectCode::NoAnswer: return "no answer";
        case DisconnectCode::ServerFull: return "server full";
        case DisconnectCode::TooManyFromAddress: return "too many from this address";
        case DisconnectCode::TokenExpired: return "token expired";
        case DisconnectCode::TokenInvalid: return "token invalid";
        case DisconnectCode::TokenWrongServer: return "token for another server";
        case DisconnectCode::TokenUsed: return "token already used";
        case DisconnectCode::TokenRequired: return "token required";
        case DisconnectCode::VersionMismatch: return "version mismatch";
        case DisconnectCode::NotAcknowledging: return "not acknowledging";
        case DisconnectCode::NoToken: return "no token";
        case DisconnectCode::SessionInUse: return "session in use";
    }
    return "unknown";
}

}  // namespace ks
