// `airlock run --image`: what a job on a stored image sees, and the images
// that are refused before anything starts (input_rejected, with the reason).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/sha256.h"
#include "images/image_store.h"
#include "images/image_use.h"
#include "sessions/session.h"
#include "image_helpers.h"
#include "run_helpers.h"
#include "service_fixture.h"
#include "sandbox/cgroup.h"

namespace {

namespace fs = std::filesystem;
using airlock::testing::read_text;
using airlock::testing::test_image_dir;
using airlock::testing::run_airlock;
using airlock::testing::TempDir;
using airlock::testing::write_text;


// A store of its own with one tiny image `tiny` (a /usr with one file),
// made with mkfs.erofs: enough to be checked and refused, not to run.
class TinyStore : public testing::Test {
 protected:
  void SetUp() override {
    store_ = dir_.sub("store");
    hex_ = airlock::testing::make_tiny_store(store_, dir_.path(), "tiny");
    ASSERT_FALSE(hex_.empty()) << "mkfs.erofs (erofs-utils) is needed";
    blob_ = store_ + "/blobs/" + hex_ + ".erofs";
  }
  airlock::testing::Ran run(const std::string& image) {
    return run_airlock({"run", "--json", "--state-dir", dir_.state(), "--image", image,
                        "--image-dir", store_, "--", "/usr/bin/true"});
  }
  TempDir dir_;
  std::string store_, hex_, blob_;
};

TEST_F(TinyStore, UnknownNamesAndWrongPinsAreRefusedBeforeAnythingStarts) {
  struct Want {
    std::string image, reason;
  } cases[] = {
      {"nothere", "unknown image 'nothere'"},
      {"tiny@sha256:" + std::string(64, 'a'), "the pinned digest is not that image"},
      {"Not-A-Name", "image name"},
      {"host@sha256:" + std::string(64, 'a'), "cannot be pinned"},
  };
  for (const auto& c : cases) {
    auto r = run(c.image);
    auto rec = r.record();
    EXPECT_EQ(rec.value("outcome", ""), "input_rejected") << c.image << "\n" << r.out << r.err;
    EXPECT_NE(rec.value("reason", "").find(c.reason), std::string::npos)
        << c.image << ": " << rec.value("reason", "");
    EXPECT_FALSE(rec.value("timing", nlohmann::json::object()).contains("prepare_ms"))
        << "a sandbox was made";
  }
}

TEST_F(TinyStore, ACorruptImageIsRefusedEvenAfterItWasVerified) {
  // Intact: checked and mounted (the job itself fails: the tiny image has no programs).
  auto first = run("tiny@sha256:" + hex_).record();
  EXPECT_NE(first.value("outcome", ""), "input_rejected") << first.dump();
  EXPECT_EQ(first["image"].value("digest", ""), "sha256:" + hex_);
  EXPECT_TRUE(first["image"].value("pinned", false));
  EXPECT_EQ(first["image"].value("requested", ""), "tiny@sha256:" + hex_);
  EXPECT_EQ(first["image"].value("manifest_digest", ""),
            "sha256:" + airlock::Sha256::of(read_text(store_ + "/manifests/" + hex_ + ".json")));
  EXPECT_TRUE(airlock::testing::shared_image_mounted(hex_)) << "the checked image is not mounted";
  // One byte changes in place: the verification kept for the file no longer
  // applies (its ctime changed), so it is hashed again and refused.
  fs::permissions(blob_, fs::perms::owner_write, fs::perm_options::add);
  int fd = ::open(blob_.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "X", 1, 2000), 1);
  ::close(fd);
  auto second = run("tiny").record();
  EXPECT_EQ(second.value("outcome", ""), "input_rejected") << second.dump();
  EXPECT_NE(second.value("reason", "").find("corrupt"), std::string::npos)
      << second.value("reason", "");
  EXPECT_NE(second.value("reason", "").find(hex_), std::string::npos);
  // The machine's mount made from the file before it changed is gone.
  EXPECT_FALSE(airlock::testing::shared_image_mounted(hex_));
  // Gone from the store: refused as missing.
  fs::remove(blob_);
  auto third = run("tiny").record();
  EXPECT_EQ(third.value("outcome", ""), "input_rejected") << third.dump();
}

