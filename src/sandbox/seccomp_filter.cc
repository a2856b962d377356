// The job's seccomp policy, written with libseccomp and exported as BPF.
//
// Start: Docker's default profile (moby/profiles seccomp/default.json) for a
// container without extra capabilities, x86-64 names only. Removed from it:
// ptrace and process_vm_readv/writev (read other processes), adjtimex and
// clock_adjtime (clock tuning), name_to_handle_at (the handle half of
// open_by_handle_at), the legacy AIO calls io_setup/io_submit/... (unused by
// the runtimes, old kernel surface), modify_ldt, remap_file_pages,
// memfd_secret, fanotify_mark, statmount/listmount, sync (host-wide
// writeback; fsync/fdatasync/syncfs stay), and what carries messages between
// jobs through the shared image: inotify_*, flock, fcntl F_SETLEASE/F_NOTIFY
// and preadv2 with RWF_NOWAIT (docs/security.md). Never allowed: mount and
// the new mount API, unshare, setns, chroot, pivot_root, bpf, keyctl,
// perf_event_open, userfaultfd, io_uring_*, kexec_*, modules,
// open_by_handle_at, reboot, swap, acct, quotactl, lookup_dcookie, syslog,
// clock setting, iopl/ioperm, vhangup.
//
// Anything not allowed fails with EPERM. Only the native x86-64 ABI exists:
// libseccomp sends an i386 (`int 0x80`) call and an x32 call (nr|0x40000000)
// to the bad-arch action, which is KILL_PROCESS.
//
// The kernel reads `int` and `unsigned int` arguments as their low 32 bits, so
// every argument rule below compares masked values (SCMP_CMP_MASKED_EQ), never
// the full 64-bit register: high garbage must not slip past a rule.
#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"

#if !defined(__x86_64__)
#error "the airlock seccomp policy is written for x86-64"
#endif

