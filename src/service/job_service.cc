#include "service/job_service.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "jobs/outcome.h"
#include "jobs/record.h"
#include "jobs/state_dir.h"
#include "sandbox/cgroup.h"
#include "service/data_request_answers.h"
#include "service/descriptor_budget.h"
#include "service/image_choice.h"
#include "service/job_query.h"
#include "service/job_runner.h"
#include "service/move_file.h"
#include "service/upload_check.h"
#include "sys/descriptors.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"
#include "validate/checks.h"
#include "workspace/file_type.h"
#include "workspace/manifest.h"
#include "workspace/names.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string state_name(store::JobState s) {
  switch (s) {
    case store::JobState::kQueued: return "queued";
    case store::JobState::kRunning: return "running";
    case store::JobState::kFinished: return "finished";
  }
  return "finished";
}

PolicyCaps caps_of(const store::TenantLimits& l) {
  PolicyCaps caps;
  caps.max_timeout_ms = l.max_timeout_ms;
  caps.max_cpu_time_ms = l.max_cpu_time_ms;
  caps.max_memory_bytes = l.max_memory_bytes;
  caps.max_pids = static_cast<uint64_t>(l.max_pids);
  return caps;
}

// Seconds between two RFC 3339 stamps of ours (same format, UTC).
double seconds_between(const std::string& a, const std::string& b) {
  auto parse = [](const std::string& t) -> double {
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &ms) != 7)
      return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(timegm(&tm)) + ms / 1000.0;
  };
  return std::max(0.0, parse(b) - parse(a));
}

// The command a stored request names ("code" jobs keep theirs in the parsed request).
std::vector<std::string> stored_command(const std::string& request_json) {
  std::vector<std::string> command;
  auto req = parse_json_or_discarded(request_json, kMaxStoredJsonDepth);
  if (req.is_discarded() || !req.contains("command") || !req["command"].is_array()) return command;
  for (const auto& word : req["command"])
    if (word.is_string()) command.push_back(word.get<std::string>());
  return command;
}

// The record as the store keeps it (program output that is not UTF-8 is base64 already).
std::string stored_text(const jobs::JobRecord& rec) {
  return jobs::to_json(rec).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string file_dir(const ServiceConfig& c, const std::string& id) { return content_dir(c) + "/files/" + id; }
std::string work_dir(const ServiceConfig& c, const std::string& id) { return c.work_dir + "/" + id; }

Status empty_work_dir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return fail_errno("open " + dir);
  return sys::empty_dir(fd.get());
}

}  // namespace

JobService::JobService(ServiceConfig config, store::Store& store)
    : config_(std::move(config)),
      store_(store),
      queue_(config_.max_running ? config_.max_running : std::max(1u, std::thread::hardware_concurrency()),
             config_.max_queued) {
  if (config_.max_running == 0) config_.max_running = std::max(1u, std::thread::hardware_concurrency());
  if (config_.work_dir.empty())
    config_.work_dir = "/run/airlock/work/" + Sha256::of(node_dir(config_)).substr(0, 12);
}

JobService::~JobService() { stop(); }

Status JobService::start() {
  // Request bodies a killed service was still receiving (no request is in flight before the server starts).
  const std::string spool = node_dir(config_) + "/spool";
  (void)sys::remove_tree(spool);
  for (const auto& d : {config_.data_dir, content_dir(config_), content_dir(config_) + "/files", config_.work_dir,
                        node_dir(config_), spool, config_.data_dir + "/spool"})
    if (auto st = sys::make_dirs(d, 0700); !st) return st;
  // The work directory is this node's own (docs/service.md, work_dir), and
  // no job runs here yet: what is in it was left by a previous life of this
  // node that was killed, whoever ended its jobs since (this node below, or
  // another node's sweep that declared it lost).
  if (auto st = empty_work_dir(config_.work_dir); !st)
    log({{"event", "work_dir_not_emptied"}, {"dir", config_.work_dir}, {"error", st.error().message()}});
  // What a killed service left: its sandboxes died with it (parent-death
  // signal); the sweep removes their cgroups and job directories; the jobs
  // end as sandbox_error.
  // An API node runs no job.
  if (config_.role == Role::kApi) {
    cgroups_error_ = "this is an API node: it runs no job";
  } else if (auto cgroups = sandbox::detect_cgroup_backend(); cgroups) {
    cgroups_ = std::move(*cgroups);
    (void)jobs::sweep(config_.state_dir, *cgroups_);
  } else {
    cgroups_error_ = "no usable cgroup hierarchy: " + cgroups.error().message();  // every job ends with it
  }
  runner_.state_dir = config_.state_dir;
  runner_.cgroups = cgroups_.get();
  runner_.image_dir = service_image_dir(config_);
  runner_.egress_hosts_file = config_.egress_hosts;
  runner_.secrets_file = config_.secrets_file;
  runner_.egress_ca_file = config_.egress_ca;
  runner_.content_dir = store_.contents().root();
  runner_.check_limits = config_.check_limits;
  runner_.data_request_limits = config_.data_request_limits;
  runner_.pdf = {.airlock_binary = config_.airlock_binary.empty() ? "/proc/self/exe" : config_.airlock_binary,
                 .state_dir = config_.state_dir,
                 .scratch_dir = "",
                 .image = config_.pdf_check_image,
                 .image_args = {"--image-dir", service_image_dir(config_)}};
  if (!config_.checkpoint_key.empty() || !config_.checkpoint_file.empty()) {
    if (config_.checkpoint_key.empty() || config_.checkpoint_file.empty())
      return fail("checkpoint_key and checkpoint_file go together");
    auto writer = CheckpointWriter::open(config_.checkpoint_key, config_.checkpoint_file, config_.data_dir);
    if (!writer) return std::unexpected(writer.error());
    checkpoints_.emplace(std::move(*writer));
  }
  // Cluster mode: the queue is the store's, and other nodes' jobs are in it.
  if (cluster()) return start_cluster();
  auto left = store_.unfinished_jobs();
  if (!left) return std::unexpected(left.error());
  for (const auto& row : *left) {
    if (row.state == store::JobState::kQueued) {
      // It never started: it queues again, in the order it was created
      // (unfinished_jobs() is oldest first) and is scheduled as fairly as
      // before; restore() skips the caps it was admitted under.
      auto tenant = store_.tenant(row.tenant_id);
      if (tenant && *tenant) {
        std::lock_guard lock(mu_);
        remember_share(**tenant);
        queue_.restore({row.id, row.tenant_id});
        continue;
      }
    }
    finish_without_running(row, jobs::Outcome::kSandboxError, "service restarted");
    (void)sys::remove_tree(work_dir(config_, row.id));
  }
  for (size_t i = 0; i < config_.max_running; ++i) workers_.emplace_back([this] { worker_loop(); });
  housekeeping_ = std::thread([this] { housekeeping_loop(); });
  return {};
}

