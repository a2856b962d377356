#include "mcp/api_backend.h"

#include <thread>

#include "mcp/retry.h"

namespace airlock::mcp {

ApiConnection::ApiConnection(ApiTarget target, int timeout_ms)
    : target_(std::move(target)), http_(target_.host, target_.port, timeout_ms) {}

api::Response ApiConnection::call(const std::string& method, const std::string& target,
                                  const std::string& body,
                                  const std::map<std::string, std::string>& headers) {
  auto all = headers;
  all["Authorization"] = "Bearer " + target_.key;
  if (!body.empty() && !all.count("Content-Type")) all["Content-Type"] = "application/json";
  for (int attempt = 1;; ++attempt) {
    api::Response r = http_.request(method, target, body, all);
    auto wait = retry_wait(r, attempt);
    if (!wait) return r;
    std::this_thread::sleep_for(*wait);
  }
}

api::EventStream ApiConnection::events(const std::string& target,
                                       const std::string& last_event_id) {
  std::map<std::string, std::string> headers = {{"Authorization", "Bearer " + target_.key},
                                                {"Accept", "text/event-stream"}};
  if (!last_event_id.empty()) headers["Last-Event-ID"] = last_event_id;
  return http_.open_events(target, headers);
}

}  // namespace airlock::mcp
