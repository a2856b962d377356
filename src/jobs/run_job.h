// One job from request to record: admit inputs, build the sandbox, run and
// supervise it, kill everything, collect outputs, decide the outcome, clean
// up, and write the record. Never throws; every failure of airlock itself
// ends as outcome sandbox_error with the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobs/record.h"
#include "jobs/run_request.h"
#include "pool/prepared.h"
#include "sandbox/cgroup.h"

namespace airlock::jobs {

struct RunEnvironment {
  std::string state_dir;
  sandbox::CgroupBackend* cgroups = nullptr;
  std::string owner;
  int echo_stdout = -1;  // live copy of the program's output, or -1
  int echo_stderr = -1;
  int cancel_fd = -1;    // readable when the job must be cancelled, or -1
  std::string pool_socket;  // the warm pool; empty: pool.sock in the state directory
  // Whose preloaded interpreter a preloaded job forks from (the pool keeps
  // them per tenant); empty: the state directory's own (`airlock run`).
  std::string tenant;
};

// What `airlock run` gets back: the record as it was stored, and what failed
// in the teardown that ran beside the record's write (the removals the record
// lists in cleanup.after_record; "what: why").
struct FinishedJob {
  JobRecord record;
  std::vector<std::string> teardown_failed;
};

// The job of `airlock run`: its record written to the state directory
// (records/ID.json, fsynced), with the sandbox's removal beside the write (the
// record lists it in cleanup.after_record). The service keeps its records in
// the store instead, whose commit is the one durable write of a job: it calls
// run_job_before_teardown.
FinishedJob run_job(const RunRequest& request, const RunEnvironment& env);

// What is left of a job's sandbox once its record is complete: the mounts,
// the cgroup (empty: every process in it was killed before the record), the
// staging directory and the uid lease. finish() removes them; the destructor
// does it too when nobody called finish().
class Teardown {
 public:
  Teardown() = default;
  explicit Teardown(std::optional<PreparedSandbox> sandbox) { take(sandbox); }
  Teardown(Teardown&& other) noexcept { take(other.sandbox_); }
  Teardown& operator=(Teardown&& other) noexcept {
    if (this != &other) {
      (void)finish();
      take(other.sandbox_);
    }
    return *this;
  }
  ~Teardown() { (void)finish(); }
  // What was removed and what failed ("what: why"); empty when nothing was left.
  Cleanup finish();
  // What finish() will remove ("mounts", "cgroup", "staging"): the record's
  // cleanup.after_record when the teardown comes after the record.
  std::vector<std::string> pending() const;

 private:
  // Moves the sandbox out of `from` and leaves `from` empty (a moved-from
  // optional would still hold a husk that a second finish() would "remove").
  void take(std::optional<PreparedSandbox>& from) {
    if (from) sandbox_.emplace(std::move(*from));
    from.reset();
  }
  std::optional<PreparedSandbox> sandbox_;
};

struct RanJob {
  JobRecord record;
  Teardown teardown;
};

// run_job without its last step, for a caller that answers before it cleans
// up (the service: its reply waits for the stored record, not for the
// removals). The record's cleanup lists in `after_record` what the teardown
// will remove; nothing of the job runs any more when this returns. No record
// file is written: the caller stores the record.
RanJob run_job_before_teardown(const RunRequest& request, const RunEnvironment& env);

// Where run_job stored the record of `id`.
std::string record_path(const std::string& state_dir, const std::string& id);

}  // namespace airlock::jobs
