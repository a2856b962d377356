// The job's command (argv, environment, working directory, where to find the
// program), sent to a prepared sandbox's init when the job starts. The host
// encodes it; init decodes it in place into a static buffer, without
// allocating. Both sides are pure and tested without a sandbox.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace airlock::sandbox {

struct Command {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE
  std::string cwd = "/workspace";
  // Full paths to try for argv[0], in order (the PATH search is done on the
  // host, over the same image the sandbox sees).
  std::vector<std::string> exec_candidates;
  // The profile's narrowing (sandbox/profile.h), applied by init to the
  // payload just before it starts: a second seccomp layer (empty: none),
  // and, when restrict_writes, a Landlock ruleset under which only
  // `writable` (absolute paths) can be written.
  std::vector<sock_filter> layer;
  bool restrict_writes = false;
  std::vector<std::string> writable;
};

// Encoded size limit: one SOCK_SEQPACKET message.
inline constexpr size_t kMaxCommandBytes = 128 * 1024;
// Pointer slots init has for argv + env + candidates (each list NULL-ended).
inline constexpr size_t kMaxCommandStrings = 4096;

// Errors name the problem for the user: a NUL byte in a string, an empty
// argv, or a command and environment too large.
Result<std::string> encode_command(const Command& command);

// A decoded command points into the buffer it was decoded from.
struct CommandView {
  char** argv = nullptr;        // NULL-terminated
  char** env = nullptr;         // NULL-terminated
  char** candidates = nullptr;  // NULL-terminated
  const char* cwd = nullptr;
  char** writable = nullptr;     // NULL-terminated
  bool restrict_writes = false;
  const char* layer = nullptr;   // layer_count sock_filter, unaligned: copy before use
  uint32_t layer_count = 0;
};

// Decodes `buf[0..len)` in place, using `slots[0..nslots)` for the pointer
// arrays. False if the bytes are not a well-formed command (they come from
// the host, but init checks anyway: it must never read out of bounds).
bool decode_command(char* buf, size_t len, char** slots, size_t nslots, CommandView* out);

}  // namespace airlock::sandbox
