// Errors of the service's operations, carrying the HTTP status the API
// answers with. Anything about another tenant's objects is kNotFound, never
// kForbidden: a tenant cannot learn that something exists.
#pragma once

#include <cerrno>
#include <expected>
#include <string>

#include "base/result.h"

namespace airlock::service {

struct ApiError {
  int status;
  std::string code;  // machine-readable, e.g. "not_found"
  std::string message;
};

template <class T>
using ApiResult = std::expected<T, ApiError>;

inline std::unexpected<ApiError> api_error(int status, std::string code, std::string message) {
  return std::unexpected(ApiError{status, std::move(code), std::move(message)});
}
inline std::unexpected<ApiError> not_found(const std::string& what) {
  return api_error(404, "not_found", what + " not found");
}
inline std::unexpected<ApiError> internal(const std::string& message) {
  return api_error(500, "internal", message);
}
// A failed write to the service's own storage: 507 when its disk is full
// (nothing was kept; the client may try again later), else 500.
inline std::unexpected<ApiError> storage_failure(const Error& e) {
  if (e.err == ENOSPC || e.err == EDQUOT)
    return api_error(507, "insufficient_storage", "the service's storage is full; nothing was stored, try again later");
  return internal(e.message());
}

}  // namespace airlock::service
