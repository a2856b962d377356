#include "jobs/outcome.h"

#include <gtest/gtest.h>

#include <csignal>

using namespace airlock::jobs;

namespace {
RunFacts exited(int code) {
  RunFacts f;
  f.exit_code = code;
  return f;
}
RunFacts killed(int sig) {
  RunFacts f;
  f.signal = sig;
  return f;
}
}  // namespace

TEST(Outcome, NamesAreTheContractWords) {
  EXPECT_EQ(outcome_name(Outcome::kSucceeded), "succeeded");
  EXPECT_EQ(outcome_name(Outcome::kFailed), "failed");
  EXPECT_EQ(outcome_name(Outcome::kTimedOut), "timed_out");
  EXPECT_EQ(outcome_name(Outcome::kCpuLimit), "cpu_limit");
  EXPECT_EQ(outcome_name(Outcome::kMemoryLimit), "memory_limit");
  EXPECT_EQ(outcome_name(Outcome::kOutputRejected), "output_rejected");
  EXPECT_EQ(outcome_name(Outcome::kInputRejected), "input_rejected");
  EXPECT_EQ(outcome_name(Outcome::kCancelled), "cancelled");
  EXPECT_EQ(outcome_name(Outcome::kSandboxError), "sandbox_error");
}

TEST(Outcome, ProgramStatusDecidesWhenNoLimitWasHit) {
  EXPECT_EQ(decide_outcome(exited(0), 1000, 1000).outcome, Outcome::kSucceeded);
  auto f = decide_outcome(exited(3), 1000, 1000);
  EXPECT_EQ(f.outcome, Outcome::kFailed);
  EXPECT_NE(f.reason.find("status 3"), std::string::npos);
  auto s = decide_outcome(killed(SIGSEGV), 1000, 1000);
  EXPECT_EQ(s.outcome, Outcome::kFailed);
  EXPECT_NE(s.reason.find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(decide_outcome(RunFacts{}, 1000, 1000).outcome, Outcome::kFailed);
}

TEST(Outcome, LimitsOutrankTheProgramStatus) {
  RunFacts f = killed(SIGKILL);
  f.oom_kills = 1;
  EXPECT_EQ(decide_outcome(f, 1000, 1000).outcome, Outcome::kMemoryLimit);
  f.cpu_exceeded = true;
  EXPECT_EQ(decide_outcome(f, 1000, 1000).outcome, Outcome::kCpuLimit);
  f.timed_out = true;
  auto t = decide_outcome(f, 2500, 1000);
  EXPECT_EQ(t.outcome, Outcome::kTimedOut);
  EXPECT_NE(t.reason.find("2500 ms"), std::string::npos);
  f.cancelled = true;
  EXPECT_EQ(decide_outcome(f, 1000, 1000).outcome, Outcome::kCancelled);
  EXPECT_EQ(decide_outcome(killed(SIGXCPU), 1000, 1000).outcome, Outcome::kCpuLimit);
}

TEST(Outcome, AnOomKillOfAHelperDoesNotFailASuccessfulProgram) {
  RunFacts f = exited(0);
  f.oom_kills = 2;
  EXPECT_EQ(decide_outcome(f, 1000, 1000).outcome, Outcome::kSucceeded);
}

// The kernel does not kill for socket buffers at their limit (v1): it stalls
// or drops the job's traffic, and the program may still exit 0.
TEST(Outcome, SocketBuffersAtTheirLimitAreMemoryLimitWhateverTheProgramDid) {
  for (RunFacts f : {exited(0), exited(1), killed(SIGPIPE)}) {
    f.socket_memory_limit_hit = true;
    f.outputs_rejected = true;
    Decision d = decide_outcome(f, 1000, 1000);
    EXPECT_EQ(d.outcome, Outcome::kMemoryLimit);
    EXPECT_NE(d.reason.find("socket buffers"), std::string::npos) << d.reason;
  }
  RunFacts slow = exited(0);
  slow.socket_memory_limit_hit = true;
  slow.timed_out = true;
  EXPECT_EQ(decide_outcome(slow, 1000, 1000).outcome, Outcome::kTimedOut);
}

TEST(Outcome, RejectedOutputsOnlyMatterForAProgramThatSucceeded) {
  RunFacts ok = exited(0);
  ok.outputs_rejected = true;
  EXPECT_EQ(decide_outcome(ok, 1000, 1000).outcome, Outcome::kOutputRejected);
  RunFacts bad = exited(1);
  bad.outputs_rejected = true;
  EXPECT_EQ(decide_outcome(bad, 1000, 1000).outcome, Outcome::kFailed);
}

TEST(Outcome, CliExitStatus) {
  EXPECT_EQ(cli_exit_status(Outcome::kSucceeded, exited(0)), 0);
  EXPECT_EQ(cli_exit_status(Outcome::kFailed, exited(7)), 7);
  EXPECT_EQ(cli_exit_status(Outcome::kFailed, killed(9)), 137);
  EXPECT_EQ(cli_exit_status(Outcome::kInputRejected, {}), 120);
  EXPECT_EQ(cli_exit_status(Outcome::kOutputRejected, exited(0)), 121);
  EXPECT_EQ(cli_exit_status(Outcome::kMemoryLimit, {}), 122);
  EXPECT_EQ(cli_exit_status(Outcome::kCpuLimit, {}), 123);
  EXPECT_EQ(cli_exit_status(Outcome::kTimedOut, {}), 124);
  EXPECT_EQ(cli_exit_status(Outcome::kSandboxError, {}), 125);
  EXPECT_EQ(cli_exit_status(Outcome::kCancelled, {}), 130);
}

namespace {

RunFacts asked(size_t requests, int code = 0) {
  RunFacts f = exited(code);
  f.data_requests = requests;
  return f;
}

TEST(Outcome, AJobThatAskedEndsInputRequested) {
  EXPECT_EQ(outcome_name(Outcome::kInputRequested), "input_requested");
  auto d = decide_outcome(asked(1), 1000, 1000);
  EXPECT_EQ(d.outcome, Outcome::kInputRequested);
  EXPECT_EQ(d.reason, "the program asked the application for data (1 request)");
  // However the program ended after asking: what it asked for decides.
  auto failed = decide_outcome(asked(2, 3), 1000, 1000);
  EXPECT_EQ(failed.outcome, Outcome::kInputRequested);
  EXPECT_EQ(failed.reason, "the program asked the application for data (2 requests); it then exited with status 3");
  RunFacts rejected = asked(1);
  rejected.outputs_rejected = true;
  EXPECT_EQ(decide_outcome(rejected, 1000, 1000).outcome, Outcome::kInputRequested);
  EXPECT_EQ(decide_outcome(asked(0), 1000, 1000).outcome, Outcome::kSucceeded) << "refused lines ask nothing";
}

TEST(Outcome, CancelAndLimitsOutrankARequest) {
  RunFacts c = asked(1);
  c.cancelled = true;
  EXPECT_EQ(decide_outcome(c, 1000, 1000).outcome, Outcome::kCancelled);
  RunFacts t = asked(1);
  t.timed_out = true;
  EXPECT_EQ(decide_outcome(t, 1000, 1000).outcome, Outcome::kTimedOut);
  RunFacts cpu = asked(1);
  cpu.cpu_exceeded = true;
  EXPECT_EQ(decide_outcome(cpu, 1000, 1000).outcome, Outcome::kCpuLimit);
  RunFacts oom = asked(1, 137);
  oom.oom_kills = 1;
  EXPECT_EQ(decide_outcome(oom, 1000, 1000).outcome, Outcome::kMemoryLimit);
}

TEST(Outcome, InputRequestedIsNotCheckedOrStoredAndExits119) {
  Decision ran{Outcome::kInputRequested, "asked"};
  AfterRun after;
  after.failed_check = "x: y";
  EXPECT_EQ(finish_decision(ran, after).outcome, Outcome::kInputRequested);
  EXPECT_EQ(cli_exit_status(Outcome::kInputRequested, asked(1)), 119);
}

}  // namespace
