// Random identifiers and API key secrets, base64url, constant-time compare.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::store {

// `n` bytes from getrandom(2).
Result<std::string> random_bytes(size_t n);
// 2*`n` lower-case hex characters from `n` random bytes.
Result<std::string> random_hex(size_t n);

// "alk_" + base64url(32 random bytes): the secret of a new API key.
Result<std::string> new_key_secret();
// What is stored of a key: sha256 of the whole secret, hex.
std::string key_secret_hash(std::string_view secret);

// RFC 4648 base64url without padding.
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

// Compares without an early exit (the time depends only on the lengths).
bool constant_time_equal(std::string_view a, std::string_view b);

// 64 lower-case hex characters.
bool is_sha256_hex(std::string_view text);

}  // namespace airlock::store
