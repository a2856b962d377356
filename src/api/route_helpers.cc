#include "api/route_helpers.h"

#include "base/json_parse.h"

namespace airlock::service {

using api::HttpResponse;
using json = nlohmann::json;

HttpResponse from_error(const ApiError& e) {
  log_api_error(e);
  HttpResponse r = HttpResponse::error(e.status, e.code, e.message);
  if (int wait = retry_after_s(e); wait > 0) r.headers.emplace_back("Retry-After", std::to_string(wait));
  if (e.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

void answer(JobService& service, const ExchangePtr& ex, HttpResponse r) {
  service.metrics().request(r.status);
  ex->respond(std::move(r));
}

void add(api::HttpServer& server, JobService& service, const std::string& method, const std::string& pattern,
         Authed handler, api::RouteOptions options) {
  // A body is read only for a valid key: anyone else is answered at the
  // header and cannot make the server hold (or wait for) a body.
  options.before_body = [&service](const api::HttpRequest& request) -> std::optional<HttpResponse> {
    auto caller = service.authenticate(request.header("authorization"));
    if (caller) return std::nullopt;
    service.metrics().request(caller.error().status);
    return from_error(caller.error());
  };
  server.route(
      method, pattern,
      [&service, handler](ExchangePtr ex) {
        auto caller = service.authenticate(ex->request().header("authorization"));
        if (!caller) return answer(service, ex, from_error(caller.error()));
        handler(ex, *caller);
      },
      options);
}

std::string query_param(const ExchangePtr& ex, const char* key, const std::string& fallback) {
  const auto& q = ex->request().query;
  auto it = q.find(key);
  return it == q.end() ? fallback : it->second;
}

std::optional<json> json_body(JobService& service, const ExchangePtr& ex) {
  const auto& body = ex->request().body;
  auto parsed = parse_json(body.empty() ? std::string_view("{}") : std::string_view(body));
  if (!parsed) {
    answer(service, ex, HttpResponse::error(400, "bad_json", "the body is " + parsed.error().what));
    return std::nullopt;
  }
  return std::move(*parsed);
}

std::optional<uint64_t> resume_offset(JobService& service, const ExchangePtr& ex) {
  const auto& req = ex->request();
  std::string from_text = req.header("last-event-id");
  if (auto q = req.query.find("from"); q != req.query.end()) from_text = q->second;
  if (from_text.empty()) return 0;
  if (from_text == "done") return UINT64_MAX;
  if (from_text.size() > 18 || from_text.find_first_not_of("0123456789") != std::string::npos) {
    answer(service, ex, HttpResponse::error(400, "bad_request", "Last-Event-ID / from: a byte offset"));
    return std::nullopt;
  }
  return std::stoull(from_text);
}

void stream_events(const ExchangePtr& ex, std::shared_ptr<LogBuffer> buffer, uint64_t from,
                   const std::string& final_event, const std::string& final_id,
                   std::function<json()> final_state) {
  ex->start_events();
  auto id = std::make_shared<uint64_t>(0);
  *id = buffer->subscribe(
      from,
      [ex](const OutputChunk& c) {
        json data = {{"offset", c.offset}, {"text", c.text}};
        ex->send_event(std::to_string(c.offset + c.text.size()), c.is_stderr ? "stderr" : "stdout",
                       data.dump(-1, ' ', false, json::error_handler_t::replace));
      },
      [ex, final_state, final_event, final_id] {
        ex->send_event(final_id, final_event, final_state().dump(-1, ' ', false, json::error_handler_t::replace));
        ex->end_events();
      });
  ex->on_close([buffer, id] {
    if (*id) buffer->unsubscribe(*id);
  });
}

}  // namespace airlock::service
