#include "api/routes.h"

#include <nlohmann/json.hpp>

#include "api/cluster_routing.h"
#include "api/route_helpers.h"

namespace airlock::service {

using api::HttpResponse;
using json = nlohmann::json;

namespace {

// A job's output as events, from this node: its live buffer, or the
// store's replay of a finished job's.
void job_events_here(JobService& service, const ExchangePtr& ex, const Caller& c, const std::string& id) {
  auto buffer = service.output_stream(c, id);
  if (!buffer) return answer(service, ex, from_error(buffer.error()));
  auto from = resume_offset(service, ex);
  if (!from) return;
  service.metrics().request(200);
  stream_events(ex, *buffer, *from, "end", "", [&service, c, id] {
    auto j = service.job(c, id);
    if (!j) return json{{"id", id}};
    return json{{"id", id}, {"state", (*j)["state"]}, {"outcome", (*j)["outcome"]}};
  });
}

}  // namespace

void install_routes(api::HttpServer& server, JobService& service, const ClusterRouting* cluster) {
  server.route("GET", "/healthz", [&service](ExchangePtr ex) {
    auto health = service.health();  // cluster mode: the role, this node, every node
    answer(service, ex, HttpResponse::json(health["status"] == "ok" ? 200 : 503, health));
  });
  server.route("GET", "/metrics", [&service](ExchangePtr ex) {
    HttpResponse r;
    r.body = service.metrics_text();
    r.headers.emplace_back("Content-Type", "text/plain; version=0.0.4");
    answer(service, ex, std::move(r));
  });
  server.route("GET", "/openapi.json", [&service](ExchangePtr ex) {
    HttpResponse r;
    r.body = openapi_document();
    r.headers.emplace_back("Content-Type", "application/json");
    answer(service, ex, std::move(r));
  });

  api::RouteOptions upload;
  upload.spool_body = true;
  upload.max_body_bytes = service.config().max_upload_bytes;
  add(server, service, "POST", "/v1/files",
      [&service](const ExchangePtr& ex, const Caller& c) {
        const auto& req = ex->request();
        auto name = req.query.find("name");
        if (name == req.query.end())
          return answer(service, ex, HttpResponse::error(400, "bad_request", "give the file's name as ?name=..."));
        answer(service, ex, service.upload_file(c, name->second, req.body_file, req.body_bytes), 201);
      },
      upload);

  api::RouteOptions job_body;
  job_body.max_body_bytes = 2 << 20;
  add(server, service, "POST", "/v1/jobs",
      [&service](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(service, ex);
        if (!body) return;
        auto created = service.create_job(c, *body, ex->request().header("idempotency-key"));
        if (!created) return answer(service, ex, from_error(created.error()));
        int status = created->second ? 201 : 200;
        int wait = body->is_object() && body->contains("wait_s") ? (*body)["wait_s"].get<int>() : 0;
        std::string id = created->first["id"];
        if (wait <= 0) return answer(service, ex, HttpResponse::json(status, created->first));
        service.when_finished(c.tenant.id, id, wait, [ex, c, id, status, &service] {
          answer(service, ex, service.job(c, id), status);
        });
      },
      job_body);
  add(server, service, "GET", "/v1/jobs", [&service](const ExchangePtr& ex, const Caller& c) {
    answer(service, ex, service.list_jobs(c, ex->request().query));
  });
  add(server, service, "GET", "/v1/jobs/{id}", [&service](const ExchangePtr& ex, const Caller& c) {
    answer(service, ex, service.job(c, ex->request().params.at("id")));
  });
  add(server, service, "POST", "/v1/jobs/{id}/cancel", [&service](const ExchangePtr& ex, const Caller& c) {
    answer(service, ex, service.cancel(c, ex->request().params.at("id")));
  });
  add(server, service, "POST", "/v1/jobs/{id}/requests/{request_id}/refuse",
      [&service](const ExchangePtr& ex, const Caller& c) {
        auto body = json_body(service, ex);
        if (!body) return;
        const auto& p = ex->request().params;
        answer(service, ex, service.refuse_data_request(c, p.at("id"), p.at("request_id"), *body));
      });
  add(server, service, "GET", "/v1/jobs/{id}/events", [&service, cluster](const ExchangePtr& ex, const Caller& c) {
    const auto& req = ex->request();
    std::string id = req.params.at("id");
    if (cluster && cluster->job_place) {
      if (auto no = c.lacks({"read", "admin"})) return answer(service, ex, from_error(*no));
      if (auto from = resume_offset(service, ex); !from) return;
      return forward_job_events(*cluster, ex, c, id, [&service, ex, c, id] { job_events_here(service, ex, c, id); });
    }
    job_events_here(service, ex, c, id);
  });
  add(server, service, "GET", "/v1/jobs/{id}/outputs/{name}", [&service](const ExchangePtr& ex, const Caller& c) {
    const auto& p = ex->request().params;
    auto file = service.output(c, p.at("id"), p.at("name"));
    if (!file) return answer(service, ex, from_error(file.error()));
    HttpResponse r;
    r.file = file->path;
    static const std::map<std::string, std::string> kTypes = {
        {"png", "image/png"},  {"jpeg", "image/jpeg"}, {"pdf", "application/pdf"}, {"json", "application/json"},
        {"csv", "text/csv"},   {"tsv", "text/tab-separated-values"}, {"svg", "image/svg+xml"},
        {"text", "text/plain; charset=utf-8"},
        // XML as plain text: a browser must not render a job's XHTML (and its scripts) on this origin.
        {"xml", "text/plain; charset=utf-8"}};
    auto t = kTypes.find(file->type);
    r.headers.emplace_back("Content-Type", t == kTypes.end() ? "application/octet-stream" : t->second);
    r.headers.emplace_back("X-Content-SHA256", file->sha256);
    r.headers.emplace_back("ETag", "\"sha256:" + file->sha256 + "\"");
    answer(service, ex, std::move(r));
  });
  add(server, service, "POST", "/v1/jobs/{id}/outputs/{name}/publish", [&service](const ExchangePtr& ex, const Caller& c) {
    const auto& p = ex->request().params;
    answer(service, ex, service.publish(c, p.at("id"), p.at("name")));
  });
  add(server, service, "POST", "/v1/admin/retention", [&service](const ExchangePtr& ex, const Caller& c) {
    if (!c.can("admin")) return answer(service, ex, HttpResponse::error(403, "forbidden", "this key lacks the 'admin' scope"));
    answer(service, ex, service.run_retention());
  });
}

}  // namespace airlock::service
