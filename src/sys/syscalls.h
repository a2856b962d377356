// Thin wrappers for the kernel calls glibc does not wrap (or wraps
// differently). Each returns a Result and captures errno at the call.
// This folder is the only place that issues raw syscall(2).
#pragma once

#include <linux/openat2.h>
#include <linux/sched.h>
#include <sys/types.h>

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sys {

// openat2(2). `what` names the operation for the error message.
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

Status pidfd_send_signal(int pidfd, int sig);
Result<UniqueFd> pidfd_open(pid_t pid);

Status pivot_root(const char* new_root, const char* put_old);

// mount_setattr(2) on `path` relative to dirfd.
Status mount_setattr(int dirfd, const char* path, unsigned flags,
                     unsigned long long attr_set, unsigned long long attr_clr);

}  // namespace airlock::sys
