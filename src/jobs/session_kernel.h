// The Python kernel a session's sandbox runs (`python3 -c` this source): it
// reads one JSON request per line on stdin ({"id", "code"}), runs the code in
// one namespace that persists across requests, and answers on stdout with
// one line: kKernelMark + JSON {"id", "status" (ok, error, interrupted),
// "stdout", "stderr", "result" (repr of the last expression), "html" (its
// _repr_html_, e.g. a DataFrame), "error" (traceback), "figures" (every open
// matplotlib figure as base64 PNG, then closed), "ms"}. SIGINT interrupts the
// running code (KeyboardInterrupt); the kernel and its state survive. At
// start it answers {"id": "ready"}.
#pragma once

#include <string>

namespace airlock::jobs {

inline constexpr const char* kKernelMark = "\x1e" "airlock-kernel ";

const std::string& kernel_source();

}  // namespace airlock::jobs
