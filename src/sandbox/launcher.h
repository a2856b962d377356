// Host side of a sandbox: clone into fresh namespaces (and straight into the
// job's cgroup), map the ids, release the child, and wait until it is
// contained (prepared) or a containment step has failed. Starting the job's
// command is a separate step, so a sandbox can be prepared ahead of demand.
#pragma once

#include <sys/types.h>

#include <optional>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/child_setup.h"
#include "sandbox/protocol.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

// The sandbox's init process. Owns its pidfd and the sync socket; if it is
// destroyed before wait() was called, it kills init (and so the whole pid
// namespace) and reaps it. Init need not be our child: a sandbox prepared by
// a preloaded interpreter or another airlock process is held by its pidfd.
class SandboxProcess {
 public:
  SandboxProcess(pid_t pid, UniqueFd pidfd, UniqueFd sync, bool is_child = true)
      : pid_(pid), pidfd_(std::move(pidfd)), sync_(std::move(sync)), is_child_(is_child) {}
  SandboxProcess(SandboxProcess&&) = default;
  SandboxProcess& operator=(SandboxProcess&&) = delete;
  ~SandboxProcess();

  pid_t pid() const { return pid_; }  // in the host's pid namespace
  int pidfd() const { return pidfd_.get(); }  // readable when init has exited
  int sync_fd() const { return sync_.get(); }

  // Sends the job's command to a prepared sandbox and waits until init has
  // forked the payload. Once per sandbox. `request_fd` (>= 0): the write end
  // of the job's data request channel, which the payload gets as kRequestFd
  // (the caller closes its own copy afterwards).
  Status start(const Command& command, int request_fd = -1);
  // Asks init to send `sig` to the payload's process group.
  Status signal_payload(int sig);
  // Next message from init; nullopt when init closed the socket (it exited).
  Result<std::optional<Msg>> read_message();
  // SIGKILL to init: the kernel then kills everything in the pid namespace.
  Status kill();
  // Waits until init has exited; reaps it and returns its wait status when it
  // is our child (else 0).
  Result<int> wait();
  // Gives up the fds (to hand the sandbox to another process); the object is
  // then empty and its destructor does nothing.
  UniqueFd release_pidfd() { reaped_ = true; return std::move(pidfd_); }
  UniqueFd release_sync() { return std::move(sync_); }

 private:
  pid_t pid_;
  UniqueFd pidfd_;
  UniqueFd sync_;
  bool is_child_ = true;
  bool reaped_ = false;
};

struct LaunchRequest {
  const SandboxSpec* spec = nullptr;
  IdMap ids;
  Cgroup* cgroup = nullptr;
  UniqueFd stdout_w;  // the payload's stdout; closed in the host after the clone
  UniqueFd stderr_w;
  UniqueFd stdin_r;   // the payload's stdin (a session's kernel reads its requests there); none: /dev/null
};

// clone3 into fresh namespaces (and `cgroup_fd`'s cgroup2 group, if >= 0);
// the child runs the containment sequence and never returns. The parent gets
// the pid and, in *pidfd, a pidfd.
Result<pid_t> clone_sandbox(const SandboxSpec& spec, int cgroup_fd, const ChildFds& fds, int* pidfd);

// Clones the sandbox here and returns once it is prepared.
Result<SandboxProcess> launch_sandbox(LaunchRequest request);

// The host's half of preparing a sandbox: map the ids, join the cgroups,
// release it, wait until ready. `joined_itself`: the child was given the
// cgroup's open_self_join() fds and moved itself; then the host only checks
// (and moves it where it is not) once init is ready, before any command.
// Else (cloned elsewhere, by a preloaded interpreter) the host moves it by pid
// before the go.
Status finish_launch(SandboxProcess& process, const IdMap& ids, const SandboxSpec& spec,
                     Cgroup& cgroup, bool joined_itself = false);

}  // namespace airlock::sandbox