namespace airlock::sandbox {
namespace {

// Allowed whatever the arguments. More are allowed under argument_rules().
// clang-format off
constexpr const char* kAllowed[] = {
    "accept", "accept4", "access", "alarm", "arch_prctl", "bind", "brk",
    "cachestat", "capget", "capset", "chdir", "chmod", "chown", "clock_getres",
    "clock_gettime", "clock_nanosleep", "close", "close_range", "connect",
    "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create",
    "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
    "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group",
    "faccessat", "faccessat2", "fadvise64", "fallocate", "fchdir", "fchmod",
    "fchmodat", "fchmodat2", "fchown", "fchownat", "fdatasync", "fgetxattr",
    "flistxattr", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs",
    "fsync", "ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv",
    "futex_wake", "futimesat", "get_robust_list", "get_thread_area", "getcpu",
    "getcwd", "getdents", "getdents64", "getegid", "geteuid", "getgid",
    "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid",
    "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
    "getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
    "gettimeofday", "getuid", "getxattr", "getxattrat", "ioprio_get",
    "ioprio_set", "kill", "landlock_add_rule", "landlock_create_ruleset",
    "landlock_restrict_self", "lchown", "lgetxattr", "link", "linkat", "listen",
    "listxattr", "listxattrat", "llistxattr", "lremovexattr", "lseek",
    "lsetxattr", "lstat", "madvise", "map_shadow_stack", "membarrier",
    "memfd_create", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock",
    "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify",
    "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap",
    "mseal", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock",
    "munlockall", "munmap", "nanosleep", "newfstatat", "open", "openat",
    "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
    "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl",
    "pread64", "preadv", "process_mrelease", "pselect6", "pwrite64", "pwritev",
    "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv",
    "recvfrom", "recvmmsg", "recvmsg", "removexattr", "removexattrat", "rename",
    "renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction",
    "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
    "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity",
    "sched_getattr", "sched_getparam", "sched_getscheduler",
    "sched_rr_get_interval", "sched_setaffinity", "sched_setattr",
    "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select",
    "semctl", "semget", "semop", "semtimedop", "sendfile", "sendmmsg",
    "sendmsg", "sendto", "set_robust_list", "set_thread_area",
    "set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups",
    "setitimer", "setpgid", "setpriority", "setregid", "setresgid", "setresuid",
    "setreuid", "setsid", "setsockopt", "setuid", "setxattr", "setxattrat",
    "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
    "signalfd4", "splice", "stat", "statfs", "statx", "symlink", "symlinkat",
    "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
    "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
    "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
    "times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat",
    "utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid",
    "write", "writev",
};
// clang-format on

// x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl) of syscalls newer
// than the table of the libseccomp we build against.
struct NewerSyscall {
  std::string_view name;
  int nr;
};
constexpr NewerSyscall kNewerSyscalls[] = {
    {"mseal", 462},       {"setxattrat", 463},    {"getxattrat", 464},
    {"listxattrat", 465}, {"removexattrat", 466},
};

constexpr uint64_t kLow32 = 0xffffffff;
// The kernel's SOCK_TYPE_MASK: the type without SOCK_NONBLOCK/SOCK_CLOEXEC.
constexpr uint64_t kSockTypeMask = 0xf;
constexpr uint64_t kCloneNamespaceFlags =
    CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
    CLONE_NEWNET | CLONE_NEWCGROUP;
// PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32|UNAME26, and the query.
constexpr uint32_t kAllowedPersonalities[] = {0x0, 0x8, 0x20000, 0x20008,
                                              0xffffffff};
constexpr uint32_t kDeniedIoctls[] = {TIOCSTI, TIOCLINUX};

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Filter = std::unique_ptr<void, FilterDeleter>;

// One libseccomp rule: `action` for `name` when all conditions hold.
struct Rule {
  const char* name;
  uint32_t action;
  std::vector<scmp_arg_cmp> conditions;
};

scmp_arg_cmp masked_eq(unsigned arg, uint64_t mask, uint64_t value) {
  return SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, value);
}
scmp_arg_cmp low32_eq(unsigned arg, uint32_t value) {
  return masked_eq(arg, kLow32, value);
}

// Allow rules for `name` that together match exactly when the low 32 bits of
// argument `arg` are none of `denied`.
//
// libseccomp refuses a rule whose action equals the default (EPERM), and its
// SCMP_CMP_NE compares all 64 bits, which a caller can dodge by setting high
// bits the kernel then ignores (Flatpak's CVE-2019-10063 TIOCSTI bypass). So
// "anything but these" is a union of single masked comparisons: the value is
// allowed when a bit on which all denied values agree differs from them, or
// when the bits on which they disagree form a pattern no denied value has.
std::vector<Rule> allow_unless_low32_in(const char* name, unsigned arg,
                                        std::span<const uint32_t> denied) {
  uint32_t first = denied.front();
  uint32_t disagree = 0;
  for (uint32_t v : denied) disagree |= v ^ first;
  AIRLOCK_CHECK(std::popcount(disagree) <= 8);  // 2^k pattern rules below

  std::vector<Rule> rules;
  for (int bit = 0; bit < 32; ++bit) {
    uint32_t b = uint32_t{1} << bit;
    if ((disagree & b) == 0) {
      rules.push_back({name, SCMP_ACT_ALLOW, {masked_eq(arg, b, ~first & b)}});
    }
  }
  uint32_t pattern = 0;  // walks every subset of `disagree`
  do {
    bool is_denied = std::ranges::any_of(
        denied, [&](uint32_t v) { return (v & disagree) == pattern; });
    if (!is_denied) {
      rules.push_back(
          {name, SCMP_ACT_ALLOW, {masked_eq(arg, disagree, pattern)}});
    }
    pattern = (pattern - disagree) & disagree;
  } while (pattern != 0);
  return rules;
}

// What a process may create a socket for: unix of any type; TCP and UDP over
// IPv4/IPv6, named by protocol 0 or by their own number (so no MPTCP,
// UDP-Lite, SCTP, ICMP "ping" sockets, raw or packet); netlink only for routes
// (getaddrinfo, `ip addr`).
struct InetSocket {
  uint32_t type;
  uint32_t protocol;
};
constexpr InetSocket kInetSockets[] = {{SOCK_STREAM, 0},
                                       {SOCK_STREAM, IPPROTO_TCP},
                                       {SOCK_DGRAM, 0},
                                       {SOCK_DGRAM, IPPROTO_UDP}};

// fcntl commands that reach other processes through a shared file: a lease
// (F_SETLEASE) and dnotify (F_NOTIFY, inotify's predecessor on directories).
constexpr uint32_t kDeniedFcntls[] = {F_SETLEASE, F_NOTIFY};
// The one resource limit a job may not set (docs/security.md, core dumps).
constexpr uint32_t kFixedRlimits[] = {RLIMIT_CORE};

std::vector<Rule> socket_rules() {
  std::vector<Rule> rules = {
      {"socket", SCMP_ACT_ALLOW, {low32_eq(0, AF_UNIX)}},
      {"socket",
       SCMP_ACT_ALLOW,
       {low32_eq(0, AF_NETLINK), low32_eq(2, NETLINK_ROUTE)}},
      // Pairs only between unix sockets (the kernel offers them for no other
      // family today, but that is its configuration, not our policy).
      {"socketpair", SCMP_ACT_ALLOW, {low32_eq(0, AF_UNIX)}},
  };
  for (uint32_t family : {AF_INET, AF_INET6}) {
    for (const InetSocket& s : kInetSockets) {
      rules.push_back({"socket",
                       SCMP_ACT_ALLOW,
                       {low32_eq(0, family),
                        masked_eq(1, kSockTypeMask, s.type),
                        low32_eq(2, s.protocol)}});
    }
  }
  return rules;
}

std::vector<Rule> argument_rules() {
  std::vector<Rule> rules = {
      // Processes and threads, never new namespaces. clone3 keeps its flags
      // in memory, out of the filter's reach: ENOSYS makes glibc use clone.
      {"clone", SCMP_ACT_ALLOW, {masked_eq(0, kCloneNamespaceFlags, 0)}},
      {"clone3", SCMP_ACT_ERRNO(ENOSYS), {}},
      // RLIMIT_CORE is 1 so that no crash makes a dump (a pipe core_pattern
      // aborts at exactly 1, a file needs a page): it may be read, not set,
      // for any process (prlimit64 with no new limit is a query).
      {"prlimit64",
       SCMP_ACT_ALLOW,
       {low32_eq(1, RLIMIT_CORE), SCMP_CMP(2, SCMP_CMP_EQ, 0)}},
      // RWF_NOWAIT answers EAGAIN for pages not in the page cache: a probe
      // of what another job read from the shared image.
      {"preadv2", SCMP_ACT_ALLOW, {masked_eq(5, RWF_NOWAIT, 0)}},
  };
  std::ranges::move(socket_rules(), std::back_inserter(rules));
  for (uint32_t persona : kAllowedPersonalities) {
    rules.push_back({"personality", SCMP_ACT_ALLOW, {low32_eq(0, persona)}});
  }
  // Terminal input injection (CVE-2017-5226) and the console's TIOCLINUX.
  std::ranges::move(allow_unless_low32_in("ioctl", 1, kDeniedIoctls),
                    std::back_inserter(rules));
  std::ranges::move(allow_unless_low32_in("fcntl", 1, kDeniedFcntls),
                    std::back_inserter(rules));
  std::ranges::move(allow_unless_low32_in("setrlimit", 0, kFixedRlimits),
                    std::back_inserter(rules));
  std::ranges::move(allow_unless_low32_in("prlimit64", 1, kFixedRlimits),
                    std::back_inserter(rules));
  return rules;
}

Result<int> resolve(const char* name) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr >= 0) return nr;
  for (const NewerSyscall& s : kNewerSyscalls) {
    if (s.name == name) return s.nr;
  }
  // A negative number is libseccomp's "not on this arch" pseudo-syscall: a
  // rule for it would silently do nothing.
  return fail(std::string("seccomp: no x86-64 syscall named ") + name);
}

