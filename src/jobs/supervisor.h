// Watches a running sandbox: drains stdout and stderr together (capped, with
// optional live echo), enforces the wall-clock and cpu-time limits, cancels
// on request, and learns how the payload ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "base/result.h"
#include "base/unique_fd.h"
#include "jobs/record.h"
#include "requests/data_request.h"
#include "sandbox/cgroup.h"
#include "sandbox/launcher.h"

namespace airlock::jobs {

struct SuperviseOptions {
  uint64_t timeout_ms = 0;
  uint64_t cpu_time_ms = 0;  // 0: not enforced here
  uint64_t stream_cap = 1 << 20;
  int echo_stdout = -1;  // fd to copy the program's stdout to live, or -1 (escaped if a terminal)
  int echo_stderr = -1;
  int cancel_fd = -1;    // readable (e.g. a signalfd) when the job must be cancelled, or -1
  // When the payload was started (just before SandboxProcess::start); the
  // clock's epoch: when supervise() begins. The wall time runs from here.
  std::chrono::steady_clock::time_point payload_started{};
};

// The job's data request channel: the read end of its pipe and the reader
// that keeps what it carries within the limits. The channel is drained as
// the job writes (a full pipe would block the job); past
// limits.channel_bytes it is closed (the job's later writes fail with EPIPE).
struct RequestChannel {
  UniqueFd read_end;
  requests::RequestReader* reader = nullptr;
};

struct SuperviseResult {
  std::optional<int> wait_status;  // the payload's, when init reported it
  bool timed_out = false;
  bool cpu_exceeded = false;
  bool cancelled = false;
  // The payload's wall time (jobs/wall_time.h): from options.payload_started
  // to init's report that it ended (or to init's exit, when it made none), at
  // least 1 ms.
  uint64_t wall_ms = 0;
  CapturedStream out, err;
};

// Returns when init has exited and both streams are closed. Every process of
// the job is dead by then only if the caller also kills the cgroup; this
// function kills it itself when a limit or cancellation ends the job.
Result<SuperviseResult> supervise(sandbox::SandboxProcess& process, sandbox::Cgroup& cgroup,
                                  UniqueFd stdout_r, UniqueFd stderr_r,
                                  const SuperviseOptions& options, RequestChannel requests = {});

}  // namespace airlock::jobs
