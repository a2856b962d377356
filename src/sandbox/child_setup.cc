#include "sandbox/child_setup.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "sandbox/protocol.h"
#include "sys/syscalls.h"

namespace airlock::sandbox {

Step wait_for_go(const ChildFds& fds) {
  if (fds.host_end >= 0) ::close(fds.host_end);
  AIRLOCK_STEP("set the parent-death signal", ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
  Msg msg{};
  ssize_t n;
  do n = ::recv(fds.sync, &msg, sizeof(msg), 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) return step_failed("wait for the host");
  if (n != sizeof(msg) || msg.kind != MsgKind::kGo) {  // n == 0: the host died before the prctl
    errno = EPROTO;
    return step_failed("wait for the host");
  }
  return {};
}

Step join_own_cgroups(ChildFds& fds) {
  for (int i = 0; i < fds.cgroup_join_count; ++i) {
    int fd = fds.cgroup_join[i];
    fds.cgroup_join[i] = -1;
    ssize_t n;
    do n = ::write(fd, "0", 1);
    while (n < 0 && errno == EINTR);
    int saved = n < 0 ? errno : EIO;
    ::close(fd);
    if (n != 1) {
      errno = saved;
      return step_failed("join the job's cgroup");
    }
  }
  fds.cgroup_join_count = 0;
  return {};
}

Step become_namespace_root() {
  AIRLOCK_STEP("become gid 0 in the user namespace", sys::thread_setresgid(0, 0, 0));
  AIRLOCK_STEP("become uid 0 in the user namespace", sys::thread_setresuid(0, 0, 0));
  AIRLOCK_STEP("drop supplementary groups", sys::thread_setgroups_none());
  return {};
}

Step set_hostname(const std::string& name) {
  AIRLOCK_STEP("set the hostname", ::sethostname(name.data(), name.size()));
  return {};
}

Step bring_up_loopback() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return step_failed("open a socket to configure lo");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  int rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  int saved = errno;
  ::close(s);
  errno = saved;
  AIRLOCK_STEP("bring up lo", rc);
  return {};
}

Step enter_cgroup_namespace() {
  AIRLOCK_STEP("enter a new cgroup namespace", ::unshare(CLONE_NEWCGROUP));
  return {};
}

Step set_rlimits(const std::vector<Rlimit>& limits) {
  for (const auto& l : limits) {
    rlimit r{l.soft, l.hard};
    AIRLOCK_STEP("set a resource limit", ::setrlimit(static_cast<__rlimit_resource>(l.resource), &r));
  }
  return {};
}

Step arrange_fds(ChildFds& fds) {
  // Move the fds we keep above anything we will dup2 onto, then place them.
  int sync = ::fcntl(fds.sync, F_DUPFD_CLOEXEC, 100);
  int out = ::fcntl(fds.stdout_w, F_DUPFD_CLOEXEC, 100);
  int err = ::fcntl(fds.stderr_w, F_DUPFD_CLOEXEC, 100);
  if (sync < 0 || out < 0 || err < 0) return step_failed("duplicate the job's fds");
  int in = fds.stdin_r >= 0 ? ::fcntl(fds.stdin_r, F_DUPFD_CLOEXEC, 100) : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) return step_failed("set up stdin");
  AIRLOCK_STEP("set up stdin", ::dup2(in, 0));
  AIRLOCK_STEP("set up stdout", ::dup2(out, 1));
  AIRLOCK_STEP("set up stderr", ::dup2(err, 2));
  AIRLOCK_STEP("set up the sync socket", ::dup2(sync, kSyncFd));
  fds = ChildFds{kSyncFd, 1, 2, 0};
  AIRLOCK_STEP("close inherited fds", ::close_range(kSyncFd + 1, ~0U, 0));
  return {};
}

Step drop_privileges(uid_t uid, gid_t gid) {
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      return step_failed("drop the capability bounding set");
  }
  AIRLOCK_STEP("lock securebits",
               ::prctl(PR_SET_SECUREBITS,
                       SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
                           SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                           SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                       0, 0, 0));
  AIRLOCK_STEP("set the job's gid", sys::thread_setresgid(gid, gid, gid));
  AIRLOCK_STEP("set the job's uid", sys::thread_setresuid(uid, uid, uid));
  AIRLOCK_STEP("clear ambient capabilities",
               ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  AIRLOCK_STEP("clear all capabilities", ::syscall(SYS_capset, &header, data));
  AIRLOCK_STEP("set no_new_privs", ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  return {};
}

Step die_with_host() {
  AIRLOCK_STEP("set the parent-death signal", ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
  // The host may have died before the line above: its end of the socket is then closed.
  pollfd p{kSyncFd, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
    errno = EPIPE;
    return step_failed("check the host is alive");
  }
  // Not dumpable: the job's code (same uid) cannot read init's memory.
  AIRLOCK_STEP("make init undumpable", ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
  return {};
}

Step install_seccomp(const SeccompProgram& program) {
  if (auto st = install_filter(program); !st) {
    errno = st.error().err;
    return step_failed("install the seccomp filter");
  }
  return {};
}

void report_and_exit(int sync_fd, const StepError& error) {
  Msg msg{};
  msg.kind = MsgKind::kError;
  msg.value = error.err;
  std::strncpy(msg.step, error.step, sizeof(msg.step) - 1);
  ::send(sync_fd, &msg, sizeof(msg), MSG_NOSIGNAL);
  ::_exit(125);
}

}  // namespace airlock::sandbox
