// finish_decision: the run's decision and the phases after it (checks, the
// storage quota, storing the outputs) give the job's one outcome.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jobs/outcome.h"

using namespace airlock::jobs;

namespace {

const Decision kSucceeded{Outcome::kSucceeded, "the program exited with status 0"};

AfterRun check_failed(const std::string& why) {
  AfterRun a;
  a.failed_check = why;
  return a;
}
AfterRun over_quota(const std::string& why) {
  AfterRun a;
  a.over_quota = why;
  return a;
}
AfterRun storage_failed(const std::string& why) {
  AfterRun a;
  a.storage_failure = why;
  return a;
}
AfterRun everything_failed() {
  AfterRun a;
  a.failed_check = "rows: 3 rows, want 4";
  a.over_quota = "storage quota: full";
  a.storage_failure = "store output a.csv: EIO";
  return a;
}

struct Row {
  const char* name;
  Decision run;
  AfterRun after;
  Outcome want;
  const char* want_reason;  // a substring of the reason
};

}  // namespace

TEST(FinishDecision, ThePhasesAfterTheRunDecideInOrder) {
  const std::vector<Row> rows = {
      {"nothing found keeps the run's decision", kSucceeded, {}, Outcome::kSucceeded, "status 0"},
      {"a failing check rejects the output with its detail", kSucceeded, check_failed("rows: 3 rows, want 4"),
       Outcome::kOutputRejected, "check failed: rows: 3 rows, want 4"},
      {"the quota rejects the output", kSucceeded, over_quota("storage quota: the tenant keeps 9 of its 10 bytes"),
       Outcome::kOutputRejected, "storage quota: the tenant keeps 9"},
      {"a storage failure is airlock's own", kSucceeded, storage_failed("store output a.csv: No space left"),
       Outcome::kSandboxError, "store output a.csv: No space left"},
      {"the check outranks the later phases", kSucceeded, everything_failed(), Outcome::kOutputRejected,
       "check failed: rows"},
  };
  for (const auto& r : rows) {
    Decision d = finish_decision(r.run, r.after);
    EXPECT_EQ(d.outcome, r.want) << r.name << ": " << outcome_name(d.outcome);
    EXPECT_NE(d.reason.find(r.want_reason), std::string::npos) << r.name << ": " << d.reason;
  }
}

TEST(FinishDecision, QuotaOutranksAStorageFailure) {
  AfterRun a = over_quota("storage quota: full");
  a.storage_failure = "store output x: EIO";
  EXPECT_EQ(finish_decision(kSucceeded, a).outcome, Outcome::kOutputRejected);
}

// Cancel, the limits and the program's own end outrank anything found after
// the run (no outputs are checked or stored for such a job anyway).
TEST(FinishDecision, ARunThatDidNotSucceedStands) {
  const std::vector<Decision> runs = {
      {Outcome::kCancelled, "cancelled on request"},
      {Outcome::kTimedOut, "wall-clock limit of 1 s reached"},
      {Outcome::kCpuLimit, "cpu-time limit of 1 s reached"},
      {Outcome::kMemoryLimit, "memory limit reached"},
      {Outcome::kFailed, "the program exited with status 3"},
      {Outcome::kOutputRejected, "one or more outputs were rejected"},
      {Outcome::kInputRejected, "input x: too large"},
      {Outcome::kSandboxError, "create the cgroup: EACCES"},
  };
  for (const auto& run : runs) {
    for (const AfterRun& after : {check_failed("c: no"), over_quota("q"), storage_failed("s"), everything_failed()}) {
      Decision d = finish_decision(run, after);
      EXPECT_EQ(d.outcome, run.outcome) << outcome_name(run.outcome);
      EXPECT_EQ(d.reason, run.reason) << outcome_name(run.outcome);
    }
  }
}

// Through decide_outcome: a job that timed out with outputs a check would
// refuse is timed_out, and one that was cancelled is cancelled.
TEST(FinishDecision, TimeoutAndCancelFromTheRunOutrankAFailedCheck) {
  RunFacts timed_out;
  timed_out.exit_code = 0;
  timed_out.timed_out = true;
  EXPECT_EQ(finish_decision(decide_outcome(timed_out, 1000, 1000), check_failed("c: no")).outcome,
            Outcome::kTimedOut);
  RunFacts cancelled;
  cancelled.exit_code = 0;
  cancelled.cancelled = true;
  cancelled.timed_out = true;
  EXPECT_EQ(finish_decision(decide_outcome(cancelled, 1000, 1000), storage_failed("s")).outcome,
            Outcome::kCancelled);
  RunFacts ok;
  ok.exit_code = 0;
  EXPECT_EQ(finish_decision(decide_outcome(ok, 1000, 1000), check_failed("c: no")).outcome,
            Outcome::kOutputRejected);
}
