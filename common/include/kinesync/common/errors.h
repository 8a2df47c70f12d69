#pragma once
// Errors at kinesync's public boundary. Every public entry checks what it is given (in every
// build type) and refuses with a ks::Error: a code a program can act on, the field and joint it is
// about, and a message naming them with the value. The C API returns the same codes (ks_result).

#include <stdexcept>
#include <string>

namespace ks {

// Values equal the C API's ks_result (kinesync/kinesync.h).
enum class Errc : int {
    Ok = 0,
    InvalidArgument = 1,  // a bad argument not covered below (a NULL pointer, a wrong-size buffer, ...)
    Network = 2,          // cannot bind or resolve
    Io = 3,               // a file (the recording)
    State = 4,            // not possible now (e.g. after close)
    Internal = 5,
    InvalidSkeleton = 6,  // no joints, not exactly one root, a parent not before its child, too many joints, ...
    InvalidPose = 7,      // wrong joint count, a value not finite, a quaternion not unit, a scale not positive
    InvalidConfig = 8,    // a configuration field out of range
    UnknownId = 9,        // no such skeleton or character
    InvalidToken = 10,    // not a connect token, expired, or for another server
    Unsupported = 11,     // not in this build (e.g. a server function in the client-only Windows build)
};
const char* errc_name(Errc c);

class Error : public std::runtime_error {
public:
    Error(Errc code, const std::string& message, std::string field = {}, int joint = -1)
        : std::runtime_error(message), code_(code), field_(std::move(field)), joint_(joint) {}
    Errc code() const noexcept { return code_; }
    // What it is about, e.g. "pose.rot", "skeleton.parents", "config.tick_hz" ("" when nothing more precise).
    const std::string& field() const noexcept { return field_; }
    int joint() const noexcept { return joint_; }  // the joint it is about, or -1

private:
    Errc code_;
    std::string field_;
    int joint_;
};

}  // namespace ks
