// What a running tool call may use besides its arguments: a way to report
// progress (live output) and a flag that says the client cancelled it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace airlock::mcp {

struct CallContext {
  // Sends a progress notification with `message` (a no-op when the request
  // carried no progress token).
  std::function<void(const std::string& message)> progress = [](const std::string&) {};
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  bool is_cancelled() const { return cancelled->load(); }
};

}  // namespace airlock::mcp
