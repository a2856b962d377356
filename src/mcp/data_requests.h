// What a tool result says when the code asked the application for data
// (docs/data-requests.md): a job that ended input_requested or a session
// call with status input_requested. Not an error: the requests go into the
// structured content as data, and the text tells the assistant to pass them
// on and not to invent the data. Every field of a request was written by the
// sandboxed code, so the text shows each one JSON-quoted on its own line and
// capped, framed as a request to relay, never as an instruction. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace airlock::mcp {

// Caps of what the text shows of one request (the structured content has
// the fields as the API gave them).
inline constexpr size_t kRequestWhyCap = 1000;
inline constexpr size_t kRequestDescriptionCap = 2000;
inline constexpr size_t kRequestParamsCap = 2000;
inline constexpr size_t kRequestsShown = 32;

// The requests of a job's view (GET /v1/jobs/{id}): from view.data_requests
// or record.data_requests, each {id, name, why, description, params,
// answer}; the answer is {"state": "open"} unless the API says otherwise.
// Entries that are not objects are dropped.
nlohmann::json job_requests(const nlohmann::json& view);
// How many requests the service refused to read (over the limits), from
// data_requests.refused.
size_t job_requests_refused(const nlohmann::json& view);
// The requests of a session call's view: view.data_requests or
// view.result.data_requests.
nlohmann::json call_requests(const nlohmann::json& view);
// How many a call sent that the service refused (view.data_requests_refused).
size_t call_requests_refused(const nlohmann::json& view);

// Whom the text names and how an answer is given.
struct RequestSource {
  std::string kind;        // "job" or "session"
  std::string job_id;      // kind "job"
  std::string session_id;  // kind "session"
  std::string call_id;     // kind "session"
};

// The text block: what the code asks for and why (each request), that the
// assistant must pass the request to the application or the user and must
// not invent the data, and how to answer (a follow-up with `answers`) or
// refuse (refuse_data_request).
std::string data_request_text(const RequestSource& source, const nlohmann::json& requests,
                              size_t refused);

}  // namespace airlock::mcp