void JobService::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, c] : running_) (void)c->fire();
  }
  work_.notify_all();
  housekeeping_wake_.notify_all();
  if (claims_) claims_->close();
  for (auto& t : workers_) t.join();
  workers_.clear();
  if (housekeeping_.joinable()) housekeeping_.join();
  if (notifier_thread_.joinable()) notifier_thread_.join();
  if (pulse_) {
    pulse_->stop();
    // Whatever it still had claimed goes back to the queue; the others see it left.
    if (!left_cluster_) {
      left_cluster_ = true;
      if (auto st = store_.leave_node(config_.node_id); !st)
        log({{"event", "leave_failed"}, {"node", config_.node_id}, {"error", st.error().message()}});
    }
    pulse_.reset();
  }
  retry_unstored();
  write_checkpoints();  // the heads as the service leaves them
  std::lock_guard lock(mu_);
  for (const auto& e : unstored_)  // the next start ends these jobs as sandbox_error
    log({{"event", "record_lost"}, {"job_id", e.job_id}, {"tenant", e.tenant_id},
         {"outcome", jobs::outcome_name(e.outcome)}});
  unstored_.clear();
  ::rmdir(config_.work_dir.c_str());  // only if empty: a job's scratch is removed with the job
}

ApiResult<Caller> JobService::authenticate(const std::string& header) {
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return api_error(401, "unauthenticated", "send Authorization: Bearer <api key>");
  auto key = store_.authenticate(header.substr(prefix.size()));
  if (!key) return store_failure(key.error());
  if (!*key) return api_error(401, "unauthenticated", "unknown or revoked API key");
  auto tenant = store_.tenant((*key)->tenant_id);
  if (!tenant) return store_failure(tenant.error());
  if (!*tenant) return api_error(401, "unauthenticated", "the key's tenant no longer exists");
  return Caller{**key, **tenant};
}

ApiResult<json> JobService::upload_file(const Caller& c, const std::string& name, const std::string& spooled,
                                        uint64_t size) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  if (auto why = workspace::check_component(name))
    return api_error(400, "bad_name", "file name \"" + workspace::printable(name) + "\": " + *why);
  // The same policy airlock run admits inputs under.
  auto checked = check_upload(name, spooled, size, workspace::InputPolicy{});
  if (!checked) return std::unexpected(checked.error());
  const uint64_t quota = tenant_storage_bytes(config_, c.tenant.name);
  auto used = store_.storage_usage(c.tenant.id);
  if (!used) return store_failure(used.error());
  if (checked->size > quota || used->total() > quota - checked->size)
    return api_error(413, "storage_quota", "file \"" + name + "\": " + std::to_string(checked->size) +
                                               " bytes; the tenant keeps " + std::to_string(used->total()) +
                                               " of its " + std::to_string(quota) + " bytes (tenant_storage_mb)");
  store::FileRow row;
  row.id = jobs::new_job_id();
  row.tenant_id = c.tenant.id;
  row.name = name;
  row.size = checked->size;
  row.sha256 = checked->sha256;
  std::string dir = file_dir(config_, row.id);
  if (auto st = sys::make_dirs(dir, 0755); !st) return storage_failure(st.error());
  row.path = dir + "/" + name;
  if (auto moved = move_file(spooled, row.path); !moved) {
    (void)sys::remove_tree(dir);
    return storage_failure(moved.error());
  }
  ::chmod(row.path.c_str(), 0444);
  row.created_at = jobs::now_rfc3339();
  auto added = store_.add_file(row);
  if (!added) {
    (void)sys::remove_tree(dir);
    return storage_failure(added.error());
  }
  return json{{"id", added->id},         {"name", added->name},
              {"size", added->size},     {"sha256", added->sha256},
              {"type", checked->type}, {"created_at", added->created_at}};
}

