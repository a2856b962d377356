// When a warm pool's refill thread holds back its next sandbox. Preparing a
// sandbox (a clone of the pool process, mounts, a cgroup) competes with the job
// that just took one for the machine's CPUs, and on a host where a page fault
// and a TLB shootdown are expensive it slowed that job by about a quarter
// (docs/performance.md, "Issue 14, ninth session"). So while a job taken from
// the pool is still running (its runner has not closed the connection it took
// the sandbox on: pool_server.cc) and the class still has a sandbox for the
// next job, the refill waits, for at most `hold_max` after it found work to do.
// The hold is for a machine the jobs do not fill: once as many jobs run as it
// has CPUs (a single job on one CPU excepted), refills go on at once, as they
// did before the hold, so that a steady load does not empty the classes.
#pragma once

#include <chrono>
#include <cstddef>

namespace airlock::jobs {

struct RefillView {
  size_t ready = 0;                   // sandboxes of the class ready now
  size_t running = 0;                 // jobs taken from this pool and not yet ended
  std::chrono::milliseconds waited{};  // since this refill found the class short
  size_t cpus = 1;                    // the machine's CPUs
};

bool hold_back_refill(const RefillView& view, std::chrono::milliseconds hold_max);

}  // namespace airlock::jobs
