// Which images get preloaded sandboxes (pool/image_python.h), on fake image
// roots in a temporary directory: no root, no image needed.
#include "pool/image_python.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sys/file_io.h"
#include "sys/remove_tree.h"

using namespace airlock;

namespace {

#if defined(__x86_64__)
const std::string kLibDir = "usr/lib/x86_64-linux-gnu/";
#else
const std::string kLibDir = "usr/lib/aarch64-linux-gnu/";
#endif

class ImagePythonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-image-python-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // What python-data has: python3 -> python3.11, the stdlib, libpython, pandas.
    file("usr/lib/python3.11/os.py");
    file(kLibDir + "libpython3.11.so.1.0");
    file("usr/lib/python3/dist-packages/pandas/__init__.py");
    link("python3.11", "usr/bin/python3");
  }
  void TearDown() override { (void)sys::remove_tree(dir_); }
  void file(const std::string& rel) {
    std::string path = dir_ + "/" + rel;
    ASSERT_TRUE(sys::make_dirs(path.substr(0, path.rfind('/')), 0755).has_value());
    ASSERT_TRUE(sys::write_file_atomic(path, "x").has_value());
  }
  void link(const std::string& target, const std::string& rel) {
    std::string path = dir_ + "/" + rel;
    ASSERT_TRUE(sys::make_dirs(path.substr(0, path.rfind('/')), 0755).has_value());
    (void)::unlink(path.c_str());
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  }
  void remove(const std::string& rel) { ASSERT_EQ(::unlink((dir_ + "/" + rel).c_str()), 0); }
  Result<std::string> probe() {
    int root = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(root, 0);
    auto r = jobs::preloadable_python(root);
    ::close(root);
    return r;
  }
  void expect_refused(const std::string& reason) {
    auto r = probe();
    ASSERT_FALSE(r.has_value()) << "preloadable as " << *r;
    EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
    EXPECT_EQ(r.error().what, reason);
  }
  std::string dir_;
};

TEST_F(ImagePythonTest, AnImageWithPython3LibpythonAndPandasIsPreloadable) {
  auto r = probe();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(*r, "3.11");
  link("/usr/bin/python3.11", "usr/bin/python3");  // an absolute link says the same
  r = probe();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(*r, "3.11");
}

TEST_F(ImagePythonTest, WithoutLibpythonItIsNotAndSaysWhichPackage) {
  // Debian's python3 does not depend on libpython3.X: minimal and build lack it.
  remove(kLibDir + "libpython3.11.so.1.0");
  expect_refused("the image has no libpython3.11.so.1.0 (Debian package libpython3.11)");
}

TEST_F(ImagePythonTest, ALinkInPlaceOfTheLibraryIsNotFollowed) {
  // A link could point out of the image's root when read from the host.
  remove(kLibDir + "libpython3.11.so.1.0");
  link("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", kLibDir + "libpython3.11.so.1.0");
  expect_refused("the image has no libpython3.11.so.1.0 (Debian package libpython3.11)");
}

TEST_F(ImagePythonTest, WithoutPandasItIsNot) {
  remove("usr/lib/python3/dist-packages/pandas/__init__.py");  // the build image: python3, no pandas
  expect_refused("the image has no pandas (python3-pandas)");
}

TEST_F(ImagePythonTest, WithoutPython3ItIsNot) {
  remove("usr/bin/python3");  // render: no Python at all
  expect_refused("the image has no usr/bin/python3 link");
}

TEST_F(ImagePythonTest, APython3ThatIsNotCPython3XIsNot) {
  link("pypy3", "usr/bin/python3");
  expect_refused("the image's python3 is not CPython 3.X (pypy3)");
  link("python3.11-evil", "usr/bin/python3");
  expect_refused("the image's python3 is not CPython 3.X (python3.11-evil)");
}

TEST_F(ImagePythonTest, ALibraryOfAnotherVersionDoesNotCount) {
  link("python3.12", "usr/bin/python3");  // python3 moved on, the stdlib and library did not
  expect_refused("the image has no standard library for python3.12");
  file("usr/lib/python3.12/os.py");
  expect_refused("the image has no libpython3.12.so.1.0 (Debian package libpython3.12)");
}

// Which python3.X names count as a Python job on the image: its own python3's
// version, whether or not the image can have preloaded sandboxes.
TEST_F(ImagePythonTest, TheImagesPythonVersionIsItsPython3Link) {
  auto version = [&] {
    int root = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(root, 0);
    auto r = jobs::image_python_version(root);
    ::close(root);
    return r;
  };
  link("python3.13", "usr/bin/python3");  // no stdlib, no libpython of 3.13: not preloadable
  ASSERT_FALSE(probe().has_value());
  auto v = version();
  ASSERT_TRUE(v.has_value()) << v.error().message();
  EXPECT_EQ(*v, "3.13");
  link("pypy3", "usr/bin/python3");
  EXPECT_EQ(version().error().kind, ErrorKind::kNotFound);
  remove("usr/bin/python3");
  EXPECT_EQ(version().error().what, "the image has no usr/bin/python3 link");
}

}  // namespace
