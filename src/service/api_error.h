// Errors of the service's operations, carrying the HTTP status the API
// answers with. Anything about another tenant's objects is kNotFound, never
// kForbidden: a tenant cannot learn that something exists.
//
// What failed inside the service (SQL, a host path, a library's message)
// never reaches a client: internal() and store_failure() keep it in `detail`,
// which the answering code logs with a reference the client is given
// (docs/errors.md "What a client sees").
#pragma once

#include <cerrno>
#include <expected>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace airlock::service {

struct ApiError {
  int status;
  std::string code;     // machine-readable, e.g. "not_found"
  std::string message;  // for the client
  std::string detail;   // for the service's log only ("" when the message says it all)
};

template <class T>
using ApiResult = std::expected<T, ApiError>;

inline std::unexpected<ApiError> api_error(int status, std::string code, std::string message) {
  return std::unexpected(ApiError{status, std::move(code), std::move(message), {}});
}
inline std::unexpected<ApiError> not_found(const std::string& what) {
  return api_error(404, "not_found", what + " not found");
}
// 500 internal: the client reads a reference; the log has `detail` under it.
std::unexpected<ApiError> internal(const std::string& detail);
// A failure of the service's own storage (the store, its disk): 503
// store_unavailable (with Retry-After) while the store cannot be reached, 507
// when its disk is full (nothing was kept; the client may try again later),
// else 500 internal.
std::unexpected<ApiError> store_failure(const Error& e);
inline std::unexpected<ApiError> storage_failure(const Error& e) { return store_failure(e); }

// The seconds a client is told to wait (Retry-After) after an answer of this
// status and code, 0 for none.
int retry_after_s(const ApiError& e);

// Where answers with a detail are logged ({"event":"api_error", ...}): the
// service sets it once at start; unset, the detail is dropped.
void set_api_error_log(std::function<void(const nlohmann::json&)> log);
// Logs `e.detail` (when there is one) with its status, code and reference.
void log_api_error(const ApiError& e);

}  // namespace airlock::service
