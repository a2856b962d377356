// The syscall filter every sandboxed process runs under. Built on the host
// side (allocates, uses libseccomp) into a plain BPF program; installed in the
// child with one allocation-free call.
//
// Policy: an allowlist for x86-64. Anything not listed fails with EPERM;
// a call through a foreign ABI (i386 `int 0x80`, x32) kills the process.
// Argument rules: clone only without namespace flags, clone3 answers ENOSYS
// (glibc falls back to clone), ioctl never TIOCSTI/TIOCLINUX, socket only for
// AF_UNIX, AF_INET/AF_INET6 TCP or UDP (protocol 0 or its own number: no
// raw, packet, MPTCP, UDP-Lite, SCTP or ICMP), and AF_NETLINK/NETLINK_ROUTE
// (for getaddrinfo), socketpair only AF_UNIX, personality only PER_LINUX, a
// query, or the few harmless values Docker allows; fcntl never F_SETLEASE or
// F_NOTIFY, preadv2 never RWF_NOWAIT, and RLIMIT_CORE read but never set
// (setrlimit, prlimit64 for any pid).
#pragma once

#include <linux/filter.h>

#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/profile.h"

namespace airlock::sandbox {

struct SeccompProgram {
  std::vector<sock_filter> instructions;
};

// Builds the default job filter.
Result<SeccompProgram> build_job_filter();

// A profile's second layer (sandbox/profile.h): allows everything but its
// rules, so stacked on the job filter it can only take calls away. Empty
// rules: an empty program (no layer).
Result<SeccompProgram> build_layer_filter(std::span<const LayerRule> rules);

// Installs `program` on the calling thread (and its future children).
// Requires no_new_privs to be set. Safe to call after fork in a
// multi-threaded parent: no allocation (not even on failure), one syscall.
Status install_filter(const SeccompProgram& program);

// The syscall names the default filter lets through, sorted (for docs and
// tests). Includes those allowed only under an argument rule (clone, fcntl,
// ioctl, personality, preadv2, prlimit64, setrlimit, socket, socketpair);
// excludes clone3, which is answered with ENOSYS.
std::vector<std::string> allowed_syscall_names();

}  // namespace airlock::sandbox
