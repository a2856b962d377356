#include "session_zygote.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "pool/warm_pool.h"

namespace airlock::testing {

sandbox::Zygote* session_zygote() {
  static std::once_flag once;
  static std::unique_ptr<sandbox::Zygote> zygote;  // destroyed at exit: the zygote is killed and reaped
  static std::string error;
  std::call_once(once, [] {
    sandbox::ZygoteOptions options;
    options.env = jobs::zygote_environment();
    auto started = sandbox::Zygote::start(AIRLOCK_BINARY, options);
    if (started) zygote = std::move(*started);
    else error = started.error().message();
  });
  EXPECT_TRUE(zygote) << "the preloaded interpreter did not start: " << error;
  return zygote.get();
}

bool sessions_preloaded() {
  const char* m = std::getenv("SESSION_START");
  return m != nullptr && std::string(m) == "preloaded";
}

}  // namespace airlock::testing
