#include "sessions/session_service.h"

#include "pool/warm_pool.h"

#include <fcntl.h>

#include <set>

#include "base/check.h"
#include "base/json_parse.h"
#include "base/unique_fd.h"
#include "jobs/job_egress.h"
#include "jobs/record.h"
#include "jobs/state_dir.h"
#include "service/image_choice.h"
#include "service/store_retry.h"
#include "service/tenant_param.h"
#include "workspace/snapshot_tree.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

// The operator's job limits (data_requests_per_job, data_request_bytes) for
// each call, and the session's own; a tenant cannot raise them.
SessionRequestLimits request_limits(const ServiceConfig& c) {
  SessionRequestLimits limits;
  limits.per_call = c.data_request_limits;
  return limits;
}

SessionCaps session_caps(const ServiceConfig& c) {
  SessionCaps s;
  s.default_idle_timeout_s = c.session_idle_timeout_s;
  s.max_idle_timeout_s = std::max(c.session_idle_timeout_s, c.session_max_idle_timeout_s);
  s.max_lifetime_s = c.session_max_lifetime_s;
  return s;
}

}  // namespace

json session_record(const store::SessionRow& row, const std::string& closed_at, const std::string& reason,
                    json calls, const json& events) {
  uint64_t cpu_ms = 0, peak = 0;
  for (auto& call : calls) {
    // The record keeps what was run and how it ended, not what it printed.
    for (const char* k : {"stdout", "stderr", "value"}) call.erase(k);
    if (call.contains("usage") && call["usage"].is_object()) {
      cpu_ms += call["usage"].value("cpu_ms", uint64_t{0});
      peak = std::max(peak, call["usage"].value("peak_memory_bytes", uint64_t{0}));
    }
  }
  json request = parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth);
  return {{"kind", "session"},
          {"record_version", 1},
          {"id", row.id},
          {"tenant", row.tenant_id},
          {"key_id", row.key_id},
          {"request", request},
          {"snapshot", request.is_object() ? request.value("snapshot", "") : ""},
          {"created_at", row.created_at},
          {"closed_at", closed_at},
          {"close_reason", reason},
          {"calls", calls},
          {"events", events},
          {"usage", {{"calls", calls.size()}, {"cpu_ms", cpu_ms}, {"peak_memory_bytes", peak}}}};
}

SessionService::SessionService(const ServiceConfig& config, store::Store& store, JobService& jobs)
    : config_(config), store_(store), jobs_(jobs) {}

SessionService::~SessionService() { stop(); }

Status SessionService::start() {
  auto cgroups = sandbox::detect_cgroup_backend();
  if (!cgroups) return std::unexpected(cgroups.error());
  cgroups_ = std::move(*cgroups);
  // Sessions a previous run left open died with it (their sandboxes ended
  // when its sockets closed; the job service's sweep removed the rest).
  auto left = store_.open_sessions();
  if (!left) return std::unexpected(left.error());
  for (const auto& row : *left) {
    // In a cluster, other nodes' sessions are theirs (a lost node's are closed by the sweep).
    if (cluster_mode(config_) && row.node_id != config_.node_id) continue;
    (void)close_unheld(row, "service_restarted", cluster_mode(config_) ? config_.node_id : "",
                       "the service ended while the session was open");
  }
  // With the service's preloaded pool on, sessions too start from a
  // preloaded interpreter: one of their own, in this process (the pool's
  // lives in the pool's process), so a session opens with the data stack
  // imported.
  if (config_.preloaded_pool > 0) {
    interpreters_ = std::make_unique<jobs::TenantInterpreters>(
        jobs::InterpreterLimits{config_.preloaded_tenants, config_.preloaded_renew_jobs},
        [this](const std::string& image, jobs::Preload) { return start_zygote(image); });
    spares_thread_ = std::thread([this] { spares_loop(); });
  }
  housekeeping_ = std::thread([this] { housekeeping_loop(); });
  return {};
}

