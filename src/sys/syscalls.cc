#include "sys/syscalls.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>

namespace airlock::sys {

Result<UniqueFd> openat2(int dirfd, const std::string& path, const open_how& how) {
  open_how copy = how;
  long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &copy, sizeof(copy));
  if (fd < 0) return fail_errno("open " + path);
  return UniqueFd(static_cast<int>(fd));
}

Result<UniqueFd> open_beneath(int dirfd, const std::string& path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<__u64>(flags | O_NOFOLLOW | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                RESOLVE_NO_XDEV;
  return openat2(dirfd, path, how);
}

Result<pid_t> clone3(clone_args& args) {
  long pid = ::syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0) return fail_errno("clone3");
  return static_cast<pid_t>(pid);
}

int thread_setresuid(uid_t r, uid_t e, uid_t s) { return static_cast<int>(::syscall(SYS_setresuid, r, e, s)); }
int thread_setresgid(gid_t r, gid_t e, gid_t s) { return static_cast<int>(::syscall(SYS_setresgid, r, e, s)); }
int thread_setgroups_none() { return static_cast<int>(::syscall(SYS_setgroups, 0, nullptr)); }

Result<pid_t> raw_fork() {
  long pid = ::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0);
  if (pid < 0) return fail_errno("fork");
  return static_cast<pid_t>(pid);
}

Status pidfd_send_signal(int pidfd, int sig) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) < 0)
    return fail_errno("pidfd_send_signal");
  return {};
}

Result<UniqueFd> pidfd_open(pid_t pid) {
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return fail_errno("pidfd_open");
  return UniqueFd(static_cast<int>(fd));
}

Status pivot_root(const char* new_root, const char* put_old) {
  if (::syscall(SYS_pivot_root, new_root, put_old) < 0) return fail_errno("pivot_root");
  return {};
}

Status mount_setattr(int dirfd, const char* path, unsigned flags,
                     unsigned long long attr_set, unsigned long long attr_clr) {
  mount_attr attr{};
  attr.attr_set = attr_set;
  attr.attr_clr = attr_clr;
  if (::syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof(attr)) < 0)
    return fail_errno(std::string("mount_setattr ") + path);
  return {};
}

}  // namespace airlock::sys
