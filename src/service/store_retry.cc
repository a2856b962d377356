#include "service/store_retry.h"

#include <algorithm>

namespace airlock::service {

bool store_may_pass_later(const Error& e) {
  return e.kind == ErrorKind::kInternal || e.kind == ErrorKind::kUnavailable;
}

std::chrono::milliseconds store_retry_wait(int attempt) {
  int shift = std::clamp(attempt - 1, 0, 5);
  return std::min(std::chrono::milliseconds(50 << shift), std::chrono::milliseconds(1000));
}

}  // namespace airlock::service
