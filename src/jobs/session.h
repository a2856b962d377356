// A session: one sandbox kept alive across calls, whose payload is the Python
// kernel of session_kernel.h. Each call's code runs in the namespace the
// previous calls left; the result comes back with its output, the repr of
// the last expression, an error's traceback and every figure as a PNG. A call
// that exceeds its timeout is interrupted (SIGINT to the kernel), not the
// session. Closing (or destroying) the session kills everything in it and
// removes its cgroup, mounts and directory.
//
// Engine groundwork for issue 6; the service endpoints, durable execs,
// files and snapshots are not built yet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "jobs/policy.h"
#include "jobs/prepared.h"
#include "sandbox/cgroup.h"

namespace airlock::jobs {

struct CallResult {
  std::string id;
  std::string status;  // ok, error, interrupted, timed_out (interrupted at its timeout), sandbox_died
  std::string stdout_text, stderr_text;  // what the code printed (and raw output of its subprocesses)
  std::string result;                    // repr of the last expression, or ""
  std::string html;                      // its _repr_html_ (a DataFrame), or ""
  std::string error;                     // traceback or reason, or ""
  std::vector<std::string> figures_png_base64;
  double ms = 0;
};

class Session {
 public:
  struct Options {
    JobPolicy policy;
    std::string state_dir;
    sandbox::CgroupBackend* cgroups = nullptr;
  };
  // Prepares a sandbox and starts the kernel in it; returns once it is ready.
  static Result<std::unique_ptr<Session>> open(const Options& options);
  ~Session();

  const std::string& id() const { return sandbox_.id; }
  uid_t host_uid() const;
  bool alive() const { return alive_; }

  // Runs `code`; at `timeout_ms` the call is interrupted (status timed_out).
  // An Error only for airlock's own failures; a dead sandbox is a result.
  Result<CallResult> exec(const std::string& code, int timeout_ms);
  // SIGINT to the kernel's process group: the running call ends as interrupted.
  Status interrupt();

 private:
  explicit Session(PreparedSandbox sandbox) : sandbox_(std::move(sandbox)) {}
  // Reads until the answer with `id` arrives (parsed once, here), the deadline
  // passes or the sandbox dies; raw output lines go to `raw`.
  Result<std::optional<CallResult>> await_answer(const std::string& id, int64_t deadline_ms, CallResult& raw);

  PreparedSandbox sandbox_;
  std::string out_buf_, err_buf_;
  uint64_t next_call_ = 1;
  bool alive_ = true;
};

// Parses one answer line of the kernel (untrusted: it comes from the sandbox).
Result<CallResult> parse_kernel_answer(const std::string& json_text);

}  // namespace airlock::jobs