ApiResult<std::pair<json, bool>> JobService::create_job(const Caller& c, const json& body,
                                                        const std::string& idempotency_key) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  if (idempotency_key.size() > 200) return api_error(400, "bad_request", "Idempotency-Key: at most 200 bytes");
  auto request = parse_job_request(body, caps_for(c.tenant));
  if (!request) return api_error(400, "bad_request", request.error().message());
  for (const auto& id : request->input_ids) {
    auto f = store_.file(c.tenant.id, id);
    if (!f) return store_failure(f.error());
    if (!*f) return api_error(400, "bad_request", "inputs: no file " + id);
  }
  if (!request->snapshot.empty()) {
    auto snap = store_.snapshot(c.tenant.id, request->snapshot);
    if (!snap) return store_failure(snap.error());
    if (!*snap) return api_error(400, "bad_request", "snapshot: no snapshot " + request->snapshot);
  }
  if (!validate::parse_checks(request->checks))
    return api_error(400, "bad_request", "checks: " + validate::parse_checks(request->checks).error().message());
  auto image = accept_image(config_, c.tenant.name, request->image);
  if (!image) return std::unexpected(image.error());
  json accepted = body;
  accepted["image"] = *image;  // the digest NAME means now: the job runs on it
  if (request->answers) {
    // A follow-up: the requests it answers must be the caller's tenant's. Whether
    // they are still open is decided with the job's creation (below), after the
    // idempotency lookup: a retry of an accepted follow-up gets that follow-up.
    auto hash = answerable_record_hash(c, request->answers->job, request->answers->requests, false);
    if (!hash) return std::unexpected(hash.error());
    accepted["answers"]["record_sha256"] = *hash;
  }

  store::JobRow row;
  json created_view;
  bool newly_created = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return api_error(503, "unavailable", "the service is stopping");
    row.id = jobs::new_job_id();
    row.tenant_id = c.tenant.id;
    row.key_id = c.key.id;
    row.state = store::JobState::kQueued;
    row.request_json = accepted.dump();
    row.idempotency_key = idempotency_key;
    row.created_at = jobs::now_rfc3339();
    // Capacity first, so a refused request leaves nothing behind.
    row.image = *image;  // for placement: a worker with it warm claims first
    QueuedJob q{row.id, c.tenant.id};
    if (cluster()) {
      if (auto admitted = admit_in_store(c.tenant); !admitted) return std::unexpected(admitted.error());
    } else {
      const size_t tenant_cap = std::min(static_cast<size_t>(std::max(0, c.tenant.limits.max_queued)),
                                         tenant_max_queued(config_, c.tenant.name));
      if (auto why = queue_.admit(q, tenant_cap))
        return api_error(429, "overloaded", "tenant " + c.tenant.name + ": " + *why);
    }
    remember_share(c.tenant);
    // A follow-up's answers are written with the job, before any worker can take
    // it: if another request answered one of them meanwhile, there is no job.
    std::vector<store::DataRequestAnswer> answers;
    if (request->answers)
      for (const auto& id : request->answers->requests)
        answers.push_back({c.tenant.id, request->answers->job, id, store::AnswerState::kAnswered, row.id, "",
                           c.key.id, row.created_at});
    auto created = store_.create_job(row, answers);
    if (!created) {
      queue_.remove(row.id);
      if (request->answers && created.error().kind == ErrorKind::kRefused)
        return api_error(409, "already_answered", created.error().message());
      return storage_failure(created.error());
    }
    if (!created->second) {
      queue_.remove(row.id);  // idempotent replay: the earlier job stands
    } else {
      json event = {{"event", "job_queued"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"key_id", row.key_id}};
      if (request->answers) event["answers"] = request->answers->job;
      log(event);
      work_.notify_one();
    }
    newly_created = created->second;
    created_view = view(created->first);
  }
  return std::pair{created_view, newly_created};
}

ApiResult<std::string> JobService::answerable_record_hash(const Caller& c, const std::string& job_id,
                                                         const std::vector<std::string>& request_ids,
                                                         bool open_only) {
  auto first = store_.job(c.tenant.id, job_id);  // another tenant's job answers as missing
  if (!first) return store_failure(first.error());
  if (!*first) return not_found("job " + job_id);
  if ((*first)->state != store::JobState::kFinished)
    return api_error(409, "not_finished", "job " + job_id + " has not finished");
  auto rec = store_.record(c.tenant.id, job_id);
  if (!rec) return store_failure(rec.error());
  if (!*rec) return api_error(409, "not_finished", "job " + job_id + " has no record yet");
  auto answers = store_.data_request_answers(c.tenant.id, job_id);
  if (!answers) return store_failure(answers.error());
  auto record = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
  if (!open_only) answers->clear();  // the caller writes its answers where an answered one refuses them
  if (auto why = unanswerable(job_id, record, request_ids, *answers)) return std::unexpected(*why);
  return (*rec)->hash;
}

