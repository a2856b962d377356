#include "egress/attempt_log.h"

#include <ctime>

namespace airlock::egress {
namespace {

std::string rfc3339(int64_t unix_ms) {
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

}  // namespace

nlohmann::json to_json(const Attempt& a) {
  nlohmann::json j = {{"time", rfc3339(a.unix_ms)},
                      {"method", a.method},
                      {"host", a.host},
                      {"port", a.port},
                      {"path", a.path},
                      {"allowed", a.allowed},
                      {"reason", a.reason},
                      {"address", a.address},
                      {"status", a.status},
                      {"bytes_up", a.bytes_up},
                      {"bytes_down", a.bytes_down},
                      {"duration_ms", a.duration_ms}};
  if (!a.secret.empty()) j["secret"] = a.secret;
  return j;
}

void AttemptLog::add(Attempt attempt) {
  std::lock_guard lock(mu_);
  if (attempts_.size() >= kMaxKept) {
    ++dropped_;
    return;
  }
  attempts_.push_back(std::move(attempt));
}

std::vector<Attempt> AttemptLog::take() {
  std::lock_guard lock(mu_);
  return std::move(attempts_);
}

uint64_t AttemptLog::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace airlock::egress
