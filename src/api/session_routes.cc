// The session routes of the HTTP API (docs/openapi.json, docs/sessions.md).
#include "api/session_routes.h"

#include "api/route_helpers.h"

namespace airlock::service {

using api::HttpResponse;
using json = nlohmann::json;

namespace {

// A new session on an API node: to the worker with the most free slots.
void place_and_forward(JobService& jobs, const ClusterRouting& cluster, const ExchangePtr& ex) {
  auto nodes = cluster.nodes();
  if (!nodes) return answer(jobs, ex, from_error(store_failure(nodes.error()).error()));
  auto chosen = cluster::place_session(*nodes);
  if (!chosen) {
    HttpResponse r = HttpResponse::error(503, "no_worker", "no worker node has a free session slot; try again");
    r.headers.emplace_back("Retry-After", "1");
    return answer(jobs, ex, std::move(r));
  }
  forward_to_node(jobs, cluster, ex, *chosen, cluster::ForwardKind::kPlain);
}

}  // namespace

void install_session_routes(api::HttpServer& server, JobService& jobs, SessionService& sessions,
                            const ClusterRouting* cluster) {
  api::RouteOptions small_body;
  small_body.max_body_bytes = 2 << 20;
  auto reply_to = [&jobs](const ExchangePtr& ex, int ok_status) {
    return [&jobs, ex, ok_status](ApiResult<json> r) { answer(jobs, ex, r, ok_status); };
  };
  // A route that names a session: on an API node, an open one's request goes
  // to its node; `here` answers the rest (closed, unknown, another tenant's).
  auto on_node = [&jobs, &sessions, cluster](Authed here,
                                             cluster::ForwardKind kind = cluster::ForwardKind::kPlain) -> Authed {
    if (!cluster) return here;
    return [&jobs, &sessions, cluster, here, kind](const ExchangePtr& ex, const Caller& c) {
      auto node = sessions.open_node_of(c, ex->request().params.at("id"));
      if (!node) return answer(jobs, ex, from_error(node.error()));
      if (node->empty()) return here(ex, c);
      forward_to_node(jobs, *cluster, ex, *node, kind);
    };
  };

  add(server, jobs, "POST", "/v1/sessions",
      [&, reply_to, cluster](const ExchangePtr& ex, const Caller& c) {
        if (cluster) {
          if (auto no = c.lacks({"run"})) return answer(jobs, ex, from_error(*no));
          return place_and_forward(jobs, *cluster, ex);
        }
        auto body = json_body(jobs, ex);
        if (!body) return;
        sessions.create(c, *body, reply_to(ex, 201));
      },
      small_body);
  add(server, jobs, "GET", "/v1/sessions",
      [&](const ExchangePtr& ex, const Caller& c) { answer(jobs, ex, sessions.list(c, ex->request().query)); });
  add(server, jobs, "GET", "/v1/sessions/{id}", on_node([&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.get(c, ex->request().params.at("id")));
  }));
  add(server, jobs, "DELETE", "/v1/sessions/{id}", on_node([&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.close(c, ex->request().params.at("id"), reply_to(ex, 200));
  }));
  add(server, jobs, "POST", "/v1/sessions/{id}/interrupt", on_node([&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.interrupt(c, ex->request().params.at("id")));
  }));
  // Data requests: a refusal (an answer is a call that names the request in "answers").
  add(server, jobs, "POST", "/v1/sessions/{id}/requests/{request_id}/refuse",
      on_node([&](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(jobs, ex);
        if (!body) return;
        const auto& p = ex->request().params;
        answer(jobs, ex, sessions.refuse_request(c, p.at("id"), p.at("request_id"), *body));
      }),
      small_body);
  add(server, jobs, "POST", "/v1/sessions/{id}/restart", on_node([&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.restart(c, ex->request().params.at("id")));
  }));

  // Calls.
  add(server, jobs, "POST", "/v1/sessions/{id}/execs",
      on_node([&](const ExchangePtr& ex, const Caller& c) {
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
      }),
      small_body);
  add(server, jobs, "GET", "/v1/sessions/{id}/execs", on_node([&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.execs(c, ex->request().params.at("id")));
  }));
  add(server, jobs, "GET", "/v1/sessions/{id}/execs/{exec}", on_node([&](const ExchangePtr& ex, const Caller& c) {
    const auto& p = ex->request().params;
    std::string wait = query_param(ex, "wait_s");
    if (wait.empty()) return answer(jobs, ex, sessions.exec(c, p.at("id"), p.at("exec")));
    if (wait.size() > 3 || wait.find_first_not_of("0123456789") != std::string::npos || std::stoi(wait) > kMaxWaitSeconds)
      return answer(jobs, ex, HttpResponse::error(400, "bad_request", "wait_s: whole seconds, at most 300"));
    std::string id = p.at("id"), exec_id = p.at("exec");
    sessions.when_exec_done(c, id, exec_id, std::stoi(wait), [&jobs, &sessions, ex, c, id, exec_id] {
      answer(jobs, ex, sessions.exec(c, id, exec_id));
    });
  }));
  // Live output and the final result. A client that reconnects with the last
  // event id it saw gets only what it missed; the final "result" event has id
  // "done", and resuming after it answers 204 (nothing more, ever).
  add(server, jobs, "GET", "/v1/sessions/{id}/execs/{exec}/events", on_node([&](const ExchangePtr& ex, const Caller& c) {
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
  }, cluster::ForwardKind::kEvents));

  // Files of /workspace.
  api::RouteOptions upload;
  // On an API node the body goes on to the session's worker as it arrives
  // (cluster/forward.h); one machine, or the worker, spools it.
  upload.spool_body = cluster == nullptr;
  upload.stream_body = cluster != nullptr;
  upload.max_body_bytes = jobs.config().max_upload_bytes;
  add(server, jobs, "PUT", "/v1/sessions/{id}/files",
      on_node([&, reply_to](const ExchangePtr& ex, const Caller& c) {
        const auto& req = ex->request();
        sessions.put_file(c, req.params.at("id"), query_param(ex, "path"), req.body_file, req.body_bytes,
                          reply_to(ex, 201));
      }),
      upload);
  add(server, jobs, "GET", "/v1/sessions/{id}/files", on_node([&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.list_files(c, ex->request().params.at("id"), query_param(ex, "path")));
  }));
  add(server, jobs, "GET", "/v1/sessions/{id}/files/content", on_node([&](const ExchangePtr& ex, const Caller& c) {
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
  }));
  add(server, jobs, "DELETE", "/v1/sessions/{id}/files", on_node([&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.delete_file(c, ex->request().params.at("id"), query_param(ex, "path"), reply_to(ex, 200));
  }));

  // Snapshots.
  add(server, jobs, "POST", "/v1/sessions/{id}/snapshots", on_node([&, reply_to](const ExchangePtr& ex, const Caller& c) {
    sessions.snapshot(c, ex->request().params.at("id"), reply_to(ex, 201));
  }));
  add(server, jobs, "GET", "/v1/snapshots",
      [&](const ExchangePtr& ex, const Caller& c) { answer(jobs, ex, sessions.snapshots(c, ex->request().query)); });
  add(server, jobs, "GET", "/v1/snapshots/{digest}", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.snapshot_info(c, ex->request().params.at("digest"), ex->request().query));
  });
  add(server, jobs, "DELETE", "/v1/snapshots/{digest}", [&](const ExchangePtr& ex, const Caller& c) {
    answer(jobs, ex, sessions.delete_snapshot(c, ex->request().params.at("digest")));
  });
}

}  // namespace airlock::service