Status SessionService::close_unheld(const store::SessionRow& row, const std::string& reason, const std::string& node,
                                    const std::string& why) {
  auto calls = store_.session_calls(row.id);
  json list = json::array();
  if (calls)
    for (const auto& c : *calls) list.push_back(parse_json_or_discarded(c.call_json, kMaxStoredJsonDepth));
  std::string at = jobs::now_rfc3339();
  json lost = {{"event", "lost"}, {"at", at}, {"why", why}};
  if (!node.empty()) lost["node"] = node;
  json record = session_record(row, at, reason, list, json::array({lost}));
  if (!node.empty()) record["node"] = node;
  auto closed = store_.close_session(row.id, reason, at, record.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!closed) return std::unexpected(closed.error());
  return {};
}

size_t SessionService::open_count() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [id, s] : sessions_) n += !s->closed();
  return n;
}

ApiResult<std::string> SessionService::open_node_of(const Caller& c, const std::string& id) {
  auto row = readable_row(c, id);
  if (!row) return store_failure(row.error());
  if (!*row || (*row)->state != "open") return std::string();
  return (*row)->node_id;
}

void SessionService::stop() {
  std::vector<std::shared_ptr<LiveSession>> open;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, s] : sessions_) open.push_back(s);
  }
  {
    std::lock_guard lock(spares_mu_);
    spares_stopping_ = true;
  }
  spares_wake_.notify_all();
  if (spares_thread_.joinable()) spares_thread_.join();
  spares_.clear();  // each spare's sandbox: init killed, cgroup, mounts, directory removed
  wake_.notify_all();
  if (housekeeping_.joinable()) housekeeping_.join();
  for (auto& s : open) s->close("service_stopped");
  for (auto& s : open) {
    // A call that ignores the interrupt gets a new interpreter after the grace time.
    while (!s->closed()) {
      s->nudge_closing(Clock::now());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  tasks_.stop();
  std::vector<Waiter> waiting;
  std::map<std::string, std::shared_ptr<LiveSession>> ended;
  {
    std::lock_guard lock(mu_);
    waiting.swap(waiters_);
    ended.swap(sessions_);
  }
  // Outside the lock: an answer looks the call up (find() takes it).
  for (auto& w : waiting) w.done();
  open.clear();
  ended.clear();  // the last owners: joins each session's thread
  interpreters_.reset();  // after the sessions: their sandboxes die with their interpreter
}

std::shared_ptr<LiveSession> SessionService::find(const Caller& c, const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->row().tenant_id != c.tenant.id) return nullptr;
  return it->second;
}

