// Control groups for one job: limits, membership, usage, kill-all, removal.
// Two backends behind one interface:
//  - v2: a pure cgroup2 hierarchy (memory.max, pids.max, cpu.max,
//    memory.events oom_kill, cgroup.kill). Tested on a fake tree.
//  - v1 (hybrid): v1 hierarchies for limits and accounting (memory, pids,
//    cpu; cpuacct and freezer only without what the cgroup2 group offers)
//    plus, when mounted, the cgroup2 "unified" hierarchy for
//    CLONE_INTO_CGROUP, cgroup.kill, cgroup.events and cpu.stat.
// Every job's group lives under one parent named "airlock" in each hierarchy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sandbox {

struct CgroupMount;  // cgroup_mounts.h

struct CgroupLimits {
  uint64_t memory_bytes = 0;  // 0: no limit. Swap is limited to the same total;
                              // on v1, socket buffers get a budget of this size too.
  uint64_t pids = 0;          // 0: no limit
  double cpus = 0;            // CPU bandwidth in cores (1.5 = 150%); 0: no limit
  bool operator==(const CgroupLimits&) const = default;
};

struct CgroupUsage {
  uint64_t cpu_ns = 0;             // user+system over all processes, ever
  uint64_t peak_memory_bytes = 0;  // high-water mark of memory use
  uint64_t oom_kills = 0;          // processes the OOM killer killed here
  bool pids_limit_hit = false;     // a fork failed because of pids.max
  // Socket buffers reached the memory limit: v1 charges them (TCP and UDP) to
  // memory.kmem.tcp, set to the memory limit, apart from memory.limit. (v2
  // counts them in memory.max itself; going over shows as an OOM kill.)
  bool socket_memory_limit_hit = false;
};

class Cgroup {
 public:
  virtual ~Cgroup() = default;  // implementations kill and remove if remove() was not called
  virtual const std::string& name() const = 0;
  // An O_DIRECTORY fd of the cgroup2 directory for CLONE_INTO_CGROUP, or -1.
  virtual int clone_into_fd() const = 0;
  // Moves `pid` into every hierarchy this group spans that it is not yet in.
  virtual Status add_process(pid_t pid) = 0;
  // O_WRONLY fds of the files a new sandbox's (single-threaded) first process
  // writes "0" into to move itself into the hierarchies CLONE_INTO_CGROUP
  // cannot reach: v1's `tasks`. A thread moving itself skips the kernel's
  // global threadgroup lock, which a move by pid takes for writing; on a
  // kernel without favordynmods that costs an RCU grace period (~8 ms) per
  // move. None on v2 (CLONE_INTO_CGROUP places the process). add_process()
  // afterwards checks, and moves what is still missing.
  virtual Result<std::vector<UniqueFd>> open_self_join() const = 0;
  // Cheap; polled while the job runs to enforce the cpu-time limit.
  virtual Result<uint64_t> cpu_ns() const = 0;
  virtual Result<CgroupUsage> usage() const = 0;
  virtual Result<bool> empty() const = 0;
  // SIGKILLs every process, including ones that fork during the kill
  // (cgroup.kill, or freeze / kill / thaw), and waits until the group is
  // empty or `timeout_ms` passes (then an error). Once it has found the group
  // empty, later calls return at once, and remove() skips its own check:
  // nothing is left to fork into the group, and only add_process() puts a
  // process into it again (a job's group gets none after its job).
  virtual Status kill_all(int timeout_ms = 5000) = 0;
  // Removes the group from every hierarchy. The group must be empty.
  virtual Status remove() = 0;
  // Changes the limits (a prepared sandbox fitted to its job's policy).
  virtual Status set_limits(const CgroupLimits& limits) = 0;
  // Forgets the group without killing or removing it: another process (to
  // which the sandbox was handed) owns it now and reopens it by name.
  virtual void release() = 0;
};

class CgroupBackend {
 public:
  virtual ~CgroupBackend() = default;
  virtual std::string describe() const = 0;  // e.g. "cgroup v2 at /sys/fs/cgroup"
  virtual Result<std::unique_ptr<Cgroup>> create(const std::string& name,
                                                 const CgroupLimits& limits) = 0;
  // An existing group (left by a dead airlock) for the sweep.
  virtual Result<std::unique_ptr<Cgroup>> open(const std::string& name) = 0;
  // Names of all job groups under the parent, in any hierarchy.
  virtual Result<std::vector<std::string>> list() const = 0;
};

// `root` is the cgroup2 mount (e.g. /sys/fs/cgroup, or a fake tree in tests).
// `on_mkdir` is a test seam: called with the path of every group directory
// the backend creates (the parent, then the job group), right after mkdir and
// before any file in it is used, so a test on a fake tree can create the
// interface files the kernel would. Production callers leave it empty.
using CgroupMkdirHook = std::function<void(const std::string& dir)>;
std::unique_ptr<CgroupBackend> make_cgroup_v2_backend(std::string root,
                                                      std::string parent = "airlock",
                                                      CgroupMkdirHook on_mkdir = {});
// `v1_root` holds the per-controller mounts (memory, pids, cpu, cpuacct,
// freezer); `unified` is the cgroup2 mount beside them, or "" if none;
// `mounts`, the cgroup mounts detection read from /proc/self/mountinfo.
std::unique_ptr<CgroupBackend> make_cgroup_v1_backend(std::string v1_root, std::string unified,
                                                      const std::vector<CgroupMount>& mounts,
                                                      std::string parent = "airlock");
// Looks at /proc/self/mountinfo and picks v2 when /sys/fs/cgroup is a
// cgroup2 mount with memory, pids and cpu controllers available, else v1.
Result<std::unique_ptr<CgroupBackend>> detect_cgroup_backend(std::string parent = "airlock");

}  // namespace airlock::sandbox
