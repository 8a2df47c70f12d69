#pragma once
// Standard base64 (RFC 4648 §4, padded): the viewer's replay.ksview.js carries its bytes so.

#include <optional>
#include <string>
#include <string_view>

namespace ks {

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not padded standard base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace ks