ApiResult<json> JobService::refuse_data_request(const Caller& c, const std::string& job_id,
                                                const std::string& request_id, const json& body) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  if (auto why = refusal_reason_problem(body)) return api_error(400, "bad_request", *why);
  auto hash = answerable_record_hash(c, job_id, {request_id});
  if (!hash) return std::unexpected(hash.error());
  store::DataRequestAnswer a{c.tenant.id, job_id, request_id, store::AnswerState::kRefused, "",
                             body["reason"].get<std::string>(), c.key.id, jobs::now_rfc3339()};
  if (auto st = store_.answer_data_requests({a}); !st) {
    if (st.error().kind == ErrorKind::kRefused) return api_error(409, "already_answered", st.error().message());
    return storage_failure(st.error());
  }
  log({{"event", "data_request_refused"}, {"job_id", job_id}, {"request_id", request_id}, {"tenant", c.tenant.id},
       {"key_id", c.key.id}});
  auto row = store_.job(c.tenant.id, job_id);
  if (!row || !*row) return internal("job vanished");
  return view(**row);
}

json JobService::view(const store::JobRow& row) {
  json v = {{"id", row.id},
            {"tenant", row.tenant_id},
            {"key_id", row.key_id},
            {"state", state_name(row.state)},
            {"created_at", row.created_at},
            {"started_at", row.started_at.empty() ? json(nullptr) : json(row.started_at)},
            {"finished_at", row.finished_at.empty() ? json(nullptr) : json(row.finished_at)},
            {"outcome", row.outcome.empty() ? json(nullptr) : json(row.outcome)}};
  // A code job's code, as it was accepted (the record names only the file it ran).
  auto request = parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth);
  if (request.is_object() && request.contains("code") && request["code"].is_string()) v["code"] = request["code"];
  if (row.state == store::JobState::kFinished) {
    auto rec = store_.record(row.tenant_id, row.id);
    if (rec && *rec) v["record"] = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
    // What the job asked the application for, and what became of each request.
    if (v.contains("record") && v["record"].is_object() && v["record"].contains("data_requests")) {
      auto answers = store_.data_request_answers(row.tenant_id, row.id);
      v["data_requests"] = data_requests_view(v["record"], answers ? *answers : std::vector<store::DataRequestAnswer>{});
    }
  }
  return v;
}

Result<std::optional<store::JobRow>> JobService::readable_job(const Caller& c, const std::string& id) {
  // An admin key reads every tenant's jobs; any other key only its own (another's answers as missing).
  return c.can("admin") ? store_.job_of_any_tenant(id) : store_.job(c.tenant.id, id);
}

ApiResult<json> JobService::job(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read", "admin"})) return std::unexpected(*no);
  auto row = readable_job(c, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("job " + id);
  return view(**row);
}

ApiResult<std::string> JobService::tenant_asked(const Caller& c, const std::string& parsed) {
  if (parsed.empty()) return c.tenant.id;
  if (parsed == "*") return parsed;
  auto t = store_.tenant(parsed);
  if (t && !*t) t = store_.tenant_by_name(parsed);
  if (!t) return store_failure(t.error());
  if (!*t) return not_found("tenant " + workspace::printable(parsed));
  return (*t)->id;
}

std::map<std::string, std::string> JobService::tenant_names(const Caller& c, const std::string& tenant_id) {
  // Names for the dashboard's tenant column (ids alone do not tell an operator much).
  std::map<std::string, std::string> names{{c.tenant.id, c.tenant.name}};
  if (tenant_id == "*") {
    if (auto all = store_.tenants())
      for (const auto& t : *all) names[t.id] = t.name;
  } else if (!names.contains(tenant_id)) {
    if (auto t = store_.tenant(tenant_id); t && *t) names[tenant_id] = (*t)->name;
  }
  return names;
}

ApiResult<json> JobService::list_jobs(const Caller& c, const std::map<std::string, std::string>& q) {
  if (auto no = c.lacks({"read", "admin"})) return std::unexpected(*no);
  auto query = parse_job_query(q, {c.can("admin"), c.tenant.id, c.tenant.name});
  if (!query) return std::unexpected(query.error());
  auto asked = tenant_asked(c, query->tenant);
  if (!asked) return std::unexpected(asked.error());
  const std::string& tenant_id = *asked;
  auto page = tenant_id == "*" ? store_.jobs_of_every_tenant(query->filter) : store_.jobs(tenant_id, query->filter);
  if (!page) return api_error(400, "bad_request", page.error().message());
  auto names = tenant_names(c, tenant_id);
  json jobs = json::array();
  for (const auto& row : page->jobs) {
    auto name = names.find(row.tenant_id);
    auto request = parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth);
    json image = request.is_object() && request.contains("image") && request["image"].is_string() ? request["image"]
                                                                                                  : json(nullptr);
    json v = {{"id", row.id},         {"tenant", row.tenant_id},
              {"state", state_name(row.state)}, {"created_at", row.created_at},
              {"image", image},       {"outcome", row.outcome.empty() ? json(nullptr) : json(row.outcome)},
              {"tenant_name", name == names.end() ? json(nullptr) : json(name->second)}};
    jobs.push_back(v);
  }
  return json{{"jobs", jobs},
              {"scope", tenant_id == "*" ? "all_tenants" : "tenant"},
              {"next_cursor", page->next_cursor.empty() ? json(nullptr) : json(page->next_cursor)}};
}

