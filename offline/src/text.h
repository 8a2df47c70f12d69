#pragma once
// Small text helpers shared by the file readers and the JSON writers.

#include <string>
#include <string_view>

namespace ks {

// ASCII case-insensitive equality (BVH keywords and joint names).
bool iequals(std::string_view a, std::string_view b);

// `s` as a quoted JSON string, with quotes, backslashes and control characters escaped.
std::string json_string(std::string_view s);

}  // namespace ks
