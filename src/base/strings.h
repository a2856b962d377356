// Small string helpers shared across layers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace airlock {

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split(std::string_view text, char separator);

// A-Z -> a-z, nothing else (host names, header names, schemes: never locale-dependent).
std::string ascii_lower(std::string_view text);

}  // namespace airlock
