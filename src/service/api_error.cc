#include "service/api_error.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace airlock::service {
namespace {

std::mutex log_mu;
std::function<void(const nlohmann::json&)>& log_sink() {
  static std::function<void(const nlohmann::json&)> sink;
  return sink;
}

// A short reference that ties an answer to its log line: distinct within a
// process, and across restarts (the start time is part of it).
std::string next_ref() {
  static const uint64_t start = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  static std::atomic<uint64_t> n{0};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llx-%llu", static_cast<unsigned long long>(start & 0xffffff),
                static_cast<unsigned long long>(++n));
  return buf;
}

std::unexpected<ApiError> with_ref(int status, const char* code, const std::string& said, const std::string& detail) {
  std::string ref = next_ref();
  return std::unexpected(ApiError{status, code, said + " (reference " + ref + " in the service log)",
                                  "[" + ref + "] " + detail});
}

}  // namespace

std::unexpected<ApiError> internal(const std::string& detail) {
  return with_ref(500, "internal", "airlock could not complete the request", detail);
}

std::unexpected<ApiError> store_failure(const Error& e) {
  if (e.err == ENOSPC || e.err == EDQUOT)
    return api_error(507, "insufficient_storage", "the service's storage is full; nothing was stored, try again later");
  if (e.kind == ErrorKind::kUnavailable)
    return with_ref(503, "store_unavailable", "the service's store cannot be reached now; try again shortly",
                    e.message());
  return internal(e.message());
}

int retry_after_s(const ApiError& e) {
  if (e.status == 429) return 1;
  if (e.status == 503 && e.code == "store_unavailable") return 2;
  return 0;
}

void set_api_error_log(std::function<void(const nlohmann::json&)> log) {
  std::lock_guard lock(log_mu);
  log_sink() = std::move(log);
}

void log_api_error(const ApiError& e) {
  if (e.detail.empty()) return;
  std::function<void(const nlohmann::json&)> sink;
  {
    std::lock_guard lock(log_mu);
    sink = log_sink();
  }
  if (sink) sink({{"event", "api_error"}, {"status", e.status}, {"code", e.code}, {"detail", e.detail}});
}

}  // namespace airlock::service
