// The machine's shared mount of an image (sandbox/shared_image.h): jobs on
// an image read it through one erofs mount under /run/airlock/images, each
// through an overlay of its own (image_isolation_test.cc proves that the
// overlays share no inode-level channel); `airlock image release`, `rm` and
// a changed store file take the shared mount away.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "image_helpers.h"
#include "pool_helpers.h"
#include "run_helpers.h"

namespace {

namespace fs = std::filesystem;
using airlock::testing::read_text;
using airlock::testing::shared_image_mounted;
using airlock::testing::run_airlock;
using airlock::testing::TempDir;
using airlock::testing::test_image_dir;

std::string shared_path(const std::string& hex) { return "/run/airlock/images/" + hex; }


uint64_t mount_id(const std::string& path) {
  struct statx sx {};
  if (::statx(AT_FDCWD, path.c_str(), 0, STATX_MNT_ID, &sx) < 0) return 0;
  return sx.stx_mnt_id;
}

// Pages of `path` in the page cache of the file system it is on.
size_t resident_pages(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st {};
  ::fstat(fd, &st);
  size_t pages = (static_cast<size_t>(st.st_size) + 4095) / 4096, resident = 0;
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  std::vector<unsigned char> in_core(pages);
  if (::mincore(map, static_cast<size_t>(st.st_size), in_core.data()) == 0)
    for (unsigned char c : in_core) resident += c & 1;
  ::munmap(map, static_cast<size_t>(st.st_size));
  return resident;
}

std::string minimal_hex() {
  std::string digest = read_text(test_image_dir() + "/names/minimal");
  return digest.substr(7, 64);
}

class SharedImageMount : public testing::Test {
 protected:
  void SetUp() override {
    if (!airlock::testing::test_image_built("minimal"))
      GTEST_SKIP() << "the image 'minimal' is not built in " << test_image_dir()
                   << " (scripts/test-setup/20-images.sh builds it)";
    hex_ = minimal_hex();
    auto released = run_airlock({"image", "release"});
    ASSERT_EQ(released.status, 0) << released.out << released.err;
    ASSERT_FALSE(shared_image_mounted(hex_));
  }
  airlock::testing::Ran run(const std::string& code) {
    return run_airlock({"run", "--json", "--state-dir", dir_.state(), "--image", "minimal",
                        "--image-dir", test_image_dir(), "--", "python3", "-c", code});
  }
  TempDir dir_;
  std::string hex_;
};

TEST_F(SharedImageMount, ColdJobsReadTheImageThroughOneMountEachWithAnOverlayOfItsOwn) {
  const std::string code = R"(
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if f[4] == "/usr":
        rest = f[f.index("-") + 1:]
        print("usr", rest[0], rest[1], rest[2])
)";
  auto first = run(code);
  auto rec = first.record();
  ASSERT_EQ(rec.value("outcome", ""), "succeeded") << first.out << first.err;
  std::string out = rec["stdout"].value("text", "");
  // The job's /usr is an overlay of its own whose layers are named by the
  // host's descriptors: no host path, not even the shared mount's.
  EXPECT_NE(out.find("usr overlay image ro,"), std::string::npos) << out;
  EXPECT_NE(out.find("lowerdir=/proc/self/fd/"), std::string::npos) << out;
  EXPECT_EQ(out.find("/run/airlock"), std::string::npos) << out;
  EXPECT_EQ(out.find(test_image_dir()), std::string::npos) << out;

  // The job made the machine's mount of the image, and the loader and libc
  // it ran were read into that mount's page cache (it was made just now).
  ASSERT_TRUE(shared_image_mounted(hex_)) << "no shared mount at " << shared_path(hex_);
  const std::string libc = shared_path(hex_) + "/usr/lib/x86_64-linux-gnu/libc.so.6";
  ASSERT_TRUE(fs::exists(libc)) << libc;
  EXPECT_GT(resident_pages(libc), 0u) << libc;
  uint64_t id = mount_id(shared_path(hex_));
  ASSERT_NE(id, 0u);

