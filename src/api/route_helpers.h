// What every route of the HTTP API does the same way: authenticate, parse a
// JSON body, answer an ApiResult (counting it in the metrics), and stream a
// LogBuffer as Server-Sent Events.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "http/server.h"
#include "service/job_service.h"
#include "service/log_buffer.h"

namespace airlock::service {

using ExchangePtr = std::shared_ptr<api::Exchange>;

api::HttpResponse from_error(const ApiError& e);
void answer(JobService& service, const ExchangePtr& ex, api::HttpResponse r);

template <class T>
void answer(JobService& service, const ExchangePtr& ex, const ApiResult<T>& result, int ok_status = 200) {
  if (!result) return answer(service, ex, from_error(result.error()));
  answer(service, ex, api::HttpResponse::json(ok_status, *result));
}

using Authed = std::function<void(const ExchangePtr&, const Caller&)>;

// A route that needs an API key: authenticates, then runs the handler.
void add(api::HttpServer& server, JobService& service, const std::string& method, const std::string& pattern,
         Authed handler, api::RouteOptions options = {});

// The query parameter `key`, or `fallback` when the request has none.
std::string query_param(const ExchangePtr& ex, const char* key, const std::string& fallback = "");

// The request's body as JSON ("{}" when empty); answers 400 and returns nullopt when it is not JSON.
std::optional<nlohmann::json> json_body(JobService& service, const ExchangePtr& ex);

// The resume point of an event stream: ?from=N, else Last-Event-ID, else 0.
// Answers 400 and returns nullopt when it is not a byte offset; "done" is
// returned as UINT64_MAX (the client has the final event already).
std::optional<uint64_t> resume_offset(JobService& service, const ExchangePtr& ex);

// One SSE event per output chunk: id = bytes delivered so far (send it back as
// Last-Event-ID to resume), event = stdout|stderr, data = JSON with the text;
// then one final event `final_event` with id `final_id` and final_state() as data.
void stream_events(const ExchangePtr& ex, std::shared_ptr<LogBuffer> buffer, uint64_t from,
                   const std::string& final_event, const std::string& final_id,
                   std::function<nlohmann::json()> final_state);

}  // namespace airlock::service
