// A warm pool (`airlock pool`) started for one test: waits until it is full,
// stops it with SIGTERM and checks it left nothing behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "run_helpers.h"

namespace airlock::testing {

class TestPool {
 public:
  // `dir` holds the pool's output files and its state directory; `extra`
  // goes to `airlock pool` after the counts (--image NAME --image-dir DIR).
  TestPool(const std::string& dir, const std::string& state_dir, int warm, int preloaded,
           const std::vector<std::string>& extra = {});
  ~TestPool();  // stop() if the test did not
  bool ready() const { return ready_; }
  const std::string& log() const { return log_; }
  pid_t pid() const { return spawned_->pid(); }
  // SIGTERM; the exit status. Afterwards no prepared sandbox may be left.
  int stop();
  // Ids (job directories) of the sandboxes the pool holds right now.
  std::vector<std::string> held_ids() const;

 private:
  std::string dir_, state_dir_, log_;
  std::unique_ptr<Spawned> spawned_;
  bool ready_ = false, stopped_ = false;
};

// Pids of every descendant of `pid` (children, their children, ...).
std::vector<pid_t> descendants_of(pid_t pid);

}  // namespace airlock::testing
