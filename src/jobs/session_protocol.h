// The host's side of the session kernel's protocol (session_kernel.h): pure
// parsing of the lines the sandbox sends and the per-call output collection.
// Everything here is untrusted input: a line that is not a JSON object is an
// error (the caller passes it on as raw output), fields of the wrong type read
// as empty, and nothing a line says can touch a call other than the one its
// id names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::jobs {

struct CallUsage {
  uint64_t cpu_ms = 0;             // the session cgroup's cpu time over the call
  uint64_t peak_memory_bytes = 0;  // the session cgroup's high-water mark as of the call's end (0: unknown)
};

struct CallResult {
  std::string id;      // the id the caller gave
  std::string status;  // see Session::exec
  std::string stdout_text, stderr_text;  // what the call printed (capped: kCallOutputCap each)
  std::string result;                    // repr of the last expression, or ""
  std::string html;                      // its _repr_html_ (a DataFrame), or ""
  std::string error;                     // traceback or reason, or ""
  std::vector<std::string> figures_png_base64;
  int exit_code = 0;  // shell: the command's exit status
  std::string cwd;    // shell: the working directory after the command
  double ms = 0;
  CallUsage usage;
};

struct KernelEvent {
  enum class Kind { kReady, kStarted, kOutput, kAnswer, kKernelExited, kOther };
  Kind kind = Kind::kOther;
  std::string id;          // the call it belongs to ("" for none)
  bool is_stderr = false;  // kOutput
  std::string text;        // kOutput: the text; kKernelExited: the keeper's reason
  CallResult answer;       // kAnswer (without output: that came as kOutput)
};

// Parses one protocol line without its mark.
Result<KernelEvent> parse_kernel_event(std::string_view json_text);

// Collects one stream of a call up to `cap` bytes; past it the text ends with
// a note saying how much was cut.
class OutputCollector {
 public:
  explicit OutputCollector(size_t cap) : cap_(cap) {}
  void append(std::string_view text);
  std::string take();

 private:
  size_t cap_;
  std::string text_;
  uint64_t dropped_ = 0;
};

inline constexpr size_t kCallOutputCap = 1 << 20;

}  // namespace airlock::jobs
