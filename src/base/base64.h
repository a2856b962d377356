// Standard base64 (RFC 4648, with padding), OpenSSL underneath.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace airlock {

std::string base64_encode(std::string_view bytes);
// nullopt if `text` is not base64 of whole groups.
std::optional<std::string> base64_decode(std::string_view text);

// The length base64_encode() gives for `n` bytes.
constexpr size_t base64_size(size_t n) { return (n + 2) / 3 * 4; }

}  // namespace airlock
