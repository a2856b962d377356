// The one word that says how a job ended, and how it is decided. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace airlock::jobs {

enum class Outcome {
  kSucceeded,
  kFailed,
  kTimedOut,
  kCpuLimit,
  kMemoryLimit,
  kOutputRejected,
  kInputRejected,
  kCancelled,
  kSandboxError,
};

std::string_view outcome_name(Outcome outcome);

// `airlock run`'s exit status for an outcome (docs/job-record.md).
// For kSucceeded/kFailed the program's own status is used instead.
int exit_status_for(Outcome outcome);

// What the host observed of a job that ran.
struct RunFacts {
  std::optional<int> exit_code;  // payload exited normally
  std::optional<int> signal;     // payload died by this signal
  bool timed_out = false;        // airlock ended it at the wall-clock limit
  bool cpu_exceeded = false;     // airlock ended it at the cpu-time limit
  bool cancelled = false;
  uint64_t oom_kills = 0;
  bool socket_memory_limit_hit = false;  // socket buffers filled their limit
  bool outputs_rejected = false;
};

struct Decision {
  Outcome outcome;
  std::string reason;  // one line for the record
};

// Priority: cancelled, timed_out, cpu_limit, memory_limit (an OOM kill and
// the program did not succeed, or socket buffers at their limit whatever the
// program did: the kernel then stalls or drops traffic instead), failed
// (non-zero exit or signal; unknown end counts as failed), output_rejected,
// succeeded.
Decision decide_outcome(const RunFacts& facts, uint64_t timeout_ms, uint64_t cpu_time_ms);

// Status for `airlock run`: the program's own for succeeded/failed
// (128+signal when it died by one), exit_status_for() otherwise.
int cli_exit_status(Outcome outcome, const RunFacts& facts);

}  // namespace airlock::jobs
