// JSON from outside (request bodies, kernel lines, manifests, stored rows,
// command lines) is parsed here: its nesting is measured first
// (base/nesting.h), so nothing that recurses over the value ever sees a
// document deep enough to overflow a stack.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace airlock {

// Requests, session kernel lines, snapshot manifests, command-line JSON.
inline constexpr size_t kMaxJsonDepth = 128;
// What airlock wrote itself and reads back (records and requests from the
// store): a record wraps a request a few levels deeper.
inline constexpr size_t kMaxStoredJsonDepth = 512;

// The value, or "nested deeper than N levels" / "not valid JSON".
Result<nlohmann::json> parse_json(std::string_view text, size_t max_depth = kMaxJsonDepth);

// Like nlohmann::json::parse(text, nullptr, false): a discarded value when
// the text is not JSON or nests deeper than max_depth.
nlohmann::json parse_json_or_discarded(std::string_view text, size_t max_depth = kMaxJsonDepth);

}  // namespace airlock
