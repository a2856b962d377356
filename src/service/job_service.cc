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
#include "service/descriptor_budget.h"
#include "service/image_choice.h"
#include "service/job_process.h"
#include "service/upload_check.h"
#include "sys/descriptors.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"
#include "validate/checks.h"
#include "service/archive_reader.h"
#include "service/pdf_reader.h"
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

// A record for a job that never ran in a sandbox: the same keys as one that did.
json synthetic_record(const store::JobRow& row, const std::string& outcome, const std::string& reason) {
  jobs::JobRecord r;
  r.id = row.id;
  r.outcome = outcome == "cancelled" ? jobs::Outcome::kCancelled : jobs::Outcome::kSandboxError;
  r.reason = reason;
  r.started_at = row.started_at.empty() ? row.created_at : row.started_at;
  r.finished_at = jobs::now_rfc3339();
  json j = jobs::to_json(r);
  auto req = parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth);
  if (!req.is_discarded() && req.contains("command")) j["command"] = req["command"];
  return j;
}

std::string file_dir(const ServiceConfig& c, const std::string& id) { return c.data_dir + "/files/" + id; }
std::string work_dir(const ServiceConfig& c, const std::string& id) { return c.work_dir + "/" + id; }

}  // namespace

JobService::JobService(ServiceConfig config, store::Store& store)
    : config_(std::move(config)),
      store_(store),
      queue_(config_.max_running ? config_.max_running : std::max(1u, std::thread::hardware_concurrency()),
             config_.max_queued) {
  if (config_.max_running == 0) config_.max_running = std::max(1u, std::thread::hardware_concurrency());
  if (config_.work_dir.empty())
    config_.work_dir = "/run/airlock/work/" + Sha256::of(config_.data_dir).substr(0, 12);
}

JobService::~JobService() { stop(); }

Status JobService::start() {
  // Request bodies a killed service was still receiving (no request is in flight before the server starts).
  (void)sys::remove_tree(config_.data_dir + "/spool");
  for (const auto& d : {config_.data_dir, config_.data_dir + "/files", config_.work_dir,
                        config_.data_dir + "/spool"})
    if (auto st = sys::make_dirs(d, 0700); !st) return st;
  // What a killed service left: its airlock processes died with it
  // (parent-death signal) and took their sandboxes; the sweep removes their
  // cgroups and job directories; the jobs end as sandbox_error.
  if (auto cgroups = sandbox::detect_cgroup_backend(); cgroups) (void)jobs::sweep(config_.state_dir, **cgroups);
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
    finish_without_running(row, "sandbox_error", "service restarted");
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
    for (auto& [id, p] : processes_) (void)p->cancel();
  }
  work_.notify_all();
  housekeeping_wake_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  if (housekeeping_.joinable()) housekeeping_.join();
  retry_unstored();
  std::lock_guard lock(mu_);
  for (const auto& e : unstored_)  // the next start ends these jobs as sandbox_error
    log({{"event", "record_lost"}, {"job_id", e.job_id}, {"tenant", e.tenant_id}, {"outcome", e.outcome}});
  unstored_.clear();
  ::rmdir(config_.work_dir.c_str());  // only if empty: a job's scratch is removed with the job
}

