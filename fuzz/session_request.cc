// POST /v1/sessions and POST /v1/sessions/{id}/execs bodies as the service
// takes them (json_body, then parse_session_request / parse_exec_request),
// and an accepted request as the service stores it (session_request_json).
#include <nlohmann/json.hpp>

#include "fuzz/fuzz.h"
#include "sessions/session_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(airlock::fuzz::text(data, size));
  auto json = nlohmann::json::parse(body.empty() ? std::string("{}") : body, nullptr, false);
  if (json.is_discarded()) return 0;
  airlock::service::PolicyCaps caps;
  airlock::service::SessionCaps session_caps;
  (void)airlock::service::parse_exec_request(json, 30'000, caps.max_timeout_ms);
  auto request = airlock::service::parse_session_request(json, caps, session_caps);
  if (!request) return 0;
  (void)airlock::service::session_request_json(*request).dump();
  return 0;
}
