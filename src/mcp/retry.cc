#include "mcp/retry.h"

#include <algorithm>
#include <charconv>

namespace airlock::mcp {

std::optional<std::chrono::milliseconds> retry_wait(const api::Response& r, int attempt) {
  if (attempt > kMaxRetries) return std::nullopt;
  if (r.status != 429 && r.status != 503) return std::nullopt;
  std::optional<long> seconds;
  if (auto it = r.headers.find("retry-after"); it != r.headers.end()) {
    long v = 0;
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && v >= 0) seconds = v;
  }
  if (r.status == 503 && !seconds) return std::nullopt;  // stopping, busy without a hint: not retried
  auto wait = std::chrono::milliseconds(seconds ? *seconds * 1000 : 1000L << std::min(attempt - 1, 3));
  return std::min(wait, kMaxRetryWait);
}

}  // namespace airlock::mcp
