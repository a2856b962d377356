#include "sandbox/contain.h"

#include "sandbox/init.h"
#include "sandbox/mount_tree.h"
#include "sandbox/protocol.h"

namespace airlock::sandbox {
namespace {

// One step a line, in order. The child already lives in fresh user, mount,
// pid, net, ipc and uts namespaces (clone flags) and in the job's
// cgroup2 group (CLONE_INTO_CGROUP).
Step contain(const SandboxSpec& spec, ChildFds& fds) {
  AIRLOCK_TRY_STEP(join_own_cgroups(fds));         // v1 groups (v2: CLONE_INTO_CGROUP did it)
  AIRLOCK_TRY_STEP(wait_for_go(fds));              // host wrote our id maps (or died)
  AIRLOCK_TRY_STEP(become_namespace_root());       // uid/gid 0 inside (host uid: unprivileged)
  AIRLOCK_TRY_STEP(set_hostname(spec.hostname));
  AIRLOCK_TRY_STEP(build_root(spec));              // tmpfs root: image, /etc, /inputs, /dev, tmpfs mounts
  AIRLOCK_TRY_STEP(mount_proc(spec));              // fresh /proc, sensitive paths masked
  AIRLOCK_TRY_STEP(pivot_into_root());             // the host's tree is gone
  AIRLOCK_TRY_STEP(seal_readonly(spec));           // everything read-only but the writable mounts
  AIRLOCK_TRY_STEP(bring_up_loopback());           // lo only: no other device exists
  AIRLOCK_TRY_STEP(enter_cgroup_namespace());
  AIRLOCK_TRY_STEP(set_rlimits(spec.rlimits));
  AIRLOCK_TRY_STEP(arrange_fds(fds));              // 0,1,2 and the sync socket; nothing inherited
  AIRLOCK_TRY_STEP(drop_privileges(spec.uid, spec.gid));  // no capabilities, no_new_privs
  AIRLOCK_TRY_STEP(die_with_host());               // the job dies with airlock
  AIRLOCK_TRY_STEP(install_seccomp(spec.seccomp)); // last: the filter also binds init
  return {};
}

}  // namespace

void contain_and_run(const SandboxSpec& spec, const ChildFds& fds) {
  ChildFds current = fds;  // arrange_fds moves the sync socket to kSyncFd
  if (auto done = contain(spec, current); !done) report_and_exit(current.sync, done.error());
  run_init(spec);
}

}  // namespace airlock::sandbox
