// The application's side of a job's data requests (docs/data-requests.md),
// pure: which requests a finished job's record holds, whether they can be
// answered or refused now, and the job view's "data_requests" with each
// request's answer. The store keeps the answers; this only reads them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/api_error.h"
#include "store/types.h"

namespace airlock::service {

// Why `request_ids` of the job whose stored record is `record` cannot be
// answered now, or nothing: 404 for an id the record does not hold, 409 when
// the job has not finished asking (not input_requested) or a request already
// has an answer. `job_id` names the job in the messages.
std::optional<ApiError> unanswerable(const std::string& job_id, const nlohmann::json& record,
                                     const std::vector<std::string>& request_ids,
                                     const std::vector<store::DataRequestAnswer>& answers);

// The record's "data_requests" with an "answer" in each request:
// {"state": "open"} | {"state": "answered", "by_job", "at"} |
// {"state": "refused", "reason", "at", "key_id"}. Null when the record has none.
nlohmann::json data_requests_view(const nlohmann::json& record,
                                  const std::vector<store::DataRequestAnswer>& answers);

// A refusal's reason as the caller sent it: 1-1000 characters of text.
std::optional<std::string> refusal_reason_problem(const nlohmann::json& body);

}  // namespace airlock::service
