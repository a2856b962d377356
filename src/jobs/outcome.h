// The one word that says how a job ended, and how it is decided. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
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
  kInputRequested,  // the program asked the application for data (docs/data-requests.md)
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
  size_t data_requests = 0;  // requests the host accepted from the job's channel
};

struct Decision {
  Outcome outcome;
  std::string reason;  // one line for the record
};

// Priority: cancelled, timed_out, cpu_limit, memory_limit (an OOM kill and
// the program did not succeed, or socket buffers at their limit whatever the
// program did: the kernel then stalls or drops traffic instead),
// input_requested (at least one request accepted, however the program then
// ended: what it asked for decides what happens next), failed (non-zero exit
// or signal; unknown end counts as failed), output_rejected, succeeded.
Decision decide_outcome(const RunFacts& facts, uint64_t timeout_ms, uint64_t cpu_time_ms);

// What the phases after the run found, in the order they run: the output
// checks (validate/checks.h), the tenant's storage quota, then storing the
// accepted outputs. A phase that found nothing leaves its field empty.
struct AfterRun {
  std::optional<std::string> failed_check;     // "label: detail" of the first check that failed
  std::optional<std::string> over_quota;       // why the outputs may not be kept (the tenant's quota)
  std::optional<std::string> storage_failure;  // airlock could not store an output
};

// The job's final outcome from the run's decision and the phases after it.
// Only a run that succeeded has outputs to check and store, so any other
// decision stands whatever `after` says: cancel, the limits and the
// program's own failure outrank the checks. Then, in phase order, the first
// phase that found something decides: a failed check is output_rejected
// ("check failed: ..."), a quota refusal output_rejected, a storage failure
// sandbox_error (airlock's own failure, never blamed on the code).
Decision finish_decision(const Decision& run, const AfterRun& after);

// Status for `airlock run`: the program's own for succeeded/failed
// (128+signal when it died by one), exit_status_for() otherwise.
int cli_exit_status(Outcome outcome, const RunFacts& facts);

}  // namespace airlock::jobs