std::shared_ptr<LiveSession> SessionService::find_readable(const Caller& c, const std::string& id) {
  if (!c.can("admin")) return find(c, id);
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

Result<std::optional<store::SessionRow>> SessionService::readable_row(const Caller& c, const std::string& id) {
  return c.can("admin") ? store_.session_of_any_tenant(id) : store_.session(c.tenant.id, id);
}

ApiResult<std::shared_ptr<LiveSession>> SessionService::open_session(const Caller& c, const std::string& id,
                                                                     Access access) {
  // Reading is for keys with "read" or "run"; changing needs "run".
  auto no = access == Access::kChange ? c.lacks({"run"}) : c.lacks({"read", "run"});
  if (no) return std::unexpected(*no);
  auto s = find(c, id);
  if (s) {
    std::string reason = s->close_reason();
    if (!reason.empty()) return api_error(409, "session_closed", "session " + id + " is closing (" + reason + ")");
    s->touch();
    return s;
  }
  auto row = store_.session(c.tenant.id, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("session " + id);
  return api_error(409, "session_closed", "session " + id + " is closed (" + (*row)->close_reason + ")");
}

void SessionService::create(const Caller& c, const json& body, Reply reply) {
  if (auto no = c.lacks({"run"})) return reply(std::unexpected(*no));
  auto request = parse_session_request(body, jobs_.caps_for(c.tenant), session_caps(config_));
  if (!request) return reply(api_error(400, "bad_request", request.error().message()));

  // The session the options are for, once it exists (the restore notes its time there).
  auto live = std::make_shared<std::weak_ptr<LiveSession>>();
  jobs::Session::Options options;
  options.policy = request->policy;
  options.state_dir = config_.state_dir;
  options.cgroups = cgroups_.get();
  auto image = accept_image(config_, c.tenant.name, request->image);
  if (!image) return reply(std::unexpected(image.error()));
  request->image = *image;  // the digest NAME means now (shown in the session's request)
  options.image = *image;
  options.image_dir = service_image_dir(config_);
  options.tenant = c.tenant.id;
  if (interpreters_)
    options.tenant_zygote = [this, tenant = c.tenant.id](const jobs::ImageSource& i) {
      return tenant_zygote(tenant, i);
    };
  options.caps = {config_.session_value_cap_bytes, config_.session_html_cap_bytes, config_.session_error_cap_bytes,
                  config_.session_figures_cap_bytes};
  if (!request->policy.allow.empty()) {
    // The destinations were checked against the tenant's caps; now the operator's files.
    auto plan = jobs::prepare_egress(request->policy.allow,
                                     {config_.egress_hosts, config_.secrets_file, config_.egress_ca});
    if (!plan) return reply(internal("egress: " + plan.error().message()));
    if (!plan->refusal.empty()) return reply(api_error(400, "input_rejected", "policy.allow: " + plan->refusal));
    options.egress = std::move(plan->config);
  }
  for (const auto& fid : request->input_ids) {
    auto f = store_.file(c.tenant.id, fid);
    if (!f) return reply(store_failure(f.error()));
    if (!*f) return reply(api_error(400, "bad_request", "inputs: no file " + fid));
    options.inputs.push_back((*f)->path);
  }
  if (!request->snapshot.empty()) {
    auto snap = store_.snapshot(c.tenant.id, request->snapshot);
    if (!snap) return reply(store_failure(snap.error()));
    if (!*snap) return reply(api_error(400, "bad_request", "snapshot: no snapshot " + request->snapshot));
    auto manifest = workspace::SnapshotManifest::from_json((*snap)->manifest_json);
    if (!manifest) return reply(internal("the stored snapshot is unreadable: " + manifest.error().message()));
    if (manifest->total_bytes() > request->policy.workspace_bytes)
      return reply(api_error(400, "bad_request", "snapshot: " + std::to_string(manifest->total_bytes()) +
                                                     " bytes do not fit the workspace of " +
                                                     std::to_string(request->policy.workspace_bytes) +
                                                     " (raise policy.workspace_mb)"));
    const store::ContentStore& contents = store_.contents();
    options.fill_workspace = [manifest = std::move(*manifest), &contents, live](int mount_fd, uid_t uid, gid_t gid) {
      auto started = Clock::now();
      UniqueFd root(::openat(mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!root) return Status(fail_errno("open the new workspace"));
      auto restored = workspace::restore_tree(manifest, contents, root.get(), uid, gid);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
      if (auto s = live->lock(); s && restored)
        s->note({{"event", "restore"}, {"digest", manifest.digest()}, {"bytes", manifest.total_bytes()},
                 {"entries", manifest.entries().size()}, {"ms", ms}});
      return restored;
    };
  }

  store::SessionRow row;
  row.id = "s" + jobs::new_job_id();
  row.tenant_id = c.tenant.id;
  row.key_id = c.key.id;
  row.request_json = session_request_json(*request).dump();
  row.created_at = jobs::now_rfc3339();
  if (cluster_mode(config_)) row.node_id = config_.node_id;  // API nodes forward its calls here
  {
    std::lock_guard lock(mu_);
    if (stopping_) return reply(api_error(503, "stopping", "the service is stopping"));
    size_t mine = 0;
    for (const auto& [id, s] : sessions_) mine += s->row().tenant_id == c.tenant.id;
    if (sessions_.size() >= config_.max_sessions)
      return reply(api_error(429, "too_many_sessions", "the service has " + std::to_string(sessions_.size()) +
                                                           " open sessions, its limit"));
    if (mine >= config_.max_sessions_per_tenant)
      return reply(api_error(429, "too_many_sessions", "the tenant has " + std::to_string(mine) +
                                                           " open sessions, its limit; close one"));
    if (auto st = store_.create_session(row); !st) return reply(store_failure(st.error()));
    jobs_.metrics().session_opened();
    LiveSession::Hooks hooks;
    hooks.call_ended = [this](const Exec& e) { call_ended(e); };
    hooks.closed = [this](LiveSession& s) { session_closed(s); };
    hooks.open = [this](const jobs::Session::Options& o) { return open_engine(o); };
    auto s = std::make_shared<LiveSession>(row, *request, std::move(options), config_.log_buffer_bytes,
                                           config_.session_kept_calls_bytes, hooks, request_limits(config_));
    *live = s;
    sessions_[row.id] = s;
    // The callback runs on the session's own thread: it must not own the
    // session (the last owner destroys it, which joins that thread).
    s->start([raw = s.get(), reply](const Status& opened) {
      if (opened) return reply(raw->view());
      std::string why = opened.error().message();
      // A refusal of the request (its image or inputs) has the kind kRefused
      // (sessions/session.cc); anything else is airlock's own failure.
      bool refused = opened.error().kind == ErrorKind::kRefused;
      reply(api_error(refused ? 400 : 500, refused ? "input_rejected" : "sandbox_error",
                      "the session could not start: " + why));
    });
  }
}

ApiResult<json> SessionService::list(const Caller& c, const std::map<std::string, std::string>& q) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  auto parsed = parse_tenant_only_query(q, {c.can("admin"), c.tenant.id, c.tenant.name});
  if (!parsed) return std::unexpected(parsed.error());
  auto tenant_id = jobs_.tenant_asked(c, *parsed);
  if (!tenant_id) return std::unexpected(tenant_id.error());
  auto rows = *tenant_id == "*" ? store_.sessions_of_every_tenant(200) : store_.sessions(*tenant_id, 200);
  if (!rows) return store_failure(rows.error());
  auto names = jobs_.tenant_names(c, *tenant_id);
  json out = json::array();
  for (const auto& row : *rows) {
    json v;
    if (auto s = find_readable(c, row.id); s && s->row().tenant_id == row.tenant_id) {
      v = s->view();
      v.erase("calls");
    } else {
      v = {{"id", row.id}, {"state", row.state}, {"created_at", row.created_at},
           {"closed_at", row.closed_at}, {"close_reason", row.close_reason}};
    }
    auto name = names.find(row.tenant_id);
    v["tenant"] = row.tenant_id;
    v["tenant_name"] = name == names.end() ? json(nullptr) : json(name->second);
    out.push_back(std::move(v));
  }
  return json{{"sessions", out}, {"scope", *tenant_id == "*" ? "all_tenants" : "tenant"}};
}

ApiResult<json> SessionService::closed_view(const store::SessionRow& row) {
  json v = {{"id", row.id}, {"tenant", row.tenant_id}, {"state", row.state}, {"created_at", row.created_at}, {"closed_at", row.closed_at},
            {"close_reason", row.close_reason}, {"request", parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth)}};
  auto rec = store_.record(row.tenant_id, row.id);
  if (!rec) return store_failure(rec.error());
  if (*rec) v["record"] = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
  return v;
}

ApiResult<json> SessionService::get(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  return view_of(c, id, c.can("admin"));
}

ApiResult<json> SessionService::view_of(const Caller& c, const std::string& id, bool any_tenant) {
  if (auto s = any_tenant ? find_readable(c, id) : find(c, id); s && !s->closed()) {
    json v = s->view();
    v["tenant"] = s->row().tenant_id;
    return v;
  }
  auto row = any_tenant ? store_.session_of_any_tenant(id) : store_.session(c.tenant.id, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("session " + id);
  return closed_view(**row);
}

void SessionService::close(const Caller& c, const std::string& id, Reply reply) {
  if (auto no = c.lacks({"run"})) return reply(std::unexpected(*no));
  auto s = find(c, id);
  // Already closed (or unknown): its view, or 404; never another tenant's
  // (an admin key reads those, and closes only its own).
  if (!s) return reply(view_of(c, id, false));
  std::string tenant = c.tenant.id;
  s->close("closed", [this, tenant, id, reply] {
    auto row = store_.session(tenant, id);
    if (!row || !*row) return reply(internal("the closed session's row is missing"));
    reply(closed_view(**row));
  });
}

ApiResult<json> SessionService::submit(const Caller& c, const std::string& id, const json& body, int* wait_s) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return std::unexpected(s.error());
  auto caps = jobs_.caps_for(c.tenant);
  auto request = parse_exec_request(body, (*s)->request().policy.timeout_ms, caps.max_timeout_ms);
  if (!request) return api_error(400, "bad_request", request.error().message());
  auto view = (*s)->submit(*request, "x" + jobs::new_job_id(), c.key.id);
  if (!view && !(*s)->close_reason().empty()) return api_error(409, "session_closed", view.error().message());
  if (!view && view.error().kind == ErrorKind::kNotFound)
    return not_found(view.error().message());
  if (!view && view.error().kind == ErrorKind::kRefused)
    return api_error(409, "already_answered", view.error().message());
  if (!view && view.error().kind == ErrorKind::kInvalid) return api_error(400, "bad_request", view.error().message());
  if (!view) return api_error(409, "busy", view.error().message());
  if (wait_s) *wait_s = request->wait_s;
  return *view;
}

ApiResult<json> SessionService::exec(const Caller& c, const std::string& id, const std::string& exec_id) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  // A closed session's calls are answered from the store, as its own view is
  // (view(), above): the live object lingers until housekeeping drops it, and
  // a caller who saw the close succeed must see the stored call.
  if (auto s = find_readable(c, id); s && !s->closed())
    if (auto view = s->exec_json(exec_id)) return *view;
  auto stored = c.can("admin") ? store_.session_call_of_any_tenant(exec_id) : store_.session_call(c.tenant.id, exec_id);
  if (!stored) return store_failure(stored.error());
  if (!*stored || (*stored)->session_id != id) return not_found("call " + exec_id);
  json call = parse_json_or_discarded((*stored)->call_json, kMaxStoredJsonDepth);
  // What the store keeps (outputs capped, figures by hash), the data
  // requests with their answers as of now.
  json view = {{"id", exec_id}, {"session_id", id}, {"state", "finished"}, {"status", call["status"]},
               {"stored", true}};
  if (call.is_object() && call.contains("data_requests")) {
    auto live = find(c, id);
    std::optional<store::SessionRow> row;
    if (!live)
      if (auto r = store_.session(c.tenant.id, id); r && *r) row = std::move(**r);
    join_answers(call["data_requests"], request_answers(live, row ? &*row : nullptr));
    view["data_requests"] = call["data_requests"];
    view["data_requests_refused"] = call.value("data_requests_refused", json::array());
  }
  view["result"] = call;
  return view;
}

