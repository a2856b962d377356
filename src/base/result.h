// Errors as values. Every function that crosses a syscall boundary returns
// Result<T> (or Status) and captures errno where the call failed.
#pragma once

#include <cerrno>
#include <expected>
#include <string>
#include <utility>

namespace airlock {

struct Error {
  std::string what;  // what was being done, e.g. "mount proc on /proc"
  int err = 0;       // errno at the failing call, 0 if not a syscall failure

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

// A failure of the call that just set errno. Read errno before anything else.
inline std::unexpected<Error> fail_errno(std::string what) {
  int saved = errno;
  return std::unexpected(Error{std::move(what), saved});
}

inline std::unexpected<Error> fail_with(std::string what, int err) {
  return std::unexpected(Error{std::move(what), err});
}

}  // namespace airlock