Status add_rule(const Filter& filter, const Rule& rule) {
  Result<int> nr = resolve(rule.name);
  if (!nr) return std::unexpected(nr.error());
  int rc = seccomp_rule_add_exact_array(filter.get(), rule.action, *nr,
                                        rule.conditions.size(),
                                        rule.conditions.data());
  if (rc < 0) {
    return fail_with(std::string("seccomp rule for ") + rule.name, -rc);
  }
  return {};
}

Result<SeccompProgram> export_bpf(const Filter& filter) {
  UniqueFd memfd(memfd_create("airlock-seccomp", MFD_CLOEXEC));
  if (!memfd) return fail_errno("memfd for the seccomp program");
  if (int rc = seccomp_export_bpf(filter.get(), memfd.get()); rc < 0) {
    return fail_with("seccomp_export_bpf", -rc);
  }
  if (lseek(memfd.get(), 0, SEEK_SET) != 0) {
    return fail_errno("rewind the seccomp program");
  }
  Result<std::string> bytes = sys::read_all(memfd.get());
  if (!bytes) return std::unexpected(bytes.error());

  size_t count = bytes->size() / sizeof(sock_filter);
  if (count == 0 || count > BPF_MAXINSNS ||
      bytes->size() % sizeof(sock_filter) != 0) {
    return fail("seccomp program has a bad size: " +
                std::to_string(bytes->size()) + " bytes");
  }
  SeccompProgram program;
  program.instructions.resize(count);
  std::memcpy(program.instructions.data(), bytes->data(), bytes->size());
  return program;
}

}  // namespace

