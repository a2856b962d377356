// Two jobs at once on one image must share no channel through its files.
// Each test runs job A (holds something on an image file, then waits) and,
// while A waits, job B (looks for it). On `host` both jobs see the host's
// own inodes, so the attack works there: that is what the host variant
// asserts, so the test can fail. On a stored image each sandbox has a
// superblock of its own and B sees nothing of A.
//
// inotify, flock, leases and dnotify are already denied inside by the
// seccomp filter (hostile cases image_inotify, image_flock,
// image_lease_pagecache); the watch below is therefore placed from the host
// into A's view (/proc/<pid>/root), standing for a job that got past the
// filter. POSIX record locks (F_SETLK/F_GETLK) are allowed inside (sqlite
// needs them), so that attack is made by the jobs themselves.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "image_helpers.h"
#include "run_helpers.h"

namespace {

namespace fs = std::filesystem;
using airlock::testing::lock_holder_script;
using airlock::testing::lock_probe_script;
using airlock::testing::run_airlock;
using airlock::testing::Spawned;
using airlock::testing::TempDir;

std::string store_dir() {
  const char* d = std::getenv("AIRLOCK_TEST_IMAGE_DIR");
  return d ? d : std::string(AIRLOCK_SOURCE_DIR) + "/build/images";
}
constexpr const char* kImage = "minimal";
constexpr const char* kFile = "/usr/lib/os-release";

// Job A: a read lock on kFile (F_SETLK), then /workspace/ready, then waits
// (at most 30 s) for the host to create /workspace/done.
const std::string kHolder = lock_holder_script(kFile);

// Job B: asks whether anyone holds a lock that a write lock would conflict
// with (F_GETLK), and reads the file.
const std::string kProbe = lock_probe_script(kFile) + R"(
st = os.stat("/usr/lib/os-release")
print("dev", st.st_dev, "ino", st.st_ino)
)";

class ImageIsolation : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() != "host" && !fs::exists(store_dir() + "/names/" + kImage))
      GTEST_SKIP() << "the image '" << kImage << "' is not built in " << store_dir()
                   << " (scripts/test-setup/20-images.sh builds it)";
  }
  std::vector<std::string> run_args(const std::string& code) {
    return {"run",      "--json",      "--state-dir", dir_.state(), "--image",
            GetParam(), "--image-dir", store_dir(),   "--timeout",  "40",
            "--",       "python3",     "-c",          code};
  }
  // The pid of job A's payload once it holds its lock; 0 on timeout.
  pid_t holder_ready(pid_t airlock) {
    uid_t uid = airlock::testing::job_uid_of(airlock, 20000);
    if (uid == 0) return 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      for (pid_t pid : airlock::testing::processes_of_uid(uid))
        if (fs::exists("/proc/" + std::to_string(pid) + "/root/workspace/ready")) return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }
  TempDir dir_;
};

TEST_P(ImageIsolation, ALockOrAWatchInOneJobShowsNothingOfTheOther) {
  const bool host = GetParam() == "host";
  Spawned holder(run_args(kHolder), dir_.path(), dir_.state());
  pid_t a = holder_ready(holder.pid());
  ASSERT_NE(a, 0) << "job A never took its lock: "
                  << airlock::testing::read_text(dir_.sub("airlock.out"))
                  << airlock::testing::read_text(dir_.sub("airlock.err"));
  std::string a_root = "/proc/" + std::to_string(a) + "/root";

  // A watch on the file as job A sees it (placed from the host).
  int in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(in, 0);
  ASSERT_GE(::inotify_add_watch(in, (a_root + kFile).c_str(), IN_OPEN | IN_ACCESS), 0);

  auto probe = run_airlock(run_args(kProbe));
  auto record = probe.record();
  char events[4096];
  ssize_t seen = ::read(in, events, sizeof(events));
  ::close(in);
  airlock::testing::write_text(a_root + "/workspace/done", "");
  EXPECT_EQ(holder.wait(), 0);

  ASSERT_EQ(record.value("outcome", ""), "succeeded") << probe.out << probe.err;
  std::string out = record["stdout"].value("text", "");
  if (host) {  // the channel exists on host: the attacks work
    EXPECT_NE(out.find("SEEN lock of another job"), std::string::npos) << out;
    EXPECT_GT(seen, 0) << "the watch in job A's view saw no open or read of job B";
  } else {
    EXPECT_NE(out.find("UNSEEN no lock"), std::string::npos) << out;
    EXPECT_LT(seen, 0) << "the watch in job A's view saw job B open or read " << kFile;
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(record["image"].value("name", ""), kImage);
  }
}

INSTANTIATE_TEST_SUITE_P(Images, ImageIsolation, testing::Values("host", kImage),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