ApiResult<json> SessionService::execs(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  auto live = find_readable(c, id);
  std::optional<store::SessionRow> closed;
  if (!live) {
    auto row = readable_row(c, id);
    if (!row) return store_failure(row.error());
    if (!*row) return not_found("session " + id);
    closed = std::move(*row);
  }
  json answers;  // read once, when a call has data requests
  bool answers_read = false;
  // The ended calls as stored, then those only in memory (waiting, running, just ended).
  json out = json::array();
  std::set<std::string> listed;
  auto calls = store_.session_calls(id);
  if (!calls) return store_failure(calls.error());
  for (const auto& call : *calls) {
    json j = parse_json_or_discarded(call.call_json, kMaxStoredJsonDepth);
    json entry = {{"id", call.id}, {"session_id", id}, {"state", "finished"}, {"status", j["status"]},
                  {"kind", j["kind"]}, {"created_at", j["created_at"]}, {"finished_at", j["finished_at"]}};
    if (j.is_object() && j.contains("data_requests")) {
      if (!answers_read) answers = request_answers(live, closed ? &*closed : nullptr);
      answers_read = true;
      join_answers(j["data_requests"], answers);
      entry["data_requests"] = j["data_requests"];
      entry["data_requests_refused"] = j.value("data_requests_refused", json::array());
    }
    if (j.is_object() && j.contains("answers")) entry["answers"] = j["answers"];
    out.push_back(std::move(entry));
    listed.insert(call.id);
  }
  if (live)
    for (auto& view : live->exec_jsons())
      if (!listed.count(view["id"].get<std::string>())) out.push_back(std::move(view));
  return json{{"execs", out}};
}