Result<SeccompProgram> build_job_filter() {
  // seccomp_init adds only the native arch (x86-64); i386 and x32 stay out.
  Filter filter(seccomp_init(SCMP_ACT_ERRNO(EPERM)));
  if (!filter) return fail("seccomp_init failed");
  if (int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH,
                                SCMP_ACT_KILL_PROCESS);
      rc < 0) {
    return fail_with("seccomp bad-arch action", -rc);
  }
  // A binary search over syscall numbers instead of a ~290-entry chain.
  if (int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
      rc < 0) {
    return fail_with("seccomp optimize attribute", -rc);
  }
  for (const char* name : kAllowed) {
    if (auto s = add_rule(filter, {name, SCMP_ACT_ALLOW, {}}); !s) {
      return std::unexpected(s.error());
    }
  }
  for (const Rule& rule : argument_rules()) {
    if (auto s = add_rule(filter, rule); !s) return std::unexpected(s.error());
  }
  return export_bpf(filter);
}

Result<SeccompProgram> build_layer_filter(std::span<const LayerRule> rules) {
  if (rules.empty()) return SeccompProgram{};
  Filter filter(seccomp_init(SCMP_ACT_ALLOW));
  if (!filter) return fail("seccomp_init failed");
  // The job filter below already kills foreign ABIs; the same here, so that
  // the layer is complete on its own too.
  if (int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
    return fail_with("seccomp bad-arch action", -rc);
  for (const LayerRule& r : rules) {
    uint32_t action = r.action == LayerAction::kDeny    ? SCMP_ACT_ERRNO(EPERM)
                      : r.action == LayerAction::kNoSys ? SCMP_ACT_ERRNO(ENOSYS)
                                                        : SCMP_ACT_NOTIFY;
    std::vector<scmp_arg_cmp> conditions;
    if (r.arg >= 0) conditions.push_back(masked_eq(static_cast<unsigned>(r.arg), r.mask & kLow32, r.value));
    if (auto s = add_rule(filter, {r.syscall.c_str(), action, std::move(conditions)}); !s)
      return std::unexpected(s.error());
  }
  return export_bpf(filter);
}

Status install_filter(const SeccompProgram& program) {
  // Error texts stay within std::string's inline buffer: no heap, even here.
  if (program.instructions.empty() ||
      program.instructions.size() > BPF_MAXINSNS) {
    return fail_with("seccomp filter", EINVAL);
  }
  sock_fprog fprog{
      .len = static_cast<unsigned short>(program.instructions.size()),
      .filter = const_cast<sock_filter*>(program.instructions.data()),
  };
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
    return fail_errno("seccomp filter");
  }
  return {};
}

std::vector<std::string> allowed_syscall_names() {
  std::vector<std::string> names(std::begin(kAllowed), std::end(kAllowed));
  for (const Rule& rule : argument_rules()) {
    if (rule.action == SCMP_ACT_ALLOW) names.emplace_back(rule.name);
  }
  std::ranges::sort(names);
  auto duplicates = std::ranges::unique(names);
  names.erase(duplicates.begin(), duplicates.end());
  return names;
}

}  // namespace airlock::sandbox
