#pragma once
// The 32-byte private key a server shares with the game's backend, which issues connect tokens.

#include <array>
#include <cstddef>
#include <cstdint>

namespace ks::net {

constexpr size_t kKeyBytes = 32;
using Key = std::array<uint8_t, kKeyBytes>;

}  // namespace ks::net