ApiResult<SessionService::ExecStream> SessionService::exec_stream(const Caller& c, const std::string& id,
                                                                  const std::string& exec_id) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  if (auto s = find_readable(c, id))
    if (auto e = s->exec(exec_id)) {
      // Reading keeps a session open only for its own tenant's keys.
      if (s->row().tenant_id == c.tenant.id) s->touch();
      // Called once the output is finished (the result is complete), maybe on
      // the session's own thread, without locks held: it must not own the
      // session. The service outlives every stream (its HTTP server stops first).
      return ExecStream{e->output, [this, c, id, exec_id] {
                          auto view = exec(c, id, exec_id);
                          return view ? *view : json{{"id", exec_id}, {"state", "finished"}};
                        }};
    }
  auto view = exec(c, id, exec_id);
  if (!view) return std::unexpected(view.error());
  // A call of a closed session: its stored output, then its stored result.
  auto buffer = std::make_shared<LogBuffer>(config_.log_buffer_bytes);
  buffer->append(false, (*view)["result"].value("stdout", ""));
  buffer->append(true, (*view)["result"].value("stderr", ""));
  buffer->finish();
  json final_view = *view;
  return ExecStream{buffer, [final_view] { return final_view; }};
}

void SessionService::when_exec_done(const Caller& c, const std::string& id, const std::string& exec_id,
                                    int timeout_s, std::function<void()> done) {
  auto s = find_readable(c, id);
  auto e = s ? s->exec(exec_id) : nullptr;
  std::lock_guard lock(mu_);
  if (!e || e->output->finished() || stopping_) {
    tasks_.post(std::move(done));
    return;
  }
  waiters_.push_back({e, Clock::now() + std::chrono::seconds(timeout_s), std::move(done)});
  wake_.notify_all();
}

