// What a job's sandbox is made of: its filesystems (host-made tmpfs) and the
// SandboxSpec the child follows. Decided on the host before the clone.
#pragma once

#include <sys/resource.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "jobs/record.h"
#include "jobs/run_request.h"
#include "sandbox/host_image.h"
#include "sandbox/image_mount.h"
#include "sandbox/spec.h"

namespace airlock::jobs {

inline constexpr uid_t kSandboxUid = 1000;

struct Mounts {  // the job's own filesystems, held by the host
  UniqueFd inputs, output, workspace, tmp, shm;
  // What the sandbox attaches as /inputs (read-only there): a clone of
  // `inputs`, so the host can still admit files after the sandbox is made.
  UniqueFd inputs_view;
  // Subtrees of this sandbox's own overlay of its image (/usr, /etc files),
  // attached by the child; closed once it has them.
  std::vector<UniqueFd> image_trees;
};

// Sizes that follow from the policy (also used to fit a prepared sandbox).
uint64_t input_mount_bytes(const workspace::InputPolicy& policy);
uint64_t input_mount_inodes(const workspace::InputPolicy& policy);
rlim_t cpu_rlimit_seconds(const JobPolicy& policy);  // RLIMIT_CPU: cpu time + 1 s

// /inputs: a tmpfs made by the host (root-owned, noexec), filled by admission.
Result<UniqueFd> make_input_mount(const workspace::InputPolicy& policy);
// /output, /workspace (job-owned), /tmp, /dev/shm (sticky), each workspace_bytes.
Result<Mounts> make_work_mounts(const JobPolicy& policy, const sandbox::IdMap& ids);

// Full paths to try for `program`: itself when it has a '/', else each
// absolute directory of the job's PATH.
std::vector<std::string> exec_candidates(const std::string& program,
                                         const std::vector<std::string>& env);

struct JobSpec {
  sandbox::SandboxSpec spec;
  sandbox::ImageInfo image;
};

// The image (`mounted`: this sandbox's mount of a stored image; null: the
// host image), the job's mounts, rlimits and the seccomp filter.
Result<JobSpec> build_job_spec(const JobPolicy& policy, const std::string& root_mountpoint,
                               Mounts& mounts, const std::string& cache_dir,
                               const sandbox::ImageMount* mounted = nullptr);

// What the prepared sandbox is told to run: argv, environment, PATH candidates.
sandbox::Command job_command(const RunRequest& request);

// Adds "disk" to the record's limits when a writable mount is full.
void note_full_mounts(const Mounts& mounts, JobRecord& record);

}  // namespace airlock::jobs