ApiResult<Caller> JobService::authenticate(const std::string& header) {
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return api_error(401, "unauthenticated", "send Authorization: Bearer <api key>");
  auto key = store_.authenticate(header.substr(prefix.size()));
  if (!key) return internal(key.error().message());
  if (!*key) return api_error(401, "unauthenticated", "unknown or revoked API key");
  auto tenant = store_.tenant((*key)->tenant_id);
  if (!tenant) return internal(tenant.error().message());
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
  if (!used) return internal(used.error().message());
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
  if (::rename(spooled.c_str(), row.path.c_str()) < 0) {
    auto failed = fail_errno("store the upload");
    (void)sys::remove_tree(dir);
    return storage_failure(failed.error());
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
    if (!f) return internal(f.error().message());
    if (!*f) return api_error(400, "bad_request", "inputs: no file " + id);
  }
  if (!request->snapshot.empty()) {
    auto snap = store_.snapshot(c.tenant.id, request->snapshot);
    if (!snap) return internal(snap.error().message());
    if (!*snap) return api_error(400, "bad_request", "snapshot: no snapshot " + request->snapshot);
  }
  if (!validate::parse_checks(request->checks))
    return api_error(400, "bad_request", "checks: " + validate::parse_checks(request->checks).error().message());
  auto image = accept_image(config_, c.tenant.name, request->image);
  if (!image) return std::unexpected(image.error());
  json accepted = body;
  accepted["image"] = *image;  // the digest NAME means now: the job runs on it

  std::lock_guard lock(mu_);
  if (stopping_) return api_error(503, "unavailable", "the service is stopping");
  store::JobRow row;
  row.id = jobs::new_job_id();
  row.tenant_id = c.tenant.id;
  row.key_id = c.key.id;
  row.state = store::JobState::kQueued;
  row.request_json = accepted.dump();
  row.idempotency_key = idempotency_key;
  row.created_at = jobs::now_rfc3339();
  // Capacity first, so a refused request leaves nothing behind.
  QueuedJob q{row.id, c.tenant.id};
  const size_t tenant_cap =
      std::min(static_cast<size_t>(std::max(0, c.tenant.limits.max_queued)), tenant_max_queued(config_, c.tenant.name));
  if (auto why = queue_.admit(q, tenant_cap)) return api_error(429, "overloaded", "tenant " + c.tenant.name + ": " + *why);
  remember_share(c.tenant);
  auto created = store_.create_job(row);
  if (!created) {
    queue_.remove(row.id);
    return storage_failure(created.error());
  }
  if (!created->second) {
    queue_.remove(row.id);  // idempotent replay: the earlier job stands
  } else {
    log({{"event", "job_queued"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"key_id", row.key_id}});
    work_.notify_one();
  }
  return std::pair{view(created->first), created->second};
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
  if (row.state == store::JobState::kFinished) {
    auto rec = store_.record(row.tenant_id, row.id);
    if (rec && *rec) v["record"] = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
  }
  return v;
}

ApiResult<json> JobService::job(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return internal(row.error().message());
  if (!*row) return not_found("job " + id);
  return view(**row);
}

ApiResult<json> JobService::list_jobs(const Caller& c, const std::map<std::string, std::string>& q) {
  if (auto no = c.lacks({"read"})) return std::unexpected(*no);
  store::JobFilter f;
  for (const auto& [k, v] : q) {
    if (k == "state") {
      if (v == "queued") f.state = store::JobState::kQueued;
      else if (v == "running") f.state = store::JobState::kRunning;
      else if (v == "finished") f.state = store::JobState::kFinished;
      else return api_error(400, "bad_request", "state: one of queued, running, finished");
    } else if (k == "outcome") {
      f.outcome = v;
    } else if (k == "limit") {
      if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 ||
          std::stoi(v) > 500)
        return api_error(400, "bad_request", "limit: a whole number from 1 to 500");
      f.limit = std::stoi(v);
    } else if (k == "cursor") {
      f.cursor = v;
    } else if (k == "created_after") {
      f.created_after = v;
    } else if (k == "created_before") {
      f.created_before = v;
    } else {
      return api_error(400, "bad_request", "unknown query parameter " + k);
    }
  }
  auto page = store_.jobs(c.tenant.id, f);
  if (!page) return api_error(400, "bad_request", page.error().message());
  json jobs = json::array();
  for (const auto& row : page->jobs) {
    json v = {{"id", row.id}, {"state", state_name(row.state)}, {"created_at", row.created_at},
              {"outcome", row.outcome.empty() ? json(nullptr) : json(row.outcome)}};
    jobs.push_back(v);
  }
  return json{{"jobs", jobs}, {"next_cursor", page->next_cursor.empty() ? json(nullptr) : json(page->next_cursor)}};
}