ApiResult<json> SessionService::refuse_request(const Caller& c, const std::string& id, const std::string& request_id,
                                               const json& body) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return std::unexpected(s.error());
  if (!body.is_object() || !body.contains("reason") || !body["reason"].is_string())
    return api_error(400, "bad_request", "reason: must be a string");
  if (auto st = only_known_fields(body, "", {"reason"}); !st) return api_error(400, "bad_request", st.error().message());
  const std::string& reason = body["reason"].get_ref<const std::string&>();
  if (reason.empty() || reason.size() > 1000 || !json::accept(json(reason).dump()))
    return api_error(400, "bad_request", "reason: 1-1000 bytes");
  auto refused = (*s)->refuse_request(request_id, reason, c.key.id);
  if (!refused && refused.error().kind == ErrorKind::kNotFound) return not_found("data request " + request_id);
  if (!refused) return api_error(409, "already_answered", refused.error().message());
  return *refused;
}

json SessionService::request_answers(const std::shared_ptr<LiveSession>& live, const store::SessionRow* row) {
  if (live) return live->data_requests_json()["requests"];
  if (!row) return json::array();
  auto rec = store_.record(row->tenant_id, row->id);
  if (!rec || !*rec) return json::array();
  json record = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
  if (!record.is_object() || !record.contains("data_requests") || !record["data_requests"].is_object())
    return json::array();
  return record["data_requests"].value("requests", json::array());
}

ApiResult<json> SessionService::interrupt(const Caller& c, const std::string& id) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return std::unexpected(s.error());
  if (!(*s)->engine()) return api_error(409, "starting", "the session's sandbox is still starting");
  if (auto st = (*s)->interrupt(); !st) return internal(st.error().message());
  return (*s)->view();
}

