// Where the tools send their calls: the real HTTP API of `airlock serve`,
// with the caller's own key, so that every tool call goes through the same
// authentication, scopes, limits and records as a direct API call. Stdio
// mode points it at --url; the /mcp route at the service's own listener.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "http/client.h"

namespace airlock::mcp {

struct ApiTarget {
  std::string host;  // an IP address literal
  uint16_t port = 0;
  std::string key;                 // the Bearer secret
  std::string base_url;            // "http://127.0.0.1:8470": how links to outputs are written
  int event_keepalive_ms = 15000;  // the service's keep-alive interval (docs/service.md)
};

// One connection to the API, for one tool call on one thread.
class ApiConnection {
 public:
  explicit ApiConnection(ApiTarget target, int timeout_ms = 60000);

  api::Response call(const std::string& method, const std::string& target,
                     const std::string& body = "",
                     const std::map<std::string, std::string>& headers = {});
  api::EventStream events(const std::string& target, const std::string& last_event_id);
  const ApiTarget& target() const { return target_; }

 private:
  ApiTarget target_;
  api::HttpClient http_;
};

}  // namespace airlock::mcp
