// The processes below a pid, as /proc shows them, and whether one of them is
// still the same live process later (a start time tells a reused pid apart).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace airlock::testing {

struct TreeProc {
  pid_t pid = 0, ppid = 0;
  unsigned long long start = 0;  // ticks since boot
  uid_t uid = 0;
  bool zombie = false;
};

// Every live process below `root` (not `root` itself), with start times
// (pool_helpers.h descendants_of() has pids only).
std::vector<TreeProc> tree_below(pid_t root);
bool still_running(const TreeProc& p);
// The names in `dir` ("." and ".." left out); empty when it cannot be read.
std::vector<std::string> dir_entries(const std::string& dir);

}  // namespace airlock::testing
