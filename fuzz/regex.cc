// The linear-time matcher behind the JSON Schema "pattern" keyword
// (src/validate/regex.cc). Input: pattern, NUL, text.
#include "fuzz/fuzz.h"
#include "validate/regex.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [pattern, text] = airlock::fuzz::split_nul(airlock::fuzz::text(data, size));
  auto regex = airlock::validate::Regex::compile(pattern);
  if (!regex) return 0;
  (void)regex->search(text);
  return 0;
}
