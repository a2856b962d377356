// The session routes of the HTTP API (docs/openapi.json, docs/sessions.md).
#include "api/session_routes.h"

#include "api/route_helpers.h"

namespace airlock::service {

using api::HttpResponse;
using json = nlohmann::json;

void install_session_routes(api::HttpServer& server, JobService& jobs, SessionService& sessions) {
  api::RouteOptions small_body;
  small_body.max_body_bytes = 2 << 20;
  auto reply_to = [&jobs](const ExchangePtr& ex, int ok_status) {
    return [&jobs, ex, ok_status](ApiResult<json> r) { answer(jobs, ex, r, ok_status); };
  };

  add(server, jobs, "POST", "/v1/sessions",
      [&, reply_to](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(jobs, ex);
        if (!body) return;
        sessions.create(c, *body, reply_to(ex, 201));
      },
      small_body);
  add(server, jobs, "GET", "/v1/sessions",
      [&](const ExchangePtr& ex, const Caller& c) { answer(jobs, ex, sessions.list(c)); });
  add(server, jobs, "GET", "/v1/sessions/{id}", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.get(c, ex->request().params.at("id")));
  });
  add(server, jobs, "DELETE", "/v1/sessions/{id}", [&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.close(c, ex->request().params.at("id"), reply_to(ex, 200));
  });
  add(server, jobs, "POST", "/v1/sessions/{id}/interrupt", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.interrupt(c, ex->request().params.at("id")));
  });
  // Data requests: a refusal (an answer is a call that names the request in "answers").
  add(server, jobs, "POST", "/v1/sessions/{id}/requests/{request_id}/refuse",
      [&](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(jobs, ex);
        if (!body) return;
        const auto& p = ex->request().params;
        answer(jobs, ex, sessions.refuse_request(c, p.at("id"), p.at("request_id"), *body));
      },
      small_body);
  add(server, jobs, "POST", "/v1/sessions/{id}/restart", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.restart(c, ex->request().params.at("id")));
  });

  // Calls.
  add(server, jobs, "POST", "/v1/sessions/{id}/execs",
      [&](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(jobs, ex);
        if (!body) return;
        std::string id = ex->request().params.at("id");
        int wait_s = 0;
        auto created = sessions.submit(c, id, *body, &wait_s);
        if (!created || wait_s <= 0) return answer(jobs, ex, created, 201);
        std::string exec_id = (*created)["id"];
        sessions.when_exec_done(c, id, exec_id, wait_s, [&jobs, &sessions, ex, c, id, exec_id] {
          answer(jobs, ex, sessions.exec(c, id, exec_id), 201);
        });
      },
      small_body);
  add(server, jobs, "GET", "/v1/sessions/{id}/execs", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.execs(c, ex->request().params.at("id")));
  });
  add(server, jobs, "GET", "/v1/sessions/{id}/execs/{exec}", [&](const ExchangePtr& ex, const Caller& c) {
    const auto& p = ex->request().params;
    std::string wait = query_param(ex, "wait_s");
    if (wait.empty()) return answer(jobs, ex, sessions.exec(c, p.at("id"), p.at("exec")));
    if (wait.size() > 3 || wait.find_first_not_of("0123456789") != std::string::npos || std::stoi(wait) > kMaxWaitSeconds)
      return answer(jobs, ex, HttpResponse::error(400, "bad_request", "wait_s: whole seconds, at most 300"));
    std::string id = p.at("id"), exec_id = p.at("exec");
    sessions.when_exec_done(c, id, exec_id, std::stoi(wait), [&jobs, &sessions, ex, c, id, exec_id] {
      answer(jobs, ex, sessions.exec(c, id, exec_id));
    });
  });
  // Live output and the final result. A client that reconnects with the last
  // event id it saw gets only what it missed; the final "result" event has id
  // "done", and resuming after it answers 204 (nothing more, ever).
  add(server, jobs, "GET", "/v1/sessions/{id}/execs/{exec}/events", [&](const ExchangePtr& ex, const Caller& c) {
    const auto& p = ex->request().params;
    auto stream = sessions.exec_stream(c, p.at("id"), p.at("exec"));
    if (!stream) return answer(jobs, ex, from_error(stream.error()));
    auto from = resume_offset(jobs, ex);
    if (!from) return;
    if (*from == UINT64_MAX) {
      HttpResponse r;
      r.status = 204;
      return answer(jobs, ex, std::move(r));
    }
    jobs.metrics().request(200);
    stream_events(ex, stream->output, *from, "result", "done", stream->final_view);
  });

  // Files of /workspace.
  api::RouteOptions upload;
  upload.spool_body = true;
  upload.max_body_bytes = jobs.config().max_upload_bytes;
  add(server, jobs, "PUT", "/v1/sessions/{id}/files",
      [&, reply_to](const ExchangePtr& ex, const Caller& c) {
        const auto& req = ex->request();
        sessions.put_file(c, req.params.at("id"), query_param(ex, "path"), req.body_file, req.body_bytes,
                          reply_to(ex, 201));
      },
      upload);
  add(server, jobs, "GET", "/v1/sessions/{id}/files", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.list_files(c, ex->request().params.at("id"), query_param(ex, "path")));
  });
  add(server, jobs, "GET", "/v1/sessions/{id}/files/content", [&](const ExchangePtr& ex, const Caller& c) {
    sessions.get_file(c, ex->request().params.at("id"), query_param(ex, "path"),
                      [&jobs, ex](ApiResult<SessionService::Download> d) {
                        if (!d) return answer(jobs, ex, from_error(d.error()));
                        HttpResponse r;
                        r.file_fd = std::move(d->file);
                        r.headers.emplace_back("Content-Type", "application/octet-stream");
                        r.headers.emplace_back("X-Content-SHA256", d->sha256);
                        r.headers.emplace_back("X-Content-Type-Detected", d->type);
                        answer(jobs, ex, std::move(r));
                      });
  });
  add(server, jobs, "DELETE", "/v1/sessions/{id}/files", [&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.delete_file(c, ex->request().params.at("id"), query_param(ex, "path"), reply_to(ex, 200));
  });

  // Snapshots.
  add(server, jobs, "POST", "/v1/sessions/{id}/snapshots", [&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.snapshot(c, ex->request().params.at("id"), reply_to(ex, 201));
  });
  add(server, jobs, "GET", "/v1/snapshots",
      [&](const ExchangePtr& ex, const Caller& c) { answer(jobs, ex, sessions.snapshots(c)); });
  add(server, jobs, "GET", "/v1/snapshots/{digest}", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.snapshot_info(c, ex->request().params.at("digest")));
  });
  add(server, jobs, "DELETE", "/v1/snapshots/{digest}", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.delete_snapshot(c, ex->request().params.at("digest")));
  });
}

}  // namespace airlock::service
