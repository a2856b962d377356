// One job of the service, run in the service's own process on the calling
// worker thread, with the engine as a library (jobs::run_job): no `airlock
// run` process per job. After the run come the service's phases (the output
// checks, the tenant's storage quota, storing the accepted outputs); what
// they find feeds the one outcome decision (jobs::finish_decision). The
// runner knows nothing of JobService: it takes what it needs and returns the
// typed record. docs/service.md says what a job can and cannot do to the
// service's process.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "jobs/record.h"
#include "jobs/run_job.h"
#include "sandbox/cgroup.h"
#include "requests/data_request.h"
#include "service/job_request.h"
#include "service/log_buffer.h"
#include "service/pdf_reader.h"
#include "store/store.h"
#include "validate/checks.h"

namespace airlock::service {

// Asks a running job to end as cancelled: an eventfd the engine polls
// (RunEnvironment::cancel_fd). Fired before the sandbox runs, the job is
// cancelled as soon as it starts. Thread-safe.
class JobCancel {
 public:
  static Result<JobCancel> create();
  Status fire();
  bool fired() const;  // fire() was called
  int fd() const { return fd_.get(); }

 private:
  explicit JobCancel(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// What the service gives every job; fixed while it runs.
struct RunnerSetup {
  std::string state_dir;
  sandbox::CgroupBackend* cgroups = nullptr;  // shared by the workers
  std::string image_dir;
  std::string egress_hosts_file, secrets_file, egress_ca_file;
  std::string content_dir;  // the store's contents (snapshots)
  validate::CheckLimits check_limits;
  PdfReaderSetup pdf;  // scratch_dir is set per job
  requests::Limits data_request_limits;  // the operator's, for every job
};

// One job as a worker has it.
struct RunnerJob {
  const JobRequest& request;
  std::string work_dir;  // private to the job; the caller removes it afterwards
  // The uploaded files to admit, in the request's order: name, host path.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::optional<std::string> snapshot_manifest;  // the manifest of the snapshot /workspace starts as
  LogBuffer& live;                               // the job's output as it comes
  int cancel_fd = -1;                            // JobCancel::fd()
  // Where accepted outputs go, and the tenant's room for them.
  store::Store& store;
  std::string job_id, tenant_id;
  uint64_t storage_quota_bytes = 0;
};

struct RunnerResult {
  jobs::JobRecord record;                     // the outcome is decided; no service fields yet
  std::vector<store::ArtifactRow> artifacts;  // stored; finish_job names them
  jobs::Timing timing;                        // prepare, run, finish (the service's share)
  jobs::Teardown teardown;                    // the sandbox's remains: removed once the record is stored
};

// Runs the job and decides its outcome once. Never throws: an exception of
// airlock's own code ends the job as sandbox_error with the reason.
RunnerResult run_service_job(const RunnerSetup& setup, const RunnerJob& job);

// The record of a job that never ran in a sandbox: the same keys as one that
// did, the outcome as given (input_rejected, cancelled, sandbox_error).
jobs::JobRecord record_without_run(const std::string& id, const std::vector<std::string>& command, jobs::Outcome outcome,
                                   const std::string& reason, const std::string& started_at);

}  // namespace airlock::service
