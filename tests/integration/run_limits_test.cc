// airlock run under the limits a host gives it: the job still runs, with
// limits no larger than airlock's own.
#include <gtest/gtest.h>

#include <string>

#include "jobs/record.h"
#include "run_helpers.h"

namespace airlock::testing {
namespace {

// A host (or a service started with prlimit) whose hard nofile is below the
// 1024 the sandbox asks for: before, every job ended sandbox_error "set a
// resource limit: Operation not permitted". Now the job gets airlock's own
// hard limit.
TEST(RunLimits, AHardDescriptorLimitBelow1024StillRunsTheJob) {
  TempDir dir;
  OnTerminal t = run_on_terminal({"/usr/bin/prlimit", "--nofile=256:256", "--", AIRLOCK_BINARY, "run", "--json",
                                  "--state-dir", dir.state(), "--", "sh", "-c", "ulimit -n; ulimit -Hn"});
  auto r = nlohmann::json::parse(t.seen, nullptr, false);
  ASSERT_TRUE(r.is_object()) << t.seen;
  EXPECT_EQ(r["outcome"], "succeeded") << r.dump();
  EXPECT_EQ(t.status, 0);
  EXPECT_EQ(jobs::stream_bytes(r["stdout"]), "256\n256\n");
}

}  // namespace
}  // namespace airlock::testing
