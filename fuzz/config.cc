// airlock serve's configuration (src/service/config.cc): TOML an operator
// writes, often by hand. A bad file must be an error, never a crash.
#include "fuzz/fuzz.h"
#include "service/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)airlock::service::parse_config(std::string(airlock::fuzz::text(data, size)));
  return 0;
}
