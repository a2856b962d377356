#include "sandbox/core_pattern.h"

#include <string>

#include "sys/file_io.h"

namespace airlock::sandbox {

Status check_core_pattern(std::string_view pattern) {
  if (!pattern.starts_with('@')) return {};
  return fail("kernel.core_pattern is a coredump socket (" +
              std::string(pattern.substr(0, pattern.find('\n'))) +
              "): the kernel would send a crashing job's memory to the host's coredump "
              "server whatever its RLIMIT_CORE; set a pipe or file core_pattern to run jobs");
}

Status check_host_core_pattern() {
  auto pattern = sys::read_file("/proc/sys/kernel/core_pattern");
  if (!pattern) return std::unexpected(pattern.error());
  return check_core_pattern(*pattern);
}

}  // namespace airlock::sandbox
