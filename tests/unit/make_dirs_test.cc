// sys::make_dirs: like mkdir -p, and one mkdir where the parents exist.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "sys/file_io.h"
#include "sys/remove_tree.h"

namespace airlock::sys {
namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/airlock-make-dirs-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~Scratch() { (void)remove_tree(dir); }
};

bool is_dir(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TEST(MakeDirs, MakesEveryMissingParentAndAcceptsWhatExists) {
  Scratch s;
  ASSERT_TRUE(make_dirs(s.dir + "/a/b/c", 0700));
  EXPECT_TRUE(is_dir(s.dir + "/a") && is_dir(s.dir + "/a/b") && is_dir(s.dir + "/a/b/c"));
  EXPECT_TRUE(make_dirs(s.dir + "/a/b/c", 0700)) << "an existing directory is fine";
  EXPECT_TRUE(make_dirs(s.dir + "/a/b/d/", 0700)) << "a trailing slash";
  EXPECT_TRUE(is_dir(s.dir + "/a/b/d"));
  EXPECT_TRUE(make_dirs(s.dir + "//x//y", 0700)) << "doubled slashes";
  EXPECT_TRUE(is_dir(s.dir + "/x/y"));
  struct stat st{};
  ASSERT_EQ(::stat((s.dir + "/a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(MakeDirs, AFileInTheWayOrAnEmptyPathFailWithTheReason) {
  Scratch s;
  ASSERT_TRUE(write_file_atomic(s.dir + "/file", "x", 0600));
  auto under = make_dirs(s.dir + "/file/sub", 0700);
  ASSERT_FALSE(under);
  EXPECT_EQ(under.error().err, ENOTDIR);
  EXPECT_NE(under.error().what.find(s.dir + "/file/sub"), std::string::npos) << under.error().what;
  auto empty = make_dirs("", 0700);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().err, ENOENT);
}

}  // namespace
}  // namespace airlock::sys
