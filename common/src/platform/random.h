#pragma once
// Secure random bytes from the operating system (Linux getrandom, macOS/BSD getentropy, Windows
// BCryptGenRandom): keys, salts and nonces. There is no fallback: when the source fails,
// random_bytes throws std::system_error rather than give bytes anyone could predict.

#include <cstdint>
#include <span>

namespace ks::platform {

void random_bytes(std::span<uint8_t> out);

}  // namespace ks::platform