ApiResult<json> JobService::cancel(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("job " + id);
  bool was_queued = false;
  if (cluster()) {
    // The job's worker sees the request in its next heartbeat (or at once by notification).
    auto asked = store_.request_cancel(id);
    if (!asked) return store_failure(asked.error());
    if (*asked) return json{{"id", id}, {"state", "running"}, {"cancel", "requested"}};
    was_queued = (*row)->state == store::JobState::kQueued;  // unclaimed: it ends here, as on one node
  } else {
    std::lock_guard lock(mu_);
    if (queue_.remove(id)) {
      was_queued = true;
    } else if (auto it = running_.find(id); it != running_.end()) {
      // Taken by a worker: cancelled at once if it runs, as soon as it starts if not yet.
      (void)it->second->fire();
      return json{{"id", id}, {"state", "running"}, {"cancel", "requested"}};
    }
  }
  if (was_queued) finish_without_running(**row, jobs::Outcome::kCancelled, "cancelled before it started");
  auto now = store_.job(c.tenant.id, id);
  if (!now || !*now) return internal("job vanished");
  return view(**now);
}

ApiResult<OutputFile> JobService::output(const Caller& c, const std::string& id, const std::string& name) {
  if (auto no = c.lacks({"read", "admin"})) return std::unexpected(*no);
  auto row = readable_job(c, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("job " + id);
  auto arts = store_.artifacts(id);
  if (!arts) return store_failure(arts.error());
  for (const auto& a : *arts) {
    if (a.name == name) return OutputFile{store_.artifact_path(a.sha256), a.name, a.sha256, a.type, a.size};
  }
  return not_found("accepted output " + workspace::printable(name));
}

ApiResult<json> JobService::publish(const Caller& c, const std::string& id, const std::string& name) {
  if (auto no = c.lacks({"publish"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("job " + id);
  if ((*row)->state != store::JobState::kFinished)
    return api_error(409, "not_finished", "the job has not finished");
  if ((*row)->outcome != jobs::outcome_name(jobs::Outcome::kSucceeded))
    return api_error(409, "not_publishable", "only outputs of a job that succeeded can be published (outcome: " +
                                                 (*row)->outcome + ")");
  auto file = output(c, id, name);
  if (!file) return std::unexpected(file.error());
  std::string at = jobs::now_rfc3339();
  if (auto st = store_.publish(id, name, c.key.id, at); !st) return storage_failure(st.error());
  return json{{"job", id}, {"name", name}, {"sha256", file->sha256}, {"published_by", c.key.id}, {"published_at", at}};
}

ApiResult<json> JobService::usage(const Caller& c, const std::string& from, const std::string& to) {
  if (auto no = c.lacks({"read", "admin"})) return std::unexpected(*no);
  auto u = store_.usage(c.tenant.id, from, to);
  if (!u) return store_failure(u.error());
  auto kept = store_.storage_usage(c.tenant.id);
  if (!kept) return store_failure(kept.error());
  json storage = {{"artifacts_bytes", kept->artifacts}, {"snapshots_bytes", kept->snapshots},
                  {"uploads_bytes", kept->uploads},     {"total_bytes", kept->total()},
                  {"quota_bytes", tenant_storage_bytes(config_, c.tenant.name)}};
  return json{{"tenant", c.tenant.id}, {"from", from}, {"to", to}, {"jobs", u->jobs}, {"cpu_ms", u->cpu_ms},
              {"wall_ms", u->wall_ms}, {"peak_memory_bytes", u->peak_memory_bytes}, {"by_outcome", u->by_outcome},
              {"storage", storage}};
}

ApiResult<std::shared_ptr<LogBuffer>> JobService::output_stream(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read", "admin"})) return std::unexpected(*no);
  auto row = readable_job(c, id);
  if (!row) return store_failure(row.error());
  if (!*row) return not_found("job " + id);
  {
    std::lock_guard lock(mu_);
    if (auto it = live_.find(id); it != live_.end()) return it->second;
    if ((*row)->state != store::JobState::kFinished) {
      // Queued: its buffer exists from now on and fills when it runs.
      auto buffer = std::make_shared<LogBuffer>(config_.log_buffer_bytes);
      live_[id] = buffer;
      return buffer;
    }
  }
  // Finished and no longer in memory: replay the record's capped output.
  auto buffer = std::make_shared<LogBuffer>(config_.log_buffer_bytes);
  replay_record(*buffer, (*row)->tenant_id, id);
  buffer->finish();
  return buffer;
}

void JobService::replay_record(LogBuffer& buffer, const std::string& tenant_id, const std::string& job_id) {
  auto rec = store_.record(tenant_id, job_id);
  if (!rec || !*rec) return;
  auto j = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
  if (j.is_discarded()) return;
  for (bool is_stderr : {false, true}) {
    const char* key = is_stderr ? "stderr" : "stdout";
    if (auto bytes = j.contains(key) ? jobs::stream_bytes(j[key]) : std::nullopt) buffer.append(is_stderr, *bytes);
  }
}

void JobService::when_finished(const std::string& tenant_id, const std::string& job_id, int timeout_s,
                               std::function<void()> done) {
  {
    // Under mu_, against job_ended(): either the store already says finished,
    // or job_ended() will find this waiter.
    std::lock_guard lock(mu_);
    auto row = store_.job(tenant_id, job_id);
    bool finished = !row || !*row || (*row)->state == store::JobState::kFinished;
    if (!finished && timeout_s > 0) {
      waiters_.push_back({job_id, Clock::now() + std::chrono::seconds(timeout_s), std::move(done)});
      housekeeping_wake_.notify_all();
      return;
    }
  }
  done();
}

PolicyCaps JobService::caps_for(const store::Tenant& tenant) const {
  PolicyCaps caps = caps_of(tenant.limits);
  if (auto it = config_.egress_caps.find(tenant.name); it != config_.egress_caps.end()) caps.network = it->second;
  return caps;
}

void JobService::remember_share(const store::Tenant& tenant) {
  tenant_shares_[tenant.id] = {static_cast<size_t>(std::max(1, tenant.limits.max_running)),
                               tenant_weight(config_, tenant.name)};
}

TenantShare JobService::tenant_share(const std::string& tenant_id) {
  auto it = tenant_shares_.find(tenant_id);
  return it == tenant_shares_.end() ? TenantShare{} : it->second;
}

bool JobService::descriptors_for_a_job() {
  auto free = sys::free_descriptors();
  if (!free || *free >= kDescriptorsPerJob) {  // (cannot count: do not stall the queue)
    descriptor_wait_logged_ = false;
    return true;
  }
  if (!descriptor_wait_logged_)
    log({{"event", "job_waits_for_descriptors"}, {"free", *free}, {"needed", kDescriptorsPerJob}});
  descriptor_wait_logged_ = true;
  return false;
}

void JobService::worker_loop() {
  for (;;) {
    QueuedJob job;
    std::optional<JobCancel> cancel;
    std::string cancel_error;
    {
      std::unique_lock lock(mu_);
      std::optional<QueuedJob> next;
      // A job that cannot have its descriptors waits in the queue (checked
      // again every 100 ms) instead of failing for want of a pipe.
      while (!work_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        if (stopping_) return true;
        if (queue_.queued() > 0 && !descriptors_for_a_job()) return false;
        next = queue_.take([this](const std::string& t) { return tenant_share(t); });
        return next.has_value();
      })) {
      }
      if (stopping_ && !next) return;
      job = *next;
      // Cancellable from the moment it leaves the queue (under mu_, as cancel() looks).
      auto made = JobCancel::create();
      if (made) {
        cancel.emplace(std::move(*made));
        running_[job.job_id] = &*cancel;
      } else {
        cancel_error = made.error().message();
      }
    }
    run_one(job, cancel ? &*cancel : nullptr, cancel_error);
    {
      std::lock_guard lock(mu_);
      running_.erase(job.job_id);
      queue_.finished(job.tenant_id);
    }
    work_.notify_all();
  }
}

void JobService::finish_without_running(const store::JobRow& row, jobs::Outcome outcome, const std::string& reason,
                                        const std::string& node) {
  jobs::JobRecord rec = record_without_run(row.id, stored_command(row.request_json), outcome, reason,
                                           row.started_at.empty() ? row.created_at : row.started_at);
  rec.service = jobs::JobRecord::ServiceSide{row.tenant_id, row.key_id, row.created_at, row.started_at,
                                             rec.finished_at, {}, node.empty() ? config_.node_id : node};
  const std::string name(jobs::outcome_name(outcome));
  metrics_.job_finished(name, 0);
  log({{"event", "job_finished"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"outcome", name},
       {"reason", reason}, {"node", node.empty() ? config_.node_id : node}});
  store_ending({row.id, row.tenant_id, outcome, rec.finished_at, stored_text(rec), {}});
}

void JobService::store_ending(Ending e) {
  auto stored = store_.finish_job(e.job_id, std::string(jobs::outcome_name(e.outcome)), e.finished_at, e.record,
                                  e.artifacts);
  if (stored) return job_ended(e.job_id);
  // A failure of the store (a full disk, an I/O error, a lost connection, a
  // server restarting) passes; a refusal (already finished) does not.
  bool keep = store_may_pass_later(stored.error());
  log({{"event", "record_not_stored"}, {"job_id", e.job_id}, {"tenant", e.tenant_id},
       {"error", stored.error().message()}, {"kept", keep}});
  if (!keep) return job_ended(e.job_id);
  std::lock_guard lock(mu_);
  unstored_.push_back(std::move(e));
}

void JobService::retry_unstored() {
  std::vector<Ending> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(unstored_);
  }
  for (auto& e : pending) {
    auto stored = store_.finish_job(e.job_id, std::string(jobs::outcome_name(e.outcome)), e.finished_at, e.record,
                                    e.artifacts);
    if (stored || !store_may_pass_later(stored.error())) {
      // Stored, or refused: its first try may have committed with the answer
      // lost, or another node ended the job meanwhile (it was declared lost).
      if (stored) log({{"event", "record_stored"}, {"job_id", e.job_id}, {"tenant", e.tenant_id}});
      else log({{"event", "record_refused"}, {"job_id", e.job_id}, {"tenant", e.tenant_id},
                {"error", stored.error().message()}});
      job_ended(e.job_id);
    } else {
      std::lock_guard lock(mu_);
      unstored_.push_back(std::move(e));
    }
  }
}

void JobService::job_ended(const std::string& job_id) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    if (auto it = live_.find(job_id); it != live_.end()) it->second->finish();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->job_id == job_id) {
        ready.push_back(std::move(it->done));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& f : ready) f();
}

