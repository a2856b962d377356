#include "pool/prepared.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "sandbox/tmpfs.h"
#include "sys/file_io.h"

namespace airlock::jobs {

std::string_view start_kind_name(StartKind kind) {
  switch (kind) {
    case StartKind::kCold: return "cold";
    case StartKind::kWarm: return "warm";
    case StartKind::kPreloaded: return "preloaded";
  }
  return "cold";
}

std::string sandbox_class_key(const JobPolicy& p, const std::string& image,
                              std::optional<Preload> preloaded) {
  std::ostringstream key;
  // Every prepared sandbox has only lo; a job's egress gateway is attached
  // when it is taken (jobs/job_egress.h), so jobs with and without network
  // destinations share the class.
  (void)p;
  const char* kind = !preloaded ? "/exec" : *preloaded == Preload::kData ? "/python" : "/python-stdlib";
  key << image << kind << " net=lo";
  return key.str();
}

std::vector<std::string> PreparedSandbox::remains() const {
  std::vector<std::string> out;
  if (mounts.output.valid()) out.push_back("mounts");
  if (cgroup) out.push_back("cgroup");
  if (dir) out.push_back("staging");
  return out;
}

PreparedSandbox::Removal PreparedSandbox::tear_down() {
  Removal done;
  process.reset();  // SIGKILL to init: the whole pid namespace goes
  if (mounts.output.valid()) done.removed.push_back("mounts");
  mounts = Mounts{};
  stdout_r.reset();
  stderr_r.reset();
  stdin_w.reset();
  if (cgroup) {
    auto killed = cgroup->kill_all();
    auto removed = killed ? cgroup->remove() : killed;
    if (removed) done.removed.push_back("cgroup");
    else done.failed.push_back("cgroup: " + removed.error().message());
    cgroup.reset();
  }
  if (dir) {
    if (auto st = dir->remove(); st) done.removed.push_back("staging");
    else done.failed.push_back("staging: " + st.error().message());
    dir.reset();
  }
  return done;
}

namespace {

// Said once per process: every pooled job after the first would say the same.
void warn_priority_kept_once(int wanted, pid_t init) {
  static std::once_flag once;
  std::call_once(once, [&] {
    errno = 0;
    int has = ::getpriority(PRIO_PROCESS, static_cast<id_t>(init));
    std::fprintf(stderr,
                 "airlock: a job's priority cannot be set back to nice %d (no CAP_SYS_NICE): jobs in "
                 "pooled sandboxes run at nice %d, the pool's; said once\n",
                 wanted, errno == 0 ? has : wanted);
  });
}

}  // namespace

SandboxLimits sandbox_limits_for(const JobPolicy& p) {
  SandboxLimits l;
  l.cgroup = {p.memory_bytes, p.pids, p.cpus};
  l.input_bytes = input_mount_bytes(p.inputs);
  l.input_inodes = input_mount_inodes(p.inputs);
  l.work_bytes = p.workspace_bytes;
  return l;
}

Status fit_to_policy(PreparedSandbox& sb, const JobPolicy& p) {
  const SandboxLimits want = sandbox_limits_for(p);
  if (want.cgroup != sb.limits.cgroup) {
    if (auto st = sb.cgroup->set_limits(want.cgroup); !st) return st;
    sb.limits.cgroup = want.cgroup;
  }
  rlim_t cpu_s = cpu_rlimit_seconds(p);
  rlimit cpu{cpu_s, cpu_s == RLIM_INFINITY ? cpu_s : cpu_s + 1};
  if (::prlimit(sb.process->pid(), RLIMIT_CPU, &cpu, nullptr) < 0) return fail_errno("set the job's cpu rlimit");
  // A pool's refill thread made it at a lower priority; the job runs at its
  // taker's (as a cold one would; the payload, forked later, inherits it).
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, 0);
  if (nice == -1 && errno != 0) return fail_errno("read this process's priority");
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(sb.process->pid()), nice) < 0) {
    // Without CAP_SYS_NICE (a container that does not add it) a pooled
    // sandbox cannot be raised back: the job runs at the pool's priority
    // rather than not at all. Any other error is still the job's failure.
    if (errno != EPERM && errno != EACCES) return fail_errno("set the job's priority");
    warn_priority_kept_once(nice, sb.process->pid());
  }
  if (want.input_bytes != sb.limits.input_bytes || want.input_inodes != sb.limits.input_inodes) {
    if (auto st = sandbox::resize_tmpfs(sb.mounts.inputs.get(), want.input_bytes, want.input_inodes); !st)
      return st;
    sb.limits.input_bytes = want.input_bytes;
    sb.limits.input_inodes = want.input_inodes;
  }
  if (want.work_bytes != sb.limits.work_bytes) {
    for (const UniqueFd* m : {&sb.mounts.output, &sb.mounts.workspace, &sb.mounts.tmp, &sb.mounts.shm})
      if (auto st = sandbox::resize_tmpfs(m->get(), want.work_bytes, 0); !st) return st;
    sb.limits.work_bytes = want.work_bytes;
  }
  return {};
}

