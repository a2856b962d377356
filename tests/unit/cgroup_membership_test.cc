#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/cgroup_files.h"

using airlock::sandbox::cgroupfs::in_cgroup2;

TEST(CgroupMembership, ReadsTheCgroup2LineOfAProcess) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, mine;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.rfind("0::/", 0) == 0) {
      mine = line.substr(4);
      found = true;
    }
  }
  if (!found) GTEST_SKIP() << "no cgroup2 hierarchy on this machine";
  EXPECT_TRUE(in_cgroup2(::getpid(), mine));
  EXPECT_FALSE(in_cgroup2(::getpid(), mine + "x"));
  EXPECT_FALSE(in_cgroup2(::getpid(), "airlock/not-this-one"));
  EXPECT_FALSE(in_cgroup2(999999999, mine));  // no such process
}
