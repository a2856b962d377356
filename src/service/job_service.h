// The job service without HTTP: who may do what (tenant + scopes), admission
// and scheduling, running each job in this process on a worker thread
// (service/job_runner.h), records, cancellation, restart recovery and
// retention. The HTTP routes (routes.cc) only translate requests and responses.
//
// By role (config.role, docs/service.md "Many machines"): all schedules with
// the in-memory JobQueue; api admits into the store's queue and runs
// nothing; worker claims from the store (cluster/claim_source.h) and runs.
// Both cluster roles keep a heartbeat (cluster/node_pulse.h) and sweep lost
// nodes (cluster/lost_nodes.h); job_service_cluster.cc holds that part.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/claim_source.h"
#include "cluster/node_pulse.h"
#include "service/api_error.h"
#include "service/checkpoint_writer.h"
#include "service/config.h"
#include "service/job_queue.h"
#include "service/job_request.h"
#include "service/job_runner.h"
#include "service/log_buffer.h"
#include "service/metrics.h"
#include "service/store_retry.h"
#include "sandbox/cgroup.h"
#include "store/notifier.h"
#include "store/store.h"

namespace airlock::service {

// The authenticated caller of one request.
struct Caller {
  store::ApiKey key;
  store::Tenant tenant;
  bool can(const std::string& scope) const { return key.scopes.count(scope) > 0; }
  // 403 forbidden naming the first of `any_of` when the key has none of them.
  std::optional<ApiError> lacks(std::initializer_list<const char*> any_of) const {
    for (const char* scope : any_of)
      if (can(scope)) return std::nullopt;
    return ApiError{403, "forbidden", std::string("this key lacks the '") + *any_of.begin() + "' scope"};
  }
};

struct OutputFile {
  std::string path, name, sha256, type;
  uint64_t size = 0;
};

class JobService {
 public:
  JobService(ServiceConfig config, store::Store& store);
  ~JobService();

  // Recovers from a previous run (jobs it left are ended as sandbox_error,
  // their sandboxes swept), then starts the workers and housekeeping.
  Status start();
  void stop();  // cancels running jobs, joins threads
  // Worker role (SIGTERM): claims no more jobs, hands back what it claimed
  // and has not started, waits for its running jobs to end, then leaves the
  // cluster (state left). Returns when it has; stop() after it.
  void drain();
  // GET /healthz: {"status":"ok"}, and in cluster mode the role, this node
  // and every node of the cluster.
  nlohmann::json health();

  ApiResult<Caller> authenticate(const std::string& authorization_header);

  ApiResult<nlohmann::json> upload_file(const Caller& c, const std::string& name, const std::string& spooled_path,
                                        uint64_t size);
  // Returns the job view and whether it was newly created (false: idempotent replay).
  ApiResult<std::pair<nlohmann::json, bool>> create_job(const Caller& c, const nlohmann::json& body,
                                                        const std::string& idempotency_key);
  ApiResult<nlohmann::json> job(const Caller& c, const std::string& id);
  ApiResult<nlohmann::json> list_jobs(const Caller& c, const std::map<std::string, std::string>& query);
  // A parsed `tenant` parameter (service/tenant_param.h) as a tenant id: the
  // caller's for "", "*" for "*", else the tenant of that id or name (404 if none).
  ApiResult<std::string> tenant_asked(const Caller& c, const std::string& parsed);
  // Tenant names by id for a list's tenant column: the caller's, `tenant_id`'s,
  // and every tenant's when `tenant_id` is "*".
  std::map<std::string, std::string> tenant_names(const Caller& c, const std::string& tenant_id);
  ApiResult<nlohmann::json> cancel(const Caller& c, const std::string& id);
  // POST /v1/jobs/{id}/requests/{request_id}/refuse {"reason"}: scope run, the
  // caller's tenant's job; 404 unknown, 409 already answered or refused.
  // Returns the job view.
  ApiResult<nlohmann::json> refuse_data_request(const Caller& c, const std::string& job_id,
                                                const std::string& request_id, const nlohmann::json& body);
  ApiResult<OutputFile> output(const Caller& c, const std::string& id, const std::string& name);
  ApiResult<nlohmann::json> publish(const Caller& c, const std::string& id, const std::string& name);
  ApiResult<nlohmann::json> usage(const Caller& c, const std::string& from, const std::string& to);
  // The job's live output (or, once finished, its stored output) for SSE.
  ApiResult<std::shared_ptr<LogBuffer>> output_stream(const Caller& c, const std::string& id);
  // Calls `done` once when the job ends, or when `timeout_s` passes (at once
  // if it has ended), from a service thread.
  void when_finished(const std::string& tenant_id, const std::string& job_id, int timeout_s,
                     std::function<void()> done);
  // Runs retention once (also done periodically).
  ApiResult<nlohmann::json> run_retention();

  // One JSON object per event (job queued, started, finished), each with the job id.
  // Answers with an internal detail are logged there too (service/api_error.h).
  void set_logger(std::function<void(const nlohmann::json&)> logger) {
    set_api_error_log(logger);
    logger_ = std::move(logger);
  }

  // The tenant's stored limits and the configuration's egress caps for its name.
  PolicyCaps caps_for(const store::Tenant& tenant) const;

  std::string metrics_text() const;
  Metrics& metrics() { return metrics_; }
  // One event in the service's log (sessions write theirs through it).
  void log_event(nlohmann::json event) const { log(std::move(event)); }
  const ServiceConfig& config() const { return config_; }

