// The preloaded interpreter ("zygote"): an airlock process with the image's
// Python loaded and the data stack imported. On request it clones a sandbox
// exactly as launch_sandbox() does (same clone flags, same containment
// sequence); the sandbox's payload is then a fork of the preloaded
// interpreter that runs the job's Python code instead of exec'ing python3.
//
// The zygote never sees a job's command, code or data: requests carry only
// the sandbox spec and descriptors; the command goes from the host straight
// to the sandbox's init. Every payload is a fork of the same untouched
// interpreter, so nothing of one job can reach another through it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/launcher.h"

namespace airlock::sandbox {

struct ZygoteOptions {
  std::string python = "/usr/bin/python3";  // the image's interpreter
  std::vector<std::string> modules = {"numpy", "pandas", "matplotlib", "matplotlib.pyplot"};
  std::vector<std::string> env;              // the interpreter's environment, NAME=VALUE
  // A stored image's detached mount (ImageMount::fd()): the zygote attaches
  // its /usr and /etc over the host's in its private mount namespace, so
  // `python` and its libpython, modules and configuration are the image's.
  // -1: the host's own. Only the host's descriptor; the zygote gets a copy.
  int image_root = -1;
};

// The zygote process's main: `control` is its socket to the host. Returns
// the process exit status when the host closes the socket.
int run_zygote(int control, const ZygoteOptions& options);

// Host side: starts `airlock zygote` and launches sandboxes through it.
class Zygote {
 public:
  // `airlock_binary` is re-executed as `airlock zygote`. Returns once the
  // interpreter has imported everything (seconds) or failed to.
  static Result<std::unique_ptr<Zygote>> start(const std::string& airlock_binary,
                                               const ZygoteOptions& options);
  ~Zygote();  // closes the socket, kills it (and so its sandboxes: their
              // parent-death signal) and reaps it, unless it already exited

  // Takes no more launches: the socket closes, and the zygote exits once the
  // sandboxes it made have ended (running jobs finish on it). exited() reaps it.
  void retire();
  bool exited();
  // Its proportional set size (/proc/PID/smaps_rollup), for stats; 0 if unknown.
  uint64_t pss_bytes() const;

  pid_t pid() const { return pid_; }
  const std::string& python_version() const { return version_; }  // e.g. "3.11"

  // Like launch_sandbox(), with spec.in_process set by the zygote. The
  // returned sandbox's init is the zygote's child, held by its pidfd.
  // Thread-safe: callers take turns (the pool's refill thread, sessions
  // opening). request.stdin_r, when set, is the payload's stdin (a session's
  // keeper reads its requests there).
  Result<SandboxProcess> launch(LaunchRequest request);

 private:
  Zygote(pid_t pid, UniqueFd control, std::string version)
      : pid_(pid), control_(std::move(control)), version_(std::move(version)) {}
  pid_t pid_;
  UniqueFd control_;
  std::string version_;
  bool reaped_ = false;  // under launch_mutex_
  std::mutex launch_mutex_;
};

}  // namespace airlock::sandbox