TEST(ImageRun, TheImageIsReadOnlyNosuidAndNamesNoHostPath) {
  if (!fs::exists(test_image_dir() + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << test_image_dir()
                 << " (scripts/test-setup/20-images.sh builds it)";
  TempDir dir;
  const char* code = R"(
import errno, os
try:
    open("/usr/bin/airlock-was-here", "w"); print("ESCAPED wrote /usr")
except OSError as e: print("write /usr", errno.errorcode[e.errno])
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if f[4] == "/usr": print("usr", f[3], f[5], f[f.index("-") + 1], f[f.index("-") + 2])
st = os.stat("/usr/bin/su") if os.path.exists("/usr/bin/su") else None
print("su setuid", bool(st and st.st_mode & 0o4000))
for k, v in sorted(os.environ.items()): print("env %s=%s" % (k, v))
)";
  auto r = run_airlock({"run", "--json", "--state-dir", dir.state(), "--image", "minimal",
                        "--image-dir", test_image_dir(), "--", "python3", "-c", code});
  auto rec = r.record();
  ASSERT_EQ(rec.value("outcome", ""), "succeeded") << r.out << r.err;
  std::string out = rec["stdout"].value("text", "");
  EXPECT_NE(out.find("write /usr EROFS"), std::string::npos) << out;
  // The mount's root is /usr inside the image; it is the sandbox's own
  // overlay over the machine's mount of the image (sandbox/shared_image.h),
  // never the image's path in the store.
  EXPECT_NE(out.find("usr /usr ro,nosuid,nodev"), std::string::npos) << out;
  EXPECT_NE(out.find("overlay image"), std::string::npos) << out;
  EXPECT_EQ(out.find(test_image_dir()), std::string::npos) << out;
  EXPECT_FALSE(rec["image"].value("digest", "").empty());
  EXPECT_TRUE(rec["image"].value("pinned", false));
  // The recipe's environment (the manifest's "env") is the job's.
  std::string hex = rec["image"].value("digest", "").substr(7);
  auto manifest = nlohmann::json::parse(read_text(test_image_dir() + "/manifests/" + hex + ".json"));
  const nlohmann::json env = manifest.contains("env") ? manifest["env"] : nlohmann::json::object();
  EXPECT_FALSE(env.empty()) << "the test image's recipe sets an environment";
  for (auto it = env.begin(); it != env.end(); ++it)
    EXPECT_NE(out.find("env " + it.key() + "=" + it.value().get<std::string>() + "\n"),
              std::string::npos)
        << it.key() << "\n"
        << out;
}

TEST(ImageRun, HostIsRecordedUnpinned) {
  TempDir dir;
  auto rec = run_airlock({"run", "--json", "--state-dir", dir.state(), "--", "/bin/true"}).record();
  ASSERT_EQ(rec.value("outcome", ""), "succeeded");
  EXPECT_EQ(rec["image"].value("name", ""), "host");
  EXPECT_FALSE(rec["image"].value("pinned", true));
  EXPECT_TRUE(rec["image"]["manifest_digest"].is_null());
}

}  // namespace