 private:
  // The job `id` as `c` may read it: any tenant's for an admin key, else only its own tenant's.
  Result<std::optional<store::JobRow>> readable_job(const Caller& c, const std::string& id);
  // The stored record hash of the caller's tenant's finished job whose
  // `request_ids` are all open (service/data_request_answers.h), or why not.
  // `open_only` false: whether they are still open is not looked at (the
  // store's create_job decides it, with the follow-up's creation).
  ApiResult<std::string> answerable_record_hash(const Caller& c, const std::string& job_id,
                                                const std::vector<std::string>& request_ids,
                                                bool open_only = true);
  void worker_loop();
  void housekeeping_loop();
  // --- cluster mode (job_service_cluster.cc) ---
  bool cluster() const { return config_.role != Role::kAll; }
  Status start_cluster();            // the pulse (registers), claim threads
  void claim_loop();                 // one worker-role job thread
  void cluster_housekeeping();       // each second: lost nodes, remote waiters
  void cancel_requested(const std::vector<std::string>& ids);  // from the heartbeat
  void lost_all_jobs();              // this node was declared lost
  // Ends a job another node's loss (or this node's previous life) left.
  void end_left_job(const store::JobRow& row, const std::string& reason, const std::string& node);
  ApiResult<std::monostate> admit_in_store(const store::Tenant& tenant);
  void notifier_loop();  // PostgreSQL: wakes claims, waiters and cancels at once
  std::string cluster_metrics_text() const;  // the store's queue and the nodes
  // A job finished elsewhere: its live buffer gets the stored output, its waiters are answered.
  void finished_elsewhere(const std::string& job_id);
  void replay_record(LogBuffer& buffer, const std::string& tenant_id, const std::string& job_id);
  // Runs the job taken from the queue; `cancel` is null when it could not be
  // made (`cancel_error` says why) and the job ends as sandbox_error.
  void run_one(const QueuedJob& job, JobCancel* cancel, const std::string& cancel_error);
  // Ends a job that never ran (cancelled while queued, a snapshot removed,
  // left by a dead service): its row and its chained record say `outcome`.
  void finish_without_running(const store::JobRow& row, jobs::Outcome outcome, const std::string& reason,
                              const std::string& node = "");
  // A finished job's record on its way to the store.
  struct Ending {
    std::string job_id, tenant_id;
    jobs::Outcome outcome;
    std::string finished_at, record;
    std::vector<store::ArtifactRow> artifacts;
  };
  // Stores the record, then ends the job. A record the store cannot take now
  // (its disk is full) is kept, and housekeeping stores it once it can; until
  // then the job still shows its last state.
  void store_ending(Ending e);
  void retry_unstored();  // housekeeping: one more try for each kept record
  // Calls `call` (a store call returning a Result or Status) until it passes,
  // fails with a refusal, or the service stops (service/store_retry.h's waits).
  template <class Call>
  auto when_store_answers(Call call) -> decltype(call());
  bool stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
  }
  // Signs and appends the chain heads that changed (checkpoint_key set), and logs each line.
  void write_checkpoints();
  // The job's record is stored: finish its output buffer, answer its waiters.
  void job_ended(const std::string& job_id);
  nlohmann::json view(const store::JobRow& row);
  // The tenant's running limit and weight, as last seen (under mu_).
  TenantShare tenant_share(const std::string& tenant_id);
  void remember_share(const store::Tenant& tenant);  // under mu_
  // Whether the service has descriptors free for one more job (under mu_).
  bool descriptors_for_a_job();
  bool descriptor_wait_logged_ = false;  // under mu_

  void log(nlohmann::json event) const {
    if (logger_) logger_(event);
  }

  ServiceConfig config_;
  store::Store& store_;
  std::function<void(const nlohmann::json&)> logger_;
  Metrics metrics_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;  // shared by every job's sandbox
  std::string cgroups_error_;                       // why there is none
  RunnerSetup runner_;
  std::optional<CheckpointWriter> checkpoints_;  // set when checkpoint_key is configured

  mutable std::mutex mu_;
  std::condition_variable work_;
  JobQueue queue_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<LogBuffer>> live_;    // running or recently finished
  std::map<std::string, JobCancel*> running_;                 // taken by a worker, for cancel
  struct Waiter {
    std::string job_id;
    std::chrono::steady_clock::time_point deadline;
    std::function<void()> done;
  };
  std::vector<Waiter> waiters_;
  std::map<std::string, TenantShare> tenant_shares_;  // by tenant id
  std::vector<Ending> unstored_;  // records waiting for room in the store
  std::vector<std::thread> workers_;
  std::thread housekeeping_;
  // Cluster mode.
  std::unique_ptr<cluster::NodePulse> pulse_;
  std::unique_ptr<cluster::ClaimSource> claims_;  // worker role
  std::unique_ptr<store::Notifier> notifier_;     // PostgreSQL only
  std::thread notifier_thread_;
  std::atomic<bool> draining_{false};
  bool left_cluster_ = false;  // drain() left already
  std::atomic<int> running_count_{0};  // worker role: jobs claimed or running here
  std::chrono::steady_clock::time_point next_cluster_sweep_{}, next_waiter_poll_{};  // housekeeping thread
  std::condition_variable housekeeping_wake_;
};

template <class Call>
auto JobService::when_store_answers(Call call) -> decltype(call()) {
  bool logged = false;
  return until_the_store_answers(call, [&] {
    if (!logged) log({{"event", "store_waited_for"}});
    logged = true;
    return stopping();
  });
}

}  // namespace airlock::service
