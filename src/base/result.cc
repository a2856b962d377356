#include "base/result.h"

#include <cstring>

namespace airlock {

std::string Error::message() const {
  if (err == 0) return what;
  return what + ": " + std::strerror(err);
}

}  // namespace airlock