ApiResult<json> SessionService::restart(const Caller& c, const std::string& id) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return std::unexpected(s.error());
  if (!(*s)->engine()) return api_error(409, "starting", "the session's sandbox is still starting");
  if (auto st = (*s)->restart(); !st) return internal(st.error().message());
  (*s)->note({{"event", "restart"}});
  return (*s)->view();
}

bool SessionService::stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

void SessionService::call_ended(const Exec& e) {
  store::SessionCallRow row{e.session_id, e.id, e.seq, stored_call(e).dump(-1, ' ', false, json::error_handler_t::replace)};
  // Durable before the session's next call runs: the store away for a moment is waited for.
  if (auto st = service::until_the_store_answers([&] { return store_.add_session_call(row); },
                                                 [this] { return stopping(); });
      !st)
    jobs_.log_event({{"event", "session_call_not_stored"}, {"session_id", e.session_id}, {"call_id", e.id},
                     {"error", st.error().message()}});
  jobs_.metrics().session_call(e.result.status, e.result.ms / 1000);
  wake_.notify_all();
}

json SessionService::record_of(LiveSession& s) {
  // Every ended call, from the store (memory keeps only the latest ones).
  json calls = json::array();
  auto stored = store_.session_calls(s.row().id);
  if (stored)
    for (const auto& c : *stored) calls.push_back(parse_json_or_discarded(c.call_json, kMaxStoredJsonDepth));
  // Each call's data requests with their answers at the close.
  json requests = s.data_requests_json();
  for (auto& call : calls)
    if (call.is_object() && call.contains("data_requests")) join_answers(call["data_requests"], requests["requests"]);
  json record = session_record(s.row(), s.closed_at(), s.close_reason(), calls, s.notes());
  record["data_requests"] = std::move(requests);
  if (!s.start().empty()) record["start"] = s.start();  // "preloaded" or "cold"; none: it never opened
  if (cluster_mode(config_)) record["node"] = config_.node_id;  // the worker that kept it
  return record;
}

void SessionService::session_closed(LiveSession& s) {
  jobs_.metrics().session_closed(s.close_reason());
  json record = record_of(s);
  const std::string text = record.dump(-1, ' ', false, json::error_handler_t::replace);
  // Its row closed, or its slot stays held: the store away for a moment is waited for.
  if (auto st = service::until_the_store_answers(
          [&] { return store_.close_session(s.row().id, s.close_reason(), s.closed_at(), text); },
          [this] { return stopping(); });
      !st)
    jobs_.log_event({{"event", "session_close_not_stored"}, {"session_id", s.row().id},
                     {"error", st.error().message()}});
  wake_.notify_all();  // housekeeping drops it from the map
}

void SessionService::housekeeping_loop() {
  auto next_expiry = Clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = Clock::now();
    std::vector<std::function<void()>> fire;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->exec->output->finished() || it->deadline <= now) {
        fire.push_back(std::move(it->done));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<std::pair<std::shared_ptr<LiveSession>, std::string>> due;
    std::vector<std::shared_ptr<LiveSession>> gone;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      auto& s = it->second;
      if (s->closed()) {
        gone.push_back(s);  // joined below, outside the lock
        it = sessions_.erase(it);
        continue;
      }
      if (auto reason = s->due_reason(now); !reason.empty()) due.emplace_back(s, reason);
      ++it;
    }
    std::vector<std::shared_ptr<LiveSession>> all;
    for (auto& [id, s] : sessions_) all.push_back(s);
    bool expiry_due = now >= next_expiry;
    lock.unlock();
    for (auto& f : fire) f();
    for (auto& [s, reason] : due) s->close(reason);
    for (auto& s : all) s->nudge_closing(now);
    gone.clear();
    if (expiry_due) {
      (void)expire_snapshots();
      next_expiry = now + std::chrono::seconds(config_.snapshot_expiry_interval_s);
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(200));
  }
}

}  // namespace airlock::service
