// Runs a host tool of the image build (mmdebstrap, mkfs.erofs, dpkg-query,
// unshare) with a chosen environment, handing its output over line by line.
// The tool runs in a process group of its own: an interrupt (the flag a
// signal handler sets) ends the whole group with SIGTERM, then SIGKILL.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::images {

struct ToolRun {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // the whole environment; empty: PATH and LANG=C.UTF-8 only
  std::function<void(std::string_view)> on_stdout;  // each line of stdout (no newline)
  std::function<void(std::string_view)> on_stderr;  // each line of stderr; null: like stdout
  const std::atomic<bool>* interrupted = nullptr;
};

struct ToolExit {
  int code = -1;   // exit status, -1 when killed
  int signal = 0;  // the signal that ended it
  bool interrupted = false;
  std::string tail;  // its last lines of output (for error messages)
  bool ok() const { return code == 0 && !interrupted; }
};

[[nodiscard]] Result<ToolExit> run_tool(const ToolRun& run);

// The first line a command prints (a version, for the manifest), or "unknown".
[[nodiscard]] std::string tool_version(const std::vector<std::string>& argv);

}  // namespace airlock::images
