#include "sandbox/core_pattern.h"

#include <gtest/gtest.h>

namespace airlock::sandbox {
namespace {

// RLIMIT_CORE 1 stops file and pipe dumps; a socket pattern ignores it.
TEST(CorePattern, SocketPatternsAreRefusedFileAndPipePatternsPass) {
  for (const char* ok : {"core\n", "/var/crash/core.%p\n",
                         "|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h\n",
                         "|/usr/share/apport/apport -p%p -s%s -c%c\n", ""}) {
    EXPECT_TRUE(check_core_pattern(ok)) << ok;
  }
  for (const char* bad : {"@/run/systemd/coredump.socket\n", "@@/run/coredump.socket"}) {
    auto st = check_core_pattern(bad);
    ASSERT_FALSE(st) << bad;
    EXPECT_NE(st.error().message().find("coredump socket"), std::string::npos);
  }
}

}  // namespace
}  // namespace airlock::sandbox