ApiResult<json> JobService::cancel(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return internal(row.error().message());
  if (!*row) return not_found("job " + id);
  bool was_queued = false;
  {
    std::lock_guard lock(mu_);
    if (queue_.remove(id)) {
      was_queued = true;
    } else if (auto it = processes_.find(id); it != processes_.end()) {
      (void)it->second->cancel();
      return json{{"id", id}, {"state", "running"}, {"cancel", "requested"}};
    } else if (auto st = starting_.find(id); st != starting_.end()) {
      st->second = true;  // a worker is preparing it: cancelled as soon as it starts
      return json{{"id", id}, {"state", "running"}, {"cancel", "requested"}};
    }
  }
  if (was_queued) finish_without_running(**row, "cancelled", "cancelled before it started");
  auto now = store_.job(c.tenant.id, id);
  if (!now || !*now) return internal("job vanished");
  return view(**now);
}

ApiResult<OutputFile> JobService::output(const Caller& c, const std::string& id, const std::string& name) {
  if (auto no = c.lacks({"read"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return internal(row.error().message());
  if (!*row) return not_found("job " + id);
  auto arts = store_.artifacts(id);
  if (!arts) return internal(arts.error().message());
  for (const auto& a : *arts) {
    if (a.name == name) return OutputFile{store_.artifact_path(a.sha256), a.name, a.sha256, a.type, a.size};
  }
  return not_found("accepted output " + workspace::printable(name));
}

ApiResult<json> JobService::publish(const Caller& c, const std::string& id, const std::string& name) {
  if (auto no = c.lacks({"publish"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return internal(row.error().message());
  if (!*row) return not_found("job " + id);
  if ((*row)->state != store::JobState::kFinished)
    return api_error(409, "not_finished", "the job has not finished");
  if ((*row)->outcome != "succeeded")
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
  if (!u) return internal(u.error().message());
  auto kept = store_.storage_usage(c.tenant.id);
  if (!kept) return internal(kept.error().message());
  json storage = {{"artifacts_bytes", kept->artifacts}, {"snapshots_bytes", kept->snapshots},
                  {"uploads_bytes", kept->uploads},     {"total_bytes", kept->total()},
                  {"quota_bytes", tenant_storage_bytes(config_, c.tenant.name)}};
  return json{{"tenant", c.tenant.id}, {"from", from}, {"to", to}, {"jobs", u->jobs}, {"cpu_ms", u->cpu_ms},
              {"wall_ms", u->wall_ms}, {"peak_memory_bytes", u->peak_memory_bytes}, {"by_outcome", u->by_outcome},
              {"storage", storage}};
}

ApiResult<std::shared_ptr<LogBuffer>> JobService::output_stream(const Caller& c, const std::string& id) {
  if (auto no = c.lacks({"read"})) return std::unexpected(*no);
  auto row = store_.job(c.tenant.id, id);
  if (!row) return internal(row.error().message());
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
  auto rec = store_.record(c.tenant.id, id);
  if (rec && *rec) {
    auto j = parse_json_or_discarded((*rec)->json, kMaxStoredJsonDepth);
    if (!j.is_discarded()) {
      for (bool is_stderr : {false, true}) {
        const char* key = is_stderr ? "stderr" : "stdout";
        if (auto bytes = j.contains(key) ? jobs::stream_bytes(j[key]) : std::nullopt) buffer->append(is_stderr, *bytes);
      }
    }
  }
  buffer->finish();
  return buffer;
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
      starting_[job.job_id] = false;
    }
    run_one(job);
    {
      std::lock_guard lock(mu_);
      starting_.erase(job.job_id);  // if it ended before it started
      queue_.finished(job.tenant_id);
    }
    work_.notify_all();
  }
}

void JobService::finish_without_running(const store::JobRow& row, const std::string& outcome,
                                        const std::string& reason) {
  json rec = synthetic_record(row, outcome, reason);
  rec["tenant"] = row.tenant_id;
  rec["key_id"] = row.key_id;
  rec["states"] = {{"created_at", row.created_at},
                   {"started_at", row.started_at.empty() ? json(nullptr) : json(row.started_at)},
                   {"finished_at", rec["finished_at"]}};
  metrics_.job_finished(outcome, 0);
  log({{"event", "job_finished"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"outcome", outcome},
       {"reason", reason}});
  store_ending({row.id, row.tenant_id, outcome, rec["finished_at"], rec.dump(), {}});
}

void JobService::store_ending(Ending e) {
  auto stored = store_.finish_job(e.job_id, e.outcome, e.finished_at, e.record, e.artifacts);
  if (stored) return job_ended(e.job_id);
  // A failure of the disk (full, quota, I/O) passes; a refusal (already finished) does not.
  bool keep = stored.error().err != 0;
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
    auto stored = store_.finish_job(e.job_id, e.outcome, e.finished_at, e.record, e.artifacts);
    if (stored) {
      log({{"event", "record_stored"}, {"job_id", e.job_id}, {"tenant", e.tenant_id}});
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

void JobService::run_one(const QueuedJob& q) {
  auto t_taken = Clock::now();
  auto row_r = store_.job(q.tenant_id, q.job_id);
  if (!row_r || !*row_r) return;
  store::JobRow row = **row_r;
  auto tenant = store_.tenant(q.tenant_id);
  PolicyCaps caps = tenant && *tenant ? caps_for(**tenant) : PolicyCaps{};
  auto request = parse_job_request(parse_json_or_discarded(row.request_json, kMaxStoredJsonDepth), caps);
  std::string dir = work_dir(config_, row.id);
  std::shared_ptr<LogBuffer> live;
  {
    std::lock_guard lock(mu_);
    auto& slot = live_[row.id];
    if (!slot) slot = std::make_shared<LogBuffer>(config_.log_buffer_bytes);
    live = slot;
  }
  auto fail_job = [&](const std::string& why) { finish_without_running(row, "sandbox_error", why); };
  if (!request) return fail_job("the stored request no longer parses: " + request.error().message());
  if (auto st = sys::make_dirs(dir + "/out", 0700); !st) return fail_job(st.error().message());

  std::vector<std::string> input_paths;
  std::map<std::string, std::string> input_by_name;
  for (const auto& id : request->input_ids) {
    auto f = store_.file(row.tenant_id, id);
    if (!f || !*f) return fail_job("input file " + id + " is gone");
    input_paths.push_back((*f)->path);
    input_by_name[(*f)->name] = (*f)->path;
  }
  if (request->code) {
    std::string path = dir + "/" + request->code_name;
    if (auto st = sys::write_file_atomic(path, *request->code, 0444); !st) return fail_job(st.error().message());
    input_paths.push_back(path);
    input_by_name[request->code_name] = path;
  }
  std::string record_file = dir + "/record.json";
  std::vector<std::string> operator_args = {"--image-dir", service_image_dir(config_)};
  if (!request->policy.allow.empty()) {
    for (const auto& [flag, path] : {std::pair{"--secrets-file", config_.secrets_file},
                                     std::pair{"--egress-hosts", config_.egress_hosts},
                                     std::pair{"--egress-ca", config_.egress_ca}})
      if (!path.empty()) operator_args.insert(operator_args.end(), {flag, path});
  }
  if (!request->snapshot.empty()) {
    // /workspace starts as the snapshot: airlock run restores it from the content directory.
    auto snap = store_.snapshot(row.tenant_id, request->snapshot);
    if (!snap) return fail_job(snap.error().message());
    if (!*snap) {
      return finish_without_running(row, "input_rejected",
                                    "snapshot " + request->snapshot + " was removed before the job ran");
    }
    std::string manifest = dir + "/snapshot.json";
    if (auto st = sys::write_file_atomic(manifest, (*snap)->manifest_json, 0400); !st)
      return fail_job(st.error().message());
    operator_args.insert(operator_args.end(),
                         {"--snapshot-manifest", manifest, "--content-dir", store_.contents().root()});
  }
  auto args = airlock_run_args(*request, input_paths, dir + "/out", record_file, config_.state_dir, operator_args);
  std::string binary = config_.airlock_binary.empty() ? "/proc/self/exe" : config_.airlock_binary;

  row.started_at = jobs::now_rfc3339();
  auto t_spawn = Clock::now();
  auto process = JobProcess::spawn(binary, args);
  if (!process) {
    (void)sys::remove_tree(dir);
    return fail_job("start airlock run: " + process.error().message());
  }
  (void)store_.mark_running(row.id, process->pid(), row.started_at);
  log({{"event", "job_started"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"pid", process->pid()}});
  metrics_.job_started(seconds_between(row.created_at, row.started_at));
  {
    std::lock_guard lock(mu_);
    processes_[row.id] = &*process;
    auto st = starting_.find(row.id);
    bool cancel_asked = st != starting_.end() && st->second;
    if (st != starting_.end()) starting_.erase(st);
    if (stopping_ || cancel_asked) (void)process->cancel();
  }
  auto t_spawned = Clock::now();
  auto status = process->pump_and_wait(*live);
  auto t_ended = Clock::now();
  bool cancelled = false;
  {
    std::lock_guard lock(mu_);  // cancel() runs under it too
    processes_.erase(row.id);
    cancelled = process->cancel_requested();
  }
  std::string finished_at = jobs::now_rfc3339();

  json rec;
  auto text = sys::read_file(record_file, 64 << 20);
  if (text) rec = parse_json_or_discarded(*text, kMaxStoredJsonDepth);
  bool no_record = !text || rec.is_discarded() || !rec.is_object();
  if (no_record && cancelled) {
    // Cancelled so early that airlock run died of the SIGTERM before it could record anything.
    rec = synthetic_record(row, "cancelled", "cancelled on request");
  } else if (no_record) {
    std::string tail;
    for (const auto& c : live->after(0))
      if (c.is_stderr) tail += c.text;
    if (tail.size() > 500) tail = tail.substr(tail.size() - 500);
    rec = synthetic_record(row, "sandbox_error",
                           "airlock run ended with status " + std::to_string(status ? *status : -1) +
                               " and wrote no record" + (tail.empty() ? "" : ": " + tail));
  }
  std::string outcome = rec.value("outcome", "sandbox_error");

  // Checks run only on the outputs of a job that succeeded (only those were copied out).
  if (outcome == "succeeded" && !request->checks.empty()) {
    auto checks = validate::parse_checks(request->checks);
    // Checks stream over the files (validate/checks.h): nothing is read whole here.
    auto read_from = [](const std::map<std::string, std::string>& paths) {
      return [paths](const std::string& name) -> std::optional<validate::ByteSource> {
        auto it = paths.find(name);
        if (it == paths.end()) return std::nullopt;
        auto fd = std::make_shared<UniqueFd>(::open(it->second.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        if (!*fd) return std::nullopt;
        return [fd](char* buf, size_t n) -> Result<size_t> {
          ssize_t got;
          do got = ::read(fd->get(), buf, n);
          while (got < 0 && errno == EINTR);
          if (got < 0) return fail_errno("read");
          return static_cast<size_t>(got);
        };
      };
    };
    std::map<std::string, std::string> output_by_name;
    for (const auto& o : rec["outputs"])
      if (o.value("verdict", "") == "accepted") output_by_name[o["name"]] = dir + "/out/" + o["name"].get<std::string>();
    json results = json::array();
    std::string first_failure;
    PdfReaderSetup pdf{.airlock_binary = binary, .state_dir = config_.state_dir, .scratch_dir = dir,
                       .image = config_.pdf_check_image,
                       .image_args = {"--image-dir", service_image_dir(config_)}};
    if (checks) {
      for (const auto& r : validate::run_checks(*checks, read_from(output_by_name), read_from(input_by_name),
                                                config_.check_limits, sandboxed_pdf_reader(pdf, output_by_name),
                                                confined_archive_reader(binary, output_by_name))) {
        results.push_back(validate::to_json(r));
        if (!r.passed && first_failure.empty()) first_failure = r.label + ": " + r.detail;
      }
    }
    rec["checks"] = results;
    if (!first_failure.empty()) {
      outcome = "output_rejected";
      rec["outcome"] = outcome;
      rec["reason"] = "check failed: " + first_failure;
    }
  }

  if (outcome == "succeeded") {
    const std::string tenant_name = tenant && *tenant ? (*tenant)->name : "";
    if (auto refused = over_storage_quota(row.tenant_id, tenant_name, rec)) {
      outcome = "output_rejected";
      rec["outcome"] = outcome;
      rec["reason"] = *refused;
    }
  }
  std::vector<store::ArtifactRow> artifacts;
  auto release = [&] {
    std::vector<std::string> put;
    for (const auto& a : artifacts) put.push_back(a.sha256);
    store_.release_artifacts(put);
    artifacts.clear();
  };
  if (outcome == "succeeded") {
    for (const auto& o : rec["outputs"]) {
      if (o.value("verdict", "") != "accepted") continue;
      std::string name = o["name"];
      auto stored = store_.put_artifact(dir + "/out/" + name, o["sha256"]);
      if (!stored) {
        outcome = "sandbox_error";
        rec["outcome"] = outcome;
        rec["reason"] = "store output " + name + ": " + stored.error().message();
        release();
        break;
      }
      artifacts.push_back({row.id, name, o["sha256"], o.value("type", ""), o.value("size", uint64_t{0})});
    }
  }
  rec["tenant"] = row.tenant_id;
  rec["key_id"] = row.key_id;
  rec["states"] = {{"created_at", row.created_at}, {"started_at", row.started_at}, {"finished_at", finished_at}};
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::round(std::chrono::duration<double, std::milli>(b - a).count() * 1000) / 1000;
  };
  // The service's own share of the job's time, beside airlock's "timing".
  rec["service_timing"] = {{"queue_ms", ms(q.admitted, t_taken)},
                           {"prepare_ms", ms(t_taken, t_spawn)},
                           {"spawn_ms", ms(t_spawn, t_spawned)},
                           {"airlock_ms", ms(t_spawned, t_ended)},
                           {"finish_ms", ms(t_ended, Clock::now())}};
  log({{"event", "job_finished"}, {"job_id", row.id}, {"tenant", row.tenant_id}, {"outcome", outcome}});
  metrics_.job_finished(outcome, seconds_between(row.started_at, finished_at));
  (void)sys::remove_tree(dir);
  store_ending({row.id, row.tenant_id, outcome, finished_at, rec.dump(), std::move(artifacts)});
}

std::optional<std::string> JobService::over_storage_quota(const std::string& tenant_id, const std::string& tenant_name,
                                                          json& rec) {
  uint64_t bytes = 0;
  for (const auto& o : rec["outputs"])
    if (o.value("verdict", "") == "accepted") bytes += o.value("size", uint64_t{0});
  if (bytes == 0) return std::nullopt;
  const uint64_t quota = tenant_storage_bytes(config_, tenant_name);
  auto used = store_.storage_usage(tenant_id);
  if (!used) return "storage quota: the tenant's usage could not be read: " + used.error().message();
  if (bytes <= quota && used->total() <= quota - bytes) return std::nullopt;
  std::string why = "storage quota: the tenant keeps " + std::to_string(used->total()) + " of its " +
                    std::to_string(quota) + " bytes (tenant_storage_mb), and the accepted outputs hold " +
                    std::to_string(bytes) + "; none was stored";
  for (auto& o : rec["outputs"]) {
    if (o.value("verdict", "") != "accepted") continue;
    o["verdict"] = "rejected";
    o["reason"] = why;
  }
  return why;
}

ApiResult<json> JobService::run_retention() {
  if (config_.retention_days == 0) return json{{"removed", 0}};
  auto cutoff = std::chrono::system_clock::now() - std::chrono::hours(24 * config_.retention_days);
  std::string before = jobs::rfc3339(cutoff);
  auto removed = store_.remove_older_than(before, jobs::now_rfc3339());
  if (!removed) return internal(removed.error().message());
  return json{{"removed", *removed}, {"before", before}};
}

void JobService::housekeeping_loop() {
  auto next_retention = Clock::now();
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
      bool in_use = processes_.count(it->first) || queue_.contains(it->first);
      if (!in_use && it->second->finished() && it->second.use_count() == 1) it = live_.erase(it);
      else ++it;
    }
    bool retention_due = now >= next_retention;
    bool retry = !unstored_.empty() && now >= next_retry;
    lock.unlock();
    for (auto& f : expired) f();
    if (retry) {
      retry_unstored();
      next_retry = now + std::chrono::seconds(1);
    }
    if (retention_due) {
      (void)run_retention();
      next_retention = now + std::chrono::seconds(config_.retention_interval_s);
    }
    lock.lock();
    housekeeping_wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::string JobService::metrics_text() const {
  std::lock_guard lock(mu_);
  return metrics_.render(queue_.queued(), queue_.running());
}

}  // namespace airlock::service