void JobService::run_one(const QueuedJob& q, JobCancel* cancel, const std::string& cancel_error) {
  auto t_taken = Clock::now();
  // The store may be away for a moment: the job waits for it rather than being dropped.
  auto row_r = when_store_answers([&] { return store_.job(q.tenant_id, q.job_id); });
  if (!row_r || !*row_r) {
    if (!row_r) log({{"event", "job_not_read"}, {"job_id", q.job_id}, {"error", row_r.error().message()}});
    return;
  }
  store::JobRow row = **row_r;
  auto tenant = store_.tenant(q.tenant_id);
  const bool known_tenant = tenant && *tenant;
  auto request = parse_job_request(parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth),
                                   known_tenant ? caps_for(**tenant) : PolicyCaps{});
  std::shared_ptr<LogBuffer> live;
  {
    std::lock_guard lock(mu_);
    auto& slot = live_[row.id];
    if (!slot) slot = std::make_shared<LogBuffer>(config_.log_buffer_bytes);
    live = slot;
  }
  // In cluster mode only the node that claimed the job may start it, and
  // before anything else is done with it: a claim the sweeper took back
  // (this node was late with its heartbeat) is dropped, never run twice nor
  // ended here.
  if (cluster()) {
    // A cancel that raced the claim: the job ends here, cancelled, never started.
    if (row.cancel_requested && row.node_id == config_.node_id)
      return finish_without_running(row, jobs::Outcome::kCancelled, "cancelled before it started");
    row.started_at = jobs::now_rfc3339();
    if (auto st = when_store_answers([&] { return store_.mark_running(row.id, ::getpid(), row.started_at,
                                                                      config_.node_id); });
        !st) {
      log({{"event", "claim_lost"}, {"job_id", row.id}, {"node", config_.node_id}, {"error", st.error().message()}});
      return;
    }
  }
  auto fail_job = [&](const std::string& why) { finish_without_running(row, jobs::Outcome::kSandboxError, why); };
  if (!cancel) return fail_job(cancel_error);
  if (!cgroups_) return fail_job(cgroups_error_);
  if (!request) return fail_job("the stored request no longer parses: " + request.error().message());
  if (cancel->fired()) return finish_without_running(row, jobs::Outcome::kCancelled, "cancelled before it started");

  std::vector<std::pair<std::string, std::string>> inputs;
  for (const auto& id : request->input_ids) {
    auto f = store_.file(row.tenant_id, id);
    if (!f || !*f) return fail_job("input file " + id + " is gone");
    inputs.emplace_back((*f)->name, (*f)->path);
  }
  std::optional<std::string> snapshot_manifest;
  if (!request->snapshot.empty()) {
    // /workspace starts as the snapshot: the engine restores it from the content directory.
    auto snap = store_.snapshot(row.tenant_id, request->snapshot);
    if (!snap) return fail_job(snap.error().message());
    if (!*snap) {
      return finish_without_running(row, jobs::Outcome::kInputRejected,
                                    "snapshot " + request->snapshot + " was removed before the job ran");
    }
    snapshot_manifest = (*snap)->manifest_json;
  }
  std::string dir = work_dir(config_, row.id);
  if (auto st = sys::make_dirs(dir + "/out", 0700); !st) return fail_job(st.error().message());

  if (!cluster()) {
    row.started_at = jobs::now_rfc3339();
    if (auto st = when_store_answers([&] { return store_.mark_running(row.id, ::getpid(), row.started_at); });
        !st)  // the job runs; its row says queued
      log({{"event", "mark_running_failed"}, {"job_id", row.id}, {"error", st.error().message()}});
  }
  log({{"event", "job_started"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"node", config_.node_id}});
  metrics_.job_started(seconds_between(row.created_at, row.started_at));

  const std::string tenant_name = known_tenant ? (*tenant)->name : "";
  RunnerJob job{*request,   dir,    std::move(inputs), std::move(snapshot_manifest), *live, cancel->fd(),
                store_,     row.id, row.tenant_id,     tenant_storage_bytes(config_, tenant_name)};
  auto t_runner = Clock::now();
  RunnerResult ran = run_service_job(runner_, job);
  auto t_returned = Clock::now();

  jobs::JobRecord& rec = ran.record;
  if (request->answers)
    rec.answers = jobs::JobRecord::Answers{request->answers->job, request->answers->requests,
                                           request->answers->record_sha256};
  const std::string finished_at = jobs::now_rfc3339();
  rec.service = jobs::JobRecord::ServiceSide{row.tenant_id, row.key_id, row.created_at, row.started_at, finished_at,
                                             {}, config_.node_id};
  // The service's own share of the job's time, beside the engine's "timing".
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  auto runner_ms = [&](const char* phase) {
    for (const auto& [name, v] : ran.timing.phases)
      if (name == phase) return v;
    return 0.0;
  };
  jobs::Timing& t = rec.service->timing;
  t.add("queue", ms(q.admitted, t_taken));
  t.add("prepare", ms(t_taken, t_runner) + runner_ms("prepare"));
  t.add("run", runner_ms("run"));
  t.add("finish", runner_ms("finish") + ms(t_returned, Clock::now()));

  const std::string outcome(jobs::outcome_name(rec.outcome));
  log({{"event", "job_finished"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"outcome", outcome},
       {"node", config_.node_id}});
  metrics_.job_finished(outcome, seconds_between(row.started_at, finished_at));
  store_ending({row.id, row.tenant_id, rec.outcome, finished_at, stored_text(rec), std::move(ran.artifacts)});

  // After the record is stored and whoever waited was woken: what is left of
  // the sandbox (nothing of it runs) and the job's scratch directory. The
  // record names these in cleanup.after_record; a failure is logged and
  // counted, and the next sweep removes what is left.
  jobs::Cleanup after = ran.teardown.finish();
  (void)sys::remove_tree(dir);
  if (!after.failed.empty()) {
    log({{"event", "teardown_failed"}, {"job_id", row.id}, {"failed", after.failed}});
    metrics_.teardown_failed();
  }
}

