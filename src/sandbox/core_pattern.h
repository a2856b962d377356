// Whether the host's kernel.core_pattern lets a sandboxed crash reach the
// host. Every sandboxed process has RLIMIT_CORE 1 (soft and hard, not
// settable: seccomp_filter.cc): a file pattern then writes nothing (a dump
// needs a page) and a pipe pattern is aborted before its helper starts. A
// socket pattern ("@/path", "@@/path", Linux 6.16+) ignores RLIMIT_CORE and
// would send the dump to the host's coredump server: refused.
#pragma once

#include <string_view>

#include "base/result.h"

namespace airlock::sandbox {

// `pattern`: the contents of /proc/sys/kernel/core_pattern. Pure.
Status check_core_pattern(std::string_view pattern);

// Reads /proc/sys/kernel/core_pattern and checks it.
Status check_host_core_pattern();

}  // namespace airlock::sandbox
