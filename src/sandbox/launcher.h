// Host side of starting a sandbox: clone into fresh namespaces (and straight
// into the job's cgroup), map the ids, release the child, and wait until the
// payload has started or a containment step has failed.
#pragma once

#include <sys/types.h>

#include <optional>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/protocol.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

// The sandbox's init process. Owns its pidfd and the sync socket; if it is
// destroyed before wait() was called, it kills init (and so the whole pid
// namespace) and reaps it.
class SandboxProcess {
 public:
  SandboxProcess(pid_t pid, UniqueFd pidfd, UniqueFd sync)
      : pid_(pid), pidfd_(std::move(pidfd)), sync_(std::move(sync)) {}
  SandboxProcess(SandboxProcess&&) = default;
  SandboxProcess& operator=(SandboxProcess&&) = delete;
  ~SandboxProcess();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }  // readable when init has exited
  int sync_fd() const { return sync_.get(); }

  // Next message from init; nullopt when init closed the socket (it exited).
  Result<std::optional<Msg>> read_message();
  // SIGKILL to init: the kernel then kills everything in the pid namespace.
  Status kill();
  // Reaps init and returns its wait status.
  Result<int> wait();

 private:
  pid_t pid_;
  UniqueFd pidfd_;
  UniqueFd sync_;
  bool reaped_ = false;
};

struct LaunchRequest {
  const SandboxSpec* spec = nullptr;
  IdMap ids;
  Cgroup* cgroup = nullptr;
  UniqueFd stdout_w;  // the payload's stdout; closed in the host after the clone
  UniqueFd stderr_w;
};

Result<SandboxProcess> launch_sandbox(LaunchRequest request);

}  // namespace airlock::sandbox
