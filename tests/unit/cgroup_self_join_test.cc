// The child's first containment step (join_own_cgroups) on ordinary pipes in
// place of v1 `tasks` files: it writes exactly "0" into each descriptor, closes
// every one of them (none may reach the job), and a descriptor it cannot
// write fails the step with the step's name and errno, so the sandbox never
// starts outside its cgroup. No root needed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "sandbox/child_setup.h"

namespace airlock::sandbox {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

TEST(CgroupSelfJoin, WritesZeroIntoEveryFdAndClosesThem) {
  int a[2], b[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(b, O_CLOEXEC), 0);
  ChildFds fds;
  fds.cgroup_join[0] = a[1];
  fds.cgroup_join[1] = b[1];
  fds.cgroup_join_count = 2;
  ASSERT_TRUE(join_own_cgroups(fds));
  EXPECT_EQ(fds.cgroup_join_count, 0);
  EXPECT_FALSE(is_open(a[1]));
  EXPECT_FALSE(is_open(b[1]));
  for (int r : {a[0], b[0]}) {
    char buf[8] = {};
    EXPECT_EQ(::read(r, buf, sizeof(buf)), 1);  // the write end is closed: all of it, then EOF
    EXPECT_EQ(std::string(buf), "0");
    EXPECT_EQ(::read(r, buf, sizeof(buf)), 0);
    ::close(r);
  }
}

TEST(CgroupSelfJoin, AnUnwritableFdFailsTheStepAndStillClosesIt) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ChildFds fds;
  fds.cgroup_join[0] = p[0];  // the read end: write() gives EBADF
  fds.cgroup_join_count = 1;
  auto st = join_own_cgroups(fds);
  ASSERT_FALSE(st);
  EXPECT_STREQ(st.error().step, "join the job's cgroup");
  EXPECT_EQ(st.error().err, EBADF);
  EXPECT_FALSE(is_open(p[0]));
  ::close(p[1]);
}

TEST(CgroupSelfJoin, NothingToJoinIsASuccessThatTouchesNoFd) {
  ChildFds fds;  // v2: open_self_join gave no descriptors
  EXPECT_TRUE(join_own_cgroups(fds));
  EXPECT_EQ(fds.cgroup_join_count, 0);
}

}  // namespace
}  // namespace airlock::sandbox
