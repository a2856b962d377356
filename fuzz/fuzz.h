// Helpers shared by the fuzz targets: the input as text, and a split of it
// into two parts at the first NUL (schema and instance, pattern and text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "base/check.h"  // AIRLOCK_CHECK: a broken property crashes, libFuzzer reports it

namespace airlock::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// "a\0b" -> {"a", "b"}; without a NUL, {whole, ""}.
inline std::pair<std::string_view, std::string_view> split_nul(std::string_view in) {
  size_t nul = in.find('\0');
  if (nul == std::string_view::npos) return {in, {}};
  return {in.substr(0, nul), in.substr(nul + 1)};
}

}  // namespace airlock::fuzz
