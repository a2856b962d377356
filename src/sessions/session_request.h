// The bodies of POST /v1/sessions and POST /v1/sessions/{id}/execs, checked
// field by field. Pure: no files, no clock; every refusal is one clear
// message naming the field.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "jobs/policy.h"
#include "service/job_request.h"

namespace airlock::service {

// What the operator allows sessions (ServiceConfig), as the parser needs it.
struct SessionCaps {
  int default_idle_timeout_s = 600;
  int max_idle_timeout_s = 86'400;
  int max_lifetime_s = 14'400;  // also the default lifetime
};

struct SessionRequest {
  std::string image;  // "": the service's default_image (set when the session is accepted)
  jobs::JobPolicy policy;  // policy.timeout_ms: the default timeout of each call
  std::vector<std::string> input_ids;
  std::string snapshot;  // digest to restore /workspace from; "" none
  int idle_timeout_s = 600;
  int max_lifetime_s = 14'400;
};

Result<SessionRequest> parse_session_request(const nlohmann::json& body, const PolicyCaps& caps,
                                             const SessionCaps& session_caps);
// The request as stored with the session (and shown in its view and record).
nlohmann::json session_request_json(const SessionRequest& request);

struct ExecRequest {
  std::string kind = "python";  // "python" or "shell"
  std::string code;
  uint64_t timeout_ms = 0;  // the session's policy.timeout_ms unless given
  int wait_s = 0;           // answer when the call ends, or after this many seconds
  // Data requests of the session this call answers (ids "r1", ...; the
  // client uploaded what they asked for first). Distinct, at most 32.
  std::vector<std::string> answers;
};

Result<ExecRequest> parse_exec_request(const nlohmann::json& body, uint64_t default_timeout_ms,
                                       uint64_t max_timeout_ms);

}  // namespace airlock::service
