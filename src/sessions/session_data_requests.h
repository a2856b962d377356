// The data requests of one session (docs/sessions.md, "Data requests"): the
// lines a call sent through AIRLOCK_REQUEST_FD, validated by the same rules
// as a job's (src/requests), given ids r1, r2, ... unique in the session, and
// what the application answered (a later call that carries the request's id
// in `answers`, or a refusal with a reason). Pure: no locks (LiveSession
// holds its own), no clock (times are given), no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "requests/data_request.h"
#include "sessions/session.h"

namespace airlock::service {

inline constexpr size_t kSessionDataRequests = 32;  // accepted requests in one session

struct SessionRequestLimits {
  requests::Limits per_call;  // the job limits, for each call
  size_t per_session = kSessionDataRequests;
};

enum class AnswerState { kOpen, kAnswered, kRefused };

struct SessionDataRequest {
  requests::DataRequest request;
  std::string call_id;  // the call that asked
  AnswerState state = AnswerState::kOpen;
  std::string by_call;  // kAnswered: the call that carried the answer
  std::string reason;   // kRefused
  std::string key_id;   // the API key that answered or refused
  std::string at;       // when it was answered or refused
};

// What one call asked: the ids accepted, and the lines refused (in order).
struct CallRequests {
  std::vector<std::string> ids;
  std::vector<requests::Refusal> refused;
};

// The status a call ends with once its requests are judged: an ok or error
// call (or one that ended by asking) with an accepted request is
// input_requested; one that ended by asking with none accepted is an error.
// Other statuses (interrupted, timed_out, ...) are kept: they say more.
std::string status_after_requests(const std::string& status, size_t accepted);

class SessionDataRequests {
 public:
  explicit SessionDataRequests(SessionRequestLimits limits = {}) : limits_(limits) {}

  const SessionRequestLimits& limits() const { return limits_; }
  // The limits for the next call's lines (jobs::CallRequest).
  size_t call_count() const { return limits_.per_call.requests; }
  size_t call_bytes() const { return limits_.per_call.bytes_per_request; }

  // Validates what call `call_id` sent and keeps the requests accepted.
  CallRequests admit(const std::string& call_id, const jobs::CallResult& result);
  // Marks `ids` answered by call `by_call`, all or none: an unknown id is
  // kNotFound, one already answered or refused kRefused.
  Status answer(const std::vector<std::string>& ids, const std::string& by_call, const std::string& key_id,
                const std::string& at);
  // Refuses one open request: kNotFound for an unknown id, kRefused when it
  // was answered or refused already.
  Status refuse(const std::string& id, const std::string& reason, const std::string& key_id,
                const std::string& at);

  // For the kernel: every request's state (airlock_request.answer).
  std::vector<jobs::KnownAnswer> known() const;
  // One request as the API shows it: id, name, why, description, params,
  // call_id and its answer ({"state": "open"} | answered | refused).
  nlohmann::json request_json(const std::string& id) const;
  // A call's requests with their answers as of now, and its refusals.
  nlohmann::json call_json(const CallRequests& call) const;
  // The whole session: {"limits", "requests": [...]} (the record and the view).
  nlohmann::json to_json() const;
  size_t size() const { return requests_.size(); }

 private:
  const SessionDataRequest* find(const std::string& id) const;
  SessionDataRequest* find(const std::string& id);
  SessionRequestLimits limits_;
  std::vector<SessionDataRequest> requests_;  // in the order accepted: requests_[i].id is r(i+1)
};

// The JSON of a refusal as the record keeps it: {"reason", "bytes"} (and
// "lines" for the sum of the lines past the limit).
nlohmann::json refusal_json(const requests::Refusal& r);
// Replaces the answer of each request in `call_requests` (a call's
// "data_requests" list) by the one in `session_requests` (a session's
// "data_requests.requests" list) with the same id, when there is one.
void join_answers(nlohmann::json& call_requests, const nlohmann::json& session_requests);

}  // namespace airlock::service
