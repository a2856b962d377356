// A prepared sandbox: everything a job's sandbox is made of before the job's
// command is known (job directory, host uids, cgroup with limits, its own
// filesystems, output pipes, and a contained init waiting for the command).
// A cold job prepares one on demand; the warm pool prepares them ahead and
// hands each to exactly one job. A sandbox from the preloaded interpreter is
// one whose payload will be a fork of that interpreter.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"
#include "jobs/image_source.h"
#include "jobs/job_sandbox.h"
#include "jobs/policy.h"
#include "jobs/state_dir.h"
#include "jobs/uid_lease.h"
#include "pool/preload_choice.h"
#include "sandbox/cgroup.h"
#include "sandbox/host_image.h"
#include "sandbox/launcher.h"
#include "sandbox/zygote.h"

namespace airlock::jobs {

inline constexpr const char* kSandboxRootMountpoint = "/run/airlock/root";

enum class StartKind { kCold, kWarm, kPreloaded };
std::string_view start_kind_name(StartKind kind);  // "cold", "warm", "preloaded"

// Which prepared sandboxes can serve a job: the same image (by digest;
// "host" for the host image) and interpreter choice (none, or which
// preloaded interpreter: preload_choice.h). Network rules are not part of it
// (every sandbox has only lo until a job attaches its gateway), nor are
// limits: fit_to_policy() sets them when a job takes the sandbox. Pure.
std::string sandbox_class_key(const JobPolicy& policy, const std::string& image,
                              std::optional<Preload> preloaded);
std::string image_class(const ImageSource& image);  // the `image` of the key

// The limits a prepared sandbox has: its cgroup's and the sizes of its own
// filesystems. Those it was made with, then a job's (fit_to_policy).
struct SandboxLimits {
  sandbox::CgroupLimits cgroup;
  uint64_t input_bytes = 0, input_inodes = 0;  // the /inputs tmpfs
  uint64_t work_bytes = 0;                     // /output, /workspace, /tmp, /dev/shm each
  bool operator==(const SandboxLimits&) const = default;
};

// What `policy` makes them. Pure.
SandboxLimits sandbox_limits_for(const JobPolicy& policy);

struct PreparedSandbox {
  std::string id;  // the job's id: its directory and cgroup carry this name
  std::string class_key;
  // The preloaded interpreter whose fork the payload will be; none: the
  // payload is exec'd (a warm or cold sandbox).
  std::optional<Preload> preloaded;
  sandbox::ImageInfo image;
  std::optional<UidLease> lease;  // destroyed last (members go in reverse order)
  std::optional<JobDir> dir;
  std::unique_ptr<sandbox::Cgroup> cgroup;
  Mounts mounts;
  SandboxLimits limits;  // what the cgroup and the mounts are set to now
  UniqueFd stdout_r, stderr_r;
  UniqueFd stdin_w;  // only when prepared with_stdin (a session's kernel reads it)
  // A sandbox taken from a pool: the connection it came on, closed when the
  // sandbox goes; the pool holds its refills back until then (refill_hold.h).
  UniqueFd pool_link;
  std::optional<sandbox::SandboxProcess> process;  // destroyed first: kills init

  PreparedSandbox() = default;
  PreparedSandbox(PreparedSandbox&&) = default;
  PreparedSandbox& operator=(PreparedSandbox&&) = default;
  ~PreparedSandbox() { (void)tear_down(); }  // an unused sandbox: everything goes
  uid_t host_base() const { return lease ? lease->base() : 0; }

  // What tear_down() would remove: "mounts", "cgroup", "staging".
  std::vector<std::string> remains() const;
  // Removes the sandbox's remains in the reverse order of their making: init
  // (and with it the pid namespace), the mounts, every process of the cgroup
  // and the cgroup, the staging directory. What went, and what failed
  // ("what: why"). The uid lease stays: it goes with the object, when every
  // process of it is dead.
  struct Removal {
    std::vector<std::string> removed, failed;
  };
  Removal tear_down();
};

struct PrepareContext {
  std::string state_dir;
  sandbox::CgroupBackend* cgroups = nullptr;
  sandbox::Zygote* zygote = nullptr;  // set: a preloaded sandbox
  bool with_stdin = false;            // the payload's stdin is a pipe from the host
  ImageSource image;                  // the host image unless set
  // Read the loader's files through the sandbox's own image mount while
  // preparing (ImageMount::prefetch_loader): for the warm pool, whose
  // refills are off the job's path; a cold job would only pay it earlier.
  bool prefetch_image = false;
  Preload preload = Preload::kData;  // which interpreter `zygote` is
};

// A sandbox on `context.image`: a stored image is checked and gets an
// overlay of its own (image_source.h). (A job checks its image before, so a
// refusal here is an error.)
Result<PreparedSandbox> prepare_sandbox(const JobPolicy& policy, const PrepareContext& context);

// Sets a sandbox prepared for other limits to `policy`'s, before its command
// starts: init's RLIMIT_CPU and the caller's nice value (the payload inherits
// them), and, where they differ from `sandbox.limits`, the cgroup's
// memory/pids/cpu and the sizes of /inputs, /output, /workspace, /tmp and
// /dev/shm. A job whose limits are the pool's (the usual case) writes no
// cgroup file and resizes no mount.
Status fit_to_policy(PreparedSandbox& sandbox, const JobPolicy& policy);

}  // namespace airlock::jobs
