// Thin wrappers for the kernel calls glibc does not wrap (or wraps
// differently). Each returns a Result and captures errno at the call.
// Host code issues raw syscall(2) through these; the sandbox child calls
// seccomp(2) and capset(2) directly (seccomp_filter.cc, child_setup.cc),
// where nothing may allocate.
#pragma once

#include <linux/openat2.h>
#include <linux/sched.h>
#include <sys/types.h>

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sys {

// openat2(2); the error names the path.
Result<UniqueFd> openat2(int dirfd, const std::string& path, const open_how& how);

// Resolve `path` strictly beneath `dirfd`: no symlinks, no magic links, no
// crossing mounts, no "..". Adds O_NOFOLLOW|O_CLOEXEC to `flags`.
Result<UniqueFd> open_beneath(int dirfd, const std::string& path, int flags,
                              mode_t mode = 0);

// clone3(2) without CLONE_VM: returns 0 in the child, the pid in the parent.
// The child must not return into code that assumes the parent's threads.
Result<pid_t> clone3(clone_args& args);

// A plain fork through clone(2) (not clone3, which the job filter answers
// with ENOSYS), without glibc's atfork handlers.
Result<pid_t> raw_fork();

// Identity changes for the sandbox child, as raw syscalls: they change only
// the calling thread. glibc's setresuid() & co. broadcast the change to every
// thread it knows of, and in a child cloned from a threaded process (the warm
// pool) those threads do not exist: the call waits for them forever. Return
// -1 with errno set, like libc; they never allocate.
int thread_setresuid(uid_t ruid, uid_t euid, uid_t suid);
int thread_setresgid(gid_t rgid, gid_t egid, gid_t sgid);
int thread_setgroups_none();

Status pidfd_send_signal(int pidfd, int sig);
Result<UniqueFd> pidfd_open(pid_t pid);

Status pivot_root(const char* new_root, const char* put_old);

// mount_setattr(2) on `path` relative to dirfd.
Status mount_setattr(int dirfd, const char* path, unsigned flags,
                     unsigned long long attr_set, unsigned long long attr_clr);

}  // namespace airlock::sys
