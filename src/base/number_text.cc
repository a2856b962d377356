#include "base/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace airlock {

std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // Integral and exactly representable as an integer: no exponent, no fraction.
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0)  // 2^53
    return std::to_string(static_cast<int64_t>(value));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest round trip
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buf, end);
}

}  // namespace airlock