  // A second job uses the same mount.
  auto second = run("print('again')").record();
  ASSERT_EQ(second.value("outcome", ""), "succeeded") << second.dump();
  EXPECT_EQ(mount_id(shared_path(hex_)), id) << "the second job mounted the image again";
}

TEST_F(SharedImageMount, ReleaseUnmountsAndTheNextJobMountsAgain) {
  ASSERT_EQ(run("print(1)").record().value("outcome", ""), "succeeded");
  ASSERT_TRUE(shared_image_mounted(hex_));
  auto released = run_airlock({"image", "release", "--json"});
  ASSERT_EQ(released.status, 0) << released.err;
  EXPECT_GE(nlohmann::json::parse(released.out).value("released", 0), 1) << released.out;
  EXPECT_FALSE(shared_image_mounted(hex_));
  EXPECT_FALSE(fs::exists(shared_path(hex_))) << "the mount point stays";
  EXPECT_FALSE(fs::exists(shared_path(hex_) + ".file"));
  ASSERT_EQ(run("print(2)").record().value("outcome", ""), "succeeded");
  EXPECT_TRUE(shared_image_mounted(hex_));
  EXPECT_EQ(run_airlock({"image", "release", "extra"}).status, 125);
}

// The preloaded interpreter's mount namespace is a private copy of the
// host's: it drops its copies of the shared mounts, so that it does not keep
// a released image's superblock and file alive for as long as it runs.
TEST_F(SharedImageMount, ThePreloadedInterpreterKeepsNoCopyOfTheSharedMounts) {
  ASSERT_EQ(run("print(1)").record().value("outcome", ""), "succeeded");
  ASSERT_TRUE(shared_image_mounted(hex_));
  airlock::testing::TestPool pool(dir_.path(), dir_.sub("pool-state"), 0, 1);
  ASSERT_TRUE(pool.ready()) << pool.log();
  std::vector<pid_t> zygotes;
  for (pid_t p : airlock::testing::descendants_of(pool.pid()))
    if (read_text("/proc/" + std::to_string(p) + "/cmdline").find("zygote") != std::string::npos)
      zygotes.push_back(p);
  ASSERT_FALSE(zygotes.empty()) << "no preloaded interpreter under the pool " << pool.pid();
  for (pid_t z : zygotes) {
    std::string mounts = read_text("/proc/" + std::to_string(z) + "/mountinfo");
    EXPECT_EQ(mounts.find(shared_path(hex_)), std::string::npos) << "zygote " << z << ":\n" << mounts;
    EXPECT_NE(mounts.find(" /tmp "), std::string::npos) << "not the interpreter's own namespace";
  }
  EXPECT_NE(read_text("/proc/self/mountinfo").find(shared_path(hex_)), std::string::npos);
  EXPECT_EQ(pool.stop(), 0);
}

// A tiny erofs image (a /usr with one file) in a store of its own: enough
// to be checked and mounted (its job then fails: it has no programs).
TEST(SharedImageMountOfTheStore, RmReleasesTheMountOfTheImageItRemoves) {
  TempDir dir;
  std::string store = dir.sub("store");
  std::string hex = airlock::testing::make_tiny_store(store, dir.path(), "shared-tiny");
  ASSERT_FALSE(hex.empty()) << "mkfs.erofs (erofs-utils) is needed";

  auto ran = run_airlock({"run", "--json", "--state-dir", dir.state(), "--image", "tiny",
                          "--image-dir", store, "--", "/usr/bin/true"});
  EXPECT_NE(ran.record().value("outcome", ""), "input_rejected") << ran.out << ran.err;
  ASSERT_TRUE(shared_image_mounted(hex)) << ran.out << ran.err;
  auto rm = run_airlock({"image", "rm", "tiny", "--image-dir", store});
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_FALSE(shared_image_mounted(hex)) << "the removed image stays mounted";
  EXPECT_FALSE(fs::exists(shared_path(hex)));
}

}  // namespace