ApiResult<json> JobService::run_retention() {
  if (config_.retention_days == 0) return json{{"removed", 0}};
  auto cutoff = std::chrono::system_clock::now() - std::chrono::hours(24 * config_.retention_days);
  std::string before = jobs::rfc3339(cutoff);
  // Each removal names the policy and is signed with the checkpoint key (docs/store.md "Retention").
  const store::RetentionPolicy policy{config_.retention_days, checkpoints_ ? checkpoints_->key() : nullptr};
  auto removed = store_.remove_older_than(before, jobs::now_rfc3339(), policy);
  if (!removed) return store_failure(removed.error());
  return json{{"removed", *removed}, {"before", before}};
}

void JobService::write_checkpoints() {
  if (!checkpoints_) return;
  auto lines = checkpoints_->write_changed(store_, jobs::now_rfc3339());
  if (!lines) {
    log({{"event", "checkpoint_failed"}, {"error", lines.error().message()}});
    return;
  }
  for (const auto& line : *lines) log({{"event", "checkpoint"}, {"line", json::parse(line)}});
}

void JobService::housekeeping_loop() {
  auto next_retention = Clock::now();
  auto next_checkpoint = Clock::now() + std::chrono::seconds(config_.checkpoint_interval_s);
  auto next_retry = Clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = Clock::now();
    std::vector<std::function<void()>> expired;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->deadline <= now) {
        expired.push_back(std::move(it->done));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    // Finished live buffers are kept a while for SSE replay, then dropped.
    for (auto it = live_.begin(); it != live_.end();) {
      bool in_use = running_.count(it->first) || queue_.contains(it->first);
      if (!in_use && it->second->finished() && it->second.use_count() == 1) it = live_.erase(it);
      else ++it;
    }
    bool retention_due = now >= next_retention;
    bool retry = !unstored_.empty() && now >= next_retry;
    lock.unlock();
    for (auto& f : expired) f();
    if (cluster()) cluster_housekeeping();
    if (retry) {
      retry_unstored();
      next_retry = now + std::chrono::seconds(1);
    }
    // In a cluster the API nodes keep the store's retention; workers only run jobs.
    if (retention_due && config_.role != Role::kWorker) {
      (void)run_retention();
      next_retention = now + std::chrono::seconds(config_.retention_interval_s);
    }
    if (now >= next_checkpoint) {
      write_checkpoints();
      next_checkpoint = now + std::chrono::seconds(config_.checkpoint_interval_s);
    }
    lock.lock();
    housekeeping_wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::string JobService::metrics_text() const {
  if (cluster()) return cluster_metrics_text();
  std::lock_guard lock(mu_);
  return metrics_.render(queue_.queued(), queue_.running());
}

}  // namespace airlock::service
