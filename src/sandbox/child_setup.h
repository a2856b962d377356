// Child side: the smaller containment steps (identity, hostname, network,
// cgroup namespace, limits, file descriptors, parent death).
#pragma once

#include <vector>

#include "sandbox/child_step.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

struct ChildFds {
  int sync = -1;    // SOCK_SEQPACKET to the host
  int stdout_w = -1;
  int stderr_w = -1;
  int stdin_r = -1;  // the payload's stdin; -1: /dev/null
  int host_end = -1;  // the host's end of sync, which the child inherited a copy of; -1: none
  // The host's O_WRONLY fds of the job's v1 `tasks` files (Cgroup::open_self_join);
  // the first `cgroup_join_count` are used.
  static constexpr int kMaxCgroupJoin = 8;
  int cgroup_join[kMaxCgroupJoin] = {-1, -1, -1, -1, -1, -1, -1, -1};
  int cgroup_join_count = 0;
};

// Moves the child (one thread) into its v1 cgroups by writing "0" into each
// `tasks` fd, then closes them. A thread moving itself skips the kernel's
// global threadgroup lock, whose write side costs an RCU grace period (about
// 8 ms) when the host moves the child by pid on a kernel without favordynmods.
Step join_own_cgroups(ChildFds& fds);

// Closes the child's copy of the host's end and dies with the host (until
// the uid change below clears it), then waits for the host's go: a host
// that died at any moment ends the child, whose wait would otherwise last
// for ever.
Step wait_for_go(const ChildFds& fds);
Step become_namespace_root();  // uid/gid 0 inside the new user namespace, no groups
Step set_hostname(const std::string& name);
Step bring_up_loopback();
Step enter_cgroup_namespace();
Step set_rlimits(const std::vector<Rlimit>& limits);
// 0 = the input pipe (or /dev/null), 1/2 = the output pipes, kSyncFd = sync;
// every other fd closed. Updates `fds` to the new numbers.
Step arrange_fds(ChildFds& fds);
// Empty bounding set, locked securebits, setresgid/setresuid, no capabilities
// in any set, no_new_privs.
Step drop_privileges(uid_t uid, gid_t gid);
// SIGKILL when the host process dies; fails if it already has.
Step die_with_host();
Step install_seccomp(const SeccompProgram& program);

// Reports a failed step to the host and exits. Never returns.
[[noreturn]] void report_and_exit(int sync_fd, const StepError& error);

}  // namespace airlock::sandbox
