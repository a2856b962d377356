// An image store on a filesystem that erofs cannot read file-backed (tmpfs:
// a store under /tmp of a fresh machine, where /tmp is a tmpfs): the kernel
// answers ENOTBLK, and airlock mounts the same open file through a loop
// device of its own (sandbox/image_mount.cc), which goes when the mount goes.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "image_helpers.h"
#include "run_helpers.h"

namespace {

namespace fs = std::filesystem;
using airlock::testing::run_airlock;
using airlock::testing::shared_image_mounted;
using airlock::testing::TempDir;

// The backing files of the loop devices now (/sys/block/loopN/loop/backing_file).
std::vector<std::string> loop_backing_files() {
  std::vector<std::string> out;
  DIR* d = ::opendir("/sys/block");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (std::string(e->d_name).rfind("loop", 0) != 0) continue;
    std::ifstream in(std::string("/sys/block/") + e->d_name + "/loop/backing_file");
    std::string line;
    if (std::getline(in, line)) out.push_back(line);
  }
  ::closedir(d);
  return out;
}

bool any_loop_backed_under(const std::string& dir) {
  for (const auto& f : loop_backing_files())
    if (f.rfind(dir + "/", 0) == 0) return true;
  return false;
}

// A tmpfs mounted at `path` for the test's duration.
class Tmpfs {
 public:
  explicit Tmpfs(std::string path) : path_(std::move(path)) {
    fs::create_directories(path_);
    ok_ = ::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") == 0;
  }
  ~Tmpfs() {
    if (ok_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

TEST(ImageOnTmpfs, IsMountedThroughALoopDeviceThatGoesWithTheMount) {
  TempDir dir;
  Tmpfs tmpfs(dir.sub("tmpfs"));
  ASSERT_TRUE(tmpfs.ok()) << "mount a tmpfs";
  const std::string root = dir.sub("tmpfs");
  const std::string store = root + "/store";
  std::string hex = airlock::testing::make_tiny_store(store, root, "tmpfs-tiny");
  ASSERT_FALSE(hex.empty()) << "mkfs.erofs (erofs-utils) is needed";

  // Checked and mounted (the job itself fails: the tiny image has no programs).
  auto ran = run_airlock({"run", "--json", "--state-dir", dir.state(), "--image", "tiny",
                          "--image-dir", store, "--", "/usr/bin/true"});
  auto rec = ran.record();
  EXPECT_NE(rec.value("outcome", ""), "input_rejected") << ran.out << ran.err;
  EXPECT_EQ(rec.value("reason", "").find("not a mountable erofs image"), std::string::npos)
      << rec.value("reason", "");
  ASSERT_TRUE(shared_image_mounted(hex)) << ran.out << ran.err;
  EXPECT_TRUE(any_loop_backed_under(store)) << "no loop device over the image";

  // Removing the image releases its mount, and the loop device with it.
  auto rm = run_airlock({"image", "rm", "tiny", "--image-dir", store});
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_FALSE(shared_image_mounted(hex));
  bool cleared = false;
  for (int i = 0; i < 100 && !(cleared = !any_loop_backed_under(root)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(cleared) << "a loop device over the removed image is left";
}

}  // namespace
