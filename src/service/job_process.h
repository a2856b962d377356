// A child airlock process of the service (`airlock run` for the pdf check's
// reader, `airlock inspect-archive` for the archive check): its output is
// pumped into a LogBuffer, it dies with the service (parent-death signal), and
// a crash of the reader of a hostile file cannot take the service down. Jobs
// themselves run in the service's process (service/job_runner.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "service/log_buffer.h"

namespace airlock::service {

class JobProcess {
 public:
  // Starts `program args...` with a clean environment, stdin /dev/null, and
  // a parent-death signal: if the service dies, the job's airlock dies, and
  // with it the sandbox. The calling thread must outlive the process
  // (PR_SET_PDEATHSIG follows the thread that forked).
  static Result<JobProcess> spawn(const std::string& program, const std::vector<std::string>& args);

  JobProcess(JobProcess&&) = default;
  ~JobProcess();  // kills and reaps a process not yet waited for

  pid_t pid() const { return pid_; }
  // Copies stdout and stderr into `log` until both close, then reaps the
  // process. Returns its exit status (128+N when killed by signal N).
  Result<int> pump_and_wait(LogBuffer& log);
  // Asks airlock to cancel the job (SIGTERM: it kills the sandbox and
  // records the outcome "cancelled").
  Status cancel();
  // cancel() was called: an airlock killed by that SIGTERM before it could
  // write a record (it had not yet set up its handler) was still cancelled.
  bool cancel_requested() const { return cancel_requested_; }

 private:
  JobProcess(pid_t pid, UniqueFd pidfd, UniqueFd out, UniqueFd err)
      : pid_(pid), pidfd_(std::move(pidfd)), out_(std::move(out)), err_(std::move(err)) {}
  pid_t pid_;
  UniqueFd pidfd_;
  UniqueFd out_, err_;
  bool reaped_ = false;
  bool cancel_requested_ = false;
};

}  // namespace airlock::service
