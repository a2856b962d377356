#include "jobs/outcome.h"

#include <csignal>
#include <cstring>

namespace airlock::jobs {

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSucceeded: return "succeeded";
    case Outcome::kFailed: return "failed";
    case Outcome::kTimedOut: return "timed_out";
    case Outcome::kCpuLimit: return "cpu_limit";
    case Outcome::kMemoryLimit: return "memory_limit";
    case Outcome::kOutputRejected: return "output_rejected";
    case Outcome::kInputRejected: return "input_rejected";
    case Outcome::kInputRequested: return "input_requested";
    case Outcome::kCancelled: return "cancelled";
    case Outcome::kSandboxError: return "sandbox_error";
  }
  return "sandbox_error";
}

int exit_status_for(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSucceeded: return 0;
    case Outcome::kFailed: return 1;
    case Outcome::kInputRequested: return 119;
    case Outcome::kInputRejected: return 120;
    case Outcome::kOutputRejected: return 121;
    case Outcome::kMemoryLimit: return 122;
    case Outcome::kCpuLimit: return 123;
    case Outcome::kTimedOut: return 124;
    case Outcome::kSandboxError: return 125;
    case Outcome::kCancelled: return 130;
  }
  return 125;
}

namespace {
std::string seconds(uint64_t ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}
std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
}
}  // namespace

Decision decide_outcome(const RunFacts& f, uint64_t timeout_ms, uint64_t cpu_time_ms) {
  bool program_ok = f.exit_code && *f.exit_code == 0;
  if (f.cancelled) return {Outcome::kCancelled, "cancelled on request"};
  if (f.timed_out) return {Outcome::kTimedOut, "wall-clock limit of " + seconds(timeout_ms) + " reached"};
  if (f.cpu_exceeded || (f.signal && *f.signal == SIGXCPU))
    return {Outcome::kCpuLimit, "cpu-time limit of " + seconds(cpu_time_ms) + " reached"};
  if (f.oom_kills > 0 && !program_ok)
    return {Outcome::kMemoryLimit, "memory limit reached: the kernel killed " +
                                       std::to_string(f.oom_kills) + " process(es)"};
  if (f.socket_memory_limit_hit)
    return {Outcome::kMemoryLimit,
            "memory limit reached by socket buffers: the kernel held back the job's network traffic"};
  if (f.data_requests > 0) {
    std::string reason = "the program asked the application for data (" + std::to_string(f.data_requests) +
                         (f.data_requests == 1 ? " request)" : " requests)");
    if (f.signal) reason += "; it then died by " + signal_text(*f.signal);
    else if (!f.exit_code) reason += "; it ended without an exit status";
    else if (*f.exit_code != 0) reason += "; it then exited with status " + std::to_string(*f.exit_code);
    return {Outcome::kInputRequested, reason};
  }
  if (f.signal) return {Outcome::kFailed, "the program died by " + signal_text(*f.signal)};
  if (!f.exit_code) return {Outcome::kFailed, "the program ended without an exit status"};
  if (*f.exit_code != 0)
    return {Outcome::kFailed, "the program exited with status " + std::to_string(*f.exit_code)};
  if (f.outputs_rejected) return {Outcome::kOutputRejected, "one or more outputs were rejected"};
  return {Outcome::kSucceeded, "the program exited with status 0"};
}

Decision finish_decision(const Decision& run, const AfterRun& after) {
  if (run.outcome != Outcome::kSucceeded) return run;
  if (after.failed_check) return {Outcome::kOutputRejected, "check failed: " + *after.failed_check};
  if (after.over_quota) return {Outcome::kOutputRejected, *after.over_quota};
  if (after.storage_failure) return {Outcome::kSandboxError, *after.storage_failure};
  return run;
}

int cli_exit_status(Outcome outcome, const RunFacts& facts) {
  if (outcome == Outcome::kSucceeded) return 0;
  if (outcome == Outcome::kFailed) {
    if (facts.signal) return 128 + *facts.signal;
    if (facts.exit_code) return *facts.exit_code;
    return 1;
  }
  return exit_status_for(outcome);
}

}  // namespace airlock::jobs