std::string image_class(const ImageSource& image) {
  return image.is_host() ? "host" : image.info.digest;
}

Result<PreparedSandbox> prepare_sandbox(const JobPolicy& p, const PrepareContext& ctx) {
  PreparedSandbox sb;
  sb.id = new_job_id();
  if (ctx.zygote) sb.preloaded = ctx.preload;
  sb.class_key = sandbox_class_key(p, image_class(ctx.image), sb.preloaded);
  std::optional<sandbox::ImageMount> image_mount;  // this sandbox's own overlay of the image
  if (!ctx.image.is_host()) {
    auto opened = open_image(ctx.image, ctx.state_dir + "/cache");
    if (!opened) return std::unexpected(opened.error());
    if (!opened->refusal.empty()) return fail(opened->refusal);
    image_mount = std::move(opened->mount);
    sb.image = ctx.image.info;
    if (ctx.prefetch_image) (void)image_mount->prefetch_loader();
  }
  auto dir = JobDir::create(ctx.state_dir, sb.id);
  if (!dir) return std::unexpected(dir.error());
  sb.dir.emplace(std::move(*dir));
  auto lease = UidLease::acquire();
  if (!lease) return std::unexpected(lease.error());
  sb.lease.emplace(std::move(*lease));
  sandbox::IdMap ids{sb.lease->base()};
  sb.limits = sandbox_limits_for(p);  // what the group and the mounts below are made with
  auto group = ctx.cgroups->create(sb.id, sb.limits.cgroup);
  if (!group) return std::unexpected(group.error());
  sb.cgroup = std::move(*group);
  auto inputs = make_input_mount(p.inputs);
  if (!inputs) return std::unexpected(inputs.error());
  auto made = make_work_mounts(p, ids);
  if (!made) return std::unexpected(made.error());
  sb.mounts = std::move(*made);
  auto view = sandbox::clone_detached_mount(inputs->get());
  if (!view) return std::unexpected(view.error());
  sb.mounts.inputs = std::move(*inputs);
  sb.mounts.inputs_view = std::move(*view);
  // Every sandbox mounts its root on this one empty directory, each in its own
  // mount namespace (the host's stays untouched). A fixed path under /run: the
  // preloaded interpreter has a private /tmp, so a state directory there
  // would not be visible to it.
  std::string root = kSandboxRootMountpoint;
  if (auto st = sys::make_dirs(root, 0711); !st) return std::unexpected(st.error());
  // The sandbox's (unprivileged) root passes through it; /run/airlock may
  // have been made 0700 by an older airlock.
  if (::chmod("/run/airlock", 0711) < 0) return fail_errno("make /run/airlock searchable");
  auto built = build_job_spec(p, root, sb.mounts, ctx.state_dir + "/cache",
                              image_mount ? &*image_mount : nullptr);
  if (!built) return std::unexpected(built.error());
  if (!image_mount) sb.image = built->image;

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return fail_errno("create the stdout pipe");
  sb.stdout_r = UniqueFd(out[0]);
  UniqueFd out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) < 0) return fail_errno("create the stderr pipe");
  sb.stderr_r = UniqueFd(err[0]);
  UniqueFd err_w(err[1]);
  sandbox::LaunchRequest launch{&built->spec, ids, sb.cgroup.get(), std::move(out_w), std::move(err_w), {}};
  if (ctx.with_stdin) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) < 0) return fail_errno("create the stdin pipe");
    launch.stdin_r = UniqueFd(in[0]);
    sb.stdin_w = UniqueFd(in[1]);
  }
  auto process = ctx.zygote ? ctx.zygote->launch(std::move(launch))
                            : sandbox::launch_sandbox(std::move(launch));
  if (!process) return std::unexpected(process.error());
  sb.process.emplace(std::move(*process));
  sb.mounts.inputs_view.reset();  // attached in the sandbox now
  sb.mounts.image_trees.clear();
  return sb;
}

}  // namespace airlock::jobs