namespace {

TEST(ImagePool, WarmSandboxesOfAnImageServeOnlyJobsOnThatImage) {
  if (!fs::exists(test_image_dir() + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << test_image_dir()
                 << " (scripts/test-setup/20-images.sh builds it)";
  TempDir dir;
  airlock::testing::Spawned pool({"pool", "--state-dir", dir.state(), "--warm", "1", "--preloaded",
                                  "0", "--image", "minimal", "--image-dir", test_image_dir()},
                                 dir.path(), dir.state());
  for (int i = 0; i < 3000 && !fs::exists(dir.state() + "/pool.sock"); ++i) ::usleep(10000);
  auto job = [&](const std::string& image) {
    return run_airlock({"run", "--json", "--start", "warm", "--state-dir", dir.state(), "--image",
                        image, "--image-dir", test_image_dir(), "--", "/bin/sh", "-c",
                        "head -1 /etc/os-release"})
        .record();
  };
  for (int i = 0; i < 2; ++i) {  // the second one comes from the refill
    auto rec = job("minimal");
    EXPECT_EQ(rec.value("outcome", ""), "succeeded") << rec.dump();
    EXPECT_EQ(rec["sandbox"].value("start", ""), "warm");
    EXPECT_EQ(rec["image"].value("name", ""), "minimal");
    EXPECT_NE(rec["stdout"].value("text", "").find("Debian"), std::string::npos);
  }
  auto on_host = job("host");  // host has its own class: never a sandbox of the image
  EXPECT_EQ(on_host["sandbox"].value("start", ""), "warm");
  EXPECT_EQ(on_host["image"].value("name", ""), "host");
  ::kill(pool.pid(), SIGTERM);
  EXPECT_EQ(pool.wait(), 0);
}

}  // namespace

namespace {

TEST(ImageSession, ASessionRunsOnItsImageAndHoldsItUntilItCloses) {
  if (!fs::exists(test_image_dir() + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << test_image_dir()
                 << " (scripts/test-setup/20-images.sh builds it)";
  TempDir dir;
  auto cgroups = airlock::sandbox::detect_cgroup_backend();
  ASSERT_TRUE(cgroups) << cgroups.error().message();
  airlock::jobs::Session::Options options{
      airlock::jobs::JobPolicy{}, dir.state(), cgroups->get(), {}, {}};
  options.image = "minimal";
  options.image_dir = test_image_dir();
  airlock::images::ImageStore store(test_image_dir());
  auto stored = store.resolve({"minimal", ""});
  ASSERT_TRUE(stored);
  {
    auto session = airlock::jobs::Session::open(options);
    ASSERT_TRUE(session) << session.error().message();
    auto r = (*session)->exec(
        "c1", {"shell", "cat /proc/self/mountinfo; head -1 /etc/os-release", 30000}, {});
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_NE(r->stdout_text.find("overlay image"), std::string::npos) << r->stdout_text;
    EXPECT_NE(r->stdout_text.find("lowerdir=/proc/self/fd/"), std::string::npos) << r->stdout_text;
    EXPECT_NE(r->stdout_text.find("Debian"), std::string::npos) << r->stdout_text;
    // Held: rm and gc could not take the image away now.
    EXPECT_FALSE(airlock::images::claim_unused(store, stored->digest))
        << "the open session does not hold its image";
  }
  EXPECT_TRUE(airlock::images::claim_unused(store, stored->digest))
      << "the closed session still holds its image";

  options.image = "no-such-image";
  auto refused = airlock::jobs::Session::open(options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, airlock::ErrorKind::kRefused);
  EXPECT_NE(refused.error().message().find("input rejected: unknown image 'no-such-image'"),
            std::string::npos)
      << refused.error().message();
}

}  // namespace

namespace {

// A session on an image whose blob no longer matches its digest is the
// caller's refused input (400 input_rejected), whatever words the reason
// holds: the service once took any message with "airlock" in it (an image
// named airlock-tools, a store path) for its own failure (500 sandbox_error).
TEST_F(TinyStore, ASessionOnACorruptImageIsARefusalNotAServiceError) {
  write_text(store_ + "/names/airlock-tools", "sha256:" + hex_ + "\n");
  write_text(blob_, read_text(blob_) + "x");  // the bytes changed after the name was given
  write_text(dir_.sub("serve.toml"), "image_dir = \"" + store_ + "\"\n");

  airlock::testing::ServiceProcess svc({"--config", dir_.sub("serve.toml")});
  auto http = svc.client();
  auto r = http.request("POST", "/v1/sessions", R"({"image": "airlock-tools"})", svc.alpha.auth());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("input_rejected"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("is corrupt"), std::string::npos) << r.body;
}

}  // namespace

namespace {

// The first job of a state directory that does not exist yet runs on an
// image: the image check's cache once made the state directory 0700 before
// the job made it 0711, and the job ended as sandbox_error.
TEST(ImageRunFresh, TheFirstJobOfANewStateDirectoryRunsOnAnImage) {
  if (!fs::exists(test_image_dir() + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << test_image_dir()
                 << " (scripts/test-setup/20-images.sh builds it)";
  TempDir dir;
  const std::string state = dir.sub("new-state");
  ASSERT_FALSE(fs::exists(state));
  auto ran = run_airlock({"run", "--json", "--state-dir", state, "--image", "minimal",
                          "--image-dir", test_image_dir(), "--", "/bin/true"});
  auto rec = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_FALSE(rec.is_discarded()) << ran.out << ran.err;
  EXPECT_EQ(rec.value("outcome", ""), "succeeded") << rec.value("reason", "");
  EXPECT_EQ(fs::status(state).permissions() & fs::perms::others_exec, fs::perms::others_exec);
}

}  // namespace
