#include "jobs/job_sandbox.h"

#include <sys/statfs.h>

#include <algorithm>

#include "base/strings.h"
#include "jobs/policy.h"
#include "requests/request_helper.h"
#include "sandbox/core_pattern.h"
#include "sandbox/seccomp_cache.h"
#include "sandbox/stored_image.h"
#include "sandbox/tmpfs.h"
#include "sys/descriptors.h"

namespace airlock::jobs {
namespace {
constexpr uint64_t kMaxInodes = 65536;
}  // namespace

// /inputs is a tmpfs too (not a bind of a host directory): the sandbox's
// mountinfo then shows no host path, and nothing of the job touches the disk.
uint64_t input_mount_bytes(const workspace::InputPolicy& p) { return p.max_total_bytes + (1u << 20); }
uint64_t input_mount_inodes(const workspace::InputPolicy& p) { return p.max_count + 16; }

rlim_t cpu_rlimit_seconds(const JobPolicy& p) {
  return p.cpu_time_ms ? static_cast<rlim_t>(p.cpu_time_ms / 1000 + 1) : RLIM_INFINITY;
}

Result<UniqueFd> make_input_mount(const workspace::InputPolicy& p) {
  return sandbox::make_detached_tmpfs({input_mount_bytes(p), input_mount_inodes(p), 0755, 0, 0, true});
}

Result<Mounts> make_work_mounts(const JobPolicy& p, const sandbox::IdMap& ids) {
  uid_t job = ids.host_uid_of_job();
  auto make = [&](mode_t mode, uid_t owner, bool noexec) {
    return sandbox::make_detached_tmpfs({p.workspace_bytes, kMaxInodes, mode, owner, owner, noexec});
  };
  Mounts m;
  auto output = make(0755, job, true);
  if (!output) return std::unexpected(output.error());
  auto workspace = make(0755, job, false);
  if (!workspace) return std::unexpected(workspace.error());
  auto tmp = make(01777, ids.host_base, false);
  if (!tmp) return std::unexpected(tmp.error());
  auto shm = make(01777, ids.host_base, true);
  if (!shm) return std::unexpected(shm.error());
  m.output = std::move(*output);
  m.workspace = std::move(*workspace);
  m.tmp = std::move(*tmp);
  m.shm = std::move(*shm);
  return m;
}

std::vector<std::string> exec_candidates(const std::string& program,
                                         const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return {program};
  std::string path;
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  std::vector<std::string> out;
  for (const auto& dir : split(path, ':'))
    if (!dir.empty() && dir[0] == '/') out.push_back(dir + "/" + program);
  return out;
}

Result<JobSpec> build_job_spec(const JobPolicy& p, const std::string& root_mountpoint,
                               Mounts& mounts, const std::string& cache_dir,
                               const sandbox::ImageMount* mounted) {
  JobSpec job;
  sandbox::SandboxSpec& spec = job.spec;
  spec.uid = kSandboxUid;
  spec.gid = kSandboxUid;
  spec.root_mountpoint = root_mountpoint;
  if (mounted) {
    if (auto st = sandbox::apply_stored_image(spec, *mounted, mounts.image_trees); !st)
      return std::unexpected(st.error());
  } else {
    auto image = sandbox::apply_host_image(spec, cache_dir);
    if (!image) return std::unexpected(image.error());
    job.image = *image;
  }
  // The data request helper (requests/request_helper.h), in the root tmpfs,
  // which is sealed read-only: the same file on every image.
  spec.dirs.insert(spec.dirs.end(), {"run/airlock", &requests::kHelperDir[1]});
  spec.files.push_back({std::string(&requests::kHelperDir[1]) + "/" + requests::kHelperModuleFile,
                        requests::helper_source(), 0444});
  spec.attach.insert(spec.attach.end(), {{mounts.inputs_view.get(), "inputs", false},
                                         {mounts.output.get(), "output"},
                                         {mounts.workspace.get(), "workspace"},
                                         {mounts.tmp.get(), "tmp"},
                                         {mounts.shm.get(), "dev/shm"}});
  rlim_t cpu_s = cpu_rlimit_seconds(p);
  // 1024 descriptors, or fewer when airlock itself may not have that many
  // (raising a hard limit would fail: the job could not start at all).
  auto hard = sys::descriptor_hard_limit();
  if (!hard) return std::unexpected(hard.error());
  const rlim_t nofile = std::min<rlim_t>(1024, *hard);
  spec.rlimits = {{RLIMIT_CORE, 1, 1},  // no dump at all: see seccomp_filter.cc
                  {RLIMIT_NOFILE, nofile, nofile},
                  {RLIMIT_CPU, cpu_s, cpu_s == RLIM_INFINITY ? cpu_s : cpu_s + 1},
                  {RLIMIT_MEMLOCK, 64 << 10, 64 << 10}};
  if (auto st = sandbox::check_host_core_pattern(); !st) return std::unexpected(st.error());
  auto filter = sandbox::load_or_build_job_filter(cache_dir);
  if (!filter) return std::unexpected(filter.error());
  spec.seccomp = std::move(*filter);
  return job;
}

sandbox::Command job_command(const RunRequest& req) {
  sandbox::Command command;
  command.argv = req.command;
  command.env = job_environment(req.policy);
  command.exec_candidates = exec_candidates(req.command[0], command.env);
  return command;
}

void note_full_mounts(const Mounts& mounts, JobRecord& rec) {
  for (int fd : {mounts.output.get(), mounts.workspace.get(), mounts.tmp.get(), mounts.shm.get()}) {
    struct statfs fs{};
    if (::fstatfs(fd, &fs) == 0 && (fs.f_bavail == 0 || fs.f_ffree == 0)) rec.add_limit("disk");
  }
}

}  // namespace airlock::jobs
