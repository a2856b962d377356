// Pure: whether a tool's call to the API is sent again, and after how long.
// A 429 (the service is full for now) and a 503 that carries Retry-After
// (store_unavailable: the store is away for a moment) did nothing: the same
// call is sent again after Retry-After (at most kMaxRetryWait), kMaxRetries
// times. Any other answer is the tool's result.
#pragma once

#include <chrono>
#include <optional>

#include "http/client.h"

namespace airlock::mcp {

inline constexpr int kMaxRetries = 3;
inline constexpr std::chrono::milliseconds kMaxRetryWait{5000};

// The wait before retry number `attempt` (1-based) of an answer `r`, or
// nullopt when it is not retried.
std::optional<std::chrono::milliseconds> retry_wait(const api::Response& r, int attempt);

}  // namespace airlock::mcp
