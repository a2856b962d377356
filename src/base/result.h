// Errors as values. Every function that crosses a syscall boundary returns
// Result<T> (or Status) and captures errno where the call failed. An error
// carries a kind, so that a caller decides by the kind, never by searching
// the message text (docs/errors.md).
#pragma once

#include <cerrno>
#include <expected>
#include <string>
#include <utility>

namespace airlock {

enum class ErrorKind {
  kInternal,     // airlock itself or the machine failed (default; a syscall error)
  kInvalid,      // the request or its input is malformed
  kRefused,      // the request is well formed, but policy or its input says no
  kNotFound,     // what was named does not exist
  kUnavailable,  // not right now (a pool class empty, a peer not answering): try again or fall back
};

struct Error {
  std::string what;  // what was being done, e.g. "mount proc on /proc"
  int err = 0;       // errno at the failing call, 0 if not a syscall failure
  ErrorKind kind = ErrorKind::kInternal;

  // "what: strerror(err)", or just "what" when err is 0.
  std::string message() const;
};

template <class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

// A failure that is not a syscall error (bad input, broken contract of a peer).
inline std::unexpected<Error> fail(std::string what) {
  return std::unexpected(Error{std::move(what), 0});
}

// A failure of a given kind that is not a syscall error.
inline std::unexpected<Error> fail(ErrorKind kind, std::string what) {
  return std::unexpected(Error{std::move(what), 0, kind});
}

// A failure of the call that just set errno. Read errno before anything else.
inline std::unexpected<Error> fail_errno(std::string what) {
  int saved = errno;
  return std::unexpected(Error{std::move(what), saved});
}

inline std::unexpected<Error> fail_with(std::string what, int err) {
  return std::unexpected(Error{std::move(what), err});
}

// Passes an error on unchanged: `return forward(r);` for a failed Result `r`.
template <class T>
std::unexpected<Error> forward(const Result<T>& r) {
  return std::unexpected(r.error());
}

// Returns the error of `expr` (a Result or Status) from the calling function.
#define AIRLOCK_TRY(expr)                                          \
  do {                                                             \
    if (auto airlock_try_ = (expr); !airlock_try_)                 \
      return std::unexpected(std::move(airlock_try_.error()));     \
  } while (0)

}  // namespace airlock
