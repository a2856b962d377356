// Errors inside the sandbox child, before exec. The child may run after fork
// from a threaded parent, so errors here carry a static step name and errno,
// nothing allocated. The host turns them into an airlock::Error.
#pragma once

#include <cerrno>
#include <expected>

namespace airlock::sandbox {

struct StepError {
  const char* step;  // static string, e.g. "mount proc"
  int err;
};

using Step = std::expected<void, StepError>;

inline std::unexpected<StepError> step_failed(const char* step) {
  return std::unexpected(StepError{step, errno});
}

// Runs `call` (returning <0 on failure with errno set) as the step `name`.
#define AIRLOCK_STEP(name, call)                         \
  do {                                                   \
    if ((call) < 0) return ::airlock::sandbox::step_failed(name); \
  } while (0)

#define AIRLOCK_TRY_STEP(expr)                 \
  do {                                         \
    if (auto _s = (expr); !_s) return _s;      \
  } while (0)

}  // namespace airlock::sandbox
