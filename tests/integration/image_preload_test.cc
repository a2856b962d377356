// Preloaded sandboxes of a stored image (python-data): their interpreter is
// the image's Python, not the host's, and nothing of one job reaches another,
// as for the host's preloaded jobs (warm_pool_test.cc). The image comes from
// the store in $AIRLOCK_WORKLOAD_IMAGE_DIR (scripts/build-images.sh builds
// it); each test is skipped, saying so, when it is not there or was built
// from another recipe than images/python-data.toml (an older one lacks
// libpython3.11 or sets a PYTHON* variable, which keeps jobs off the
// preloaded path).
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "image_helpers.h"
#include "images/recipe.h"
#include "pool/image_python.h"
#include "pool/warm_pool.h"
#include "pool_helpers.h"
#include "run_helpers.h"
#include "sandbox/cgroup.h"
#include "sessions/session.h"

namespace airlock::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kImage = "python-data";
constexpr const char* kLibpython = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";

// The image's manifest, or null with the reason in `why`.
json stored_manifest(std::string& why, std::string& store) {
  const char* dir = std::getenv("AIRLOCK_WORKLOAD_IMAGE_DIR");
  if (!dir || !*dir) {
    why = "AIRLOCK_WORKLOAD_IMAGE_DIR is not set (scripts/build-images.sh STORE python-data builds it; "
          "then set it to STORE)";
    return nullptr;
  }
  store = dir;
  std::string name = read_text(store + "/names/" + kImage);
  if (name.rfind("sha256:", 0) != 0) {
    why = std::string("image ") + kImage + " is not built in " + store + " (scripts/build-images.sh " + store +
          " " + kImage + ")";
    return nullptr;
  }
  std::string hex = name.substr(7, 64);
  json manifest = json::parse(read_text(store + "/manifests/" + hex + ".json"), nullptr, false);
  auto recipe = images::load_recipe(std::string(AIRLOCK_SOURCE_DIR) + "/images/" + kImage + ".toml");
  if (!recipe || manifest.is_discarded() ||
      manifest.value("recipe_digest", "") != images::recipe_digest(*recipe)) {
    why = std::string("image ") + kImage + " in " + store + " was built from another recipe than images/" +
          kImage + ".toml (rebuild: scripts/build-images.sh " + store + " " + kImage + ")";
    return nullptr;
  }
  return manifest;
}

#define REQUIRE_PYTHON_DATA(manifest, store)                 \
  std::string why_, store;                                    \
  const json manifest = stored_manifest(why_, store);         \
  if (manifest.is_null()) GTEST_SKIP() << why_

std::string package_version(const json& manifest, const std::string& name) {
  for (const auto& p : manifest["packages"])
    if (p.value("name", "") == name) return p.value("version", "");
  return "";
}

class ImagePreload : public ::testing::Test {
 protected:
  json run(const std::string& image, const std::string& code, const std::string& store) {
    Ran r = run_airlock({"run", "--json", "--state-dir", dir_.state(), "--image", image, "--image-dir", store,
                         "--start", "preloaded", "--timeout", "40", "--", "python3", "-c", code});
    json rec = r.record();
    EXPECT_TRUE(rec.is_object()) << r.err;
    return rec;
  }
  static std::string out_of(const json& rec) { return rec.value("stdout", json::object()).value("text", ""); }
  static std::string start_of(const json& rec) { return rec.value("sandbox", json::object()).value("start", ""); }
  TempDir dir_;
};

// What the job prints about its interpreter: whether pandas was imported
// before the job's code ran, pandas' version and file, and the file libpython
// is mapped from ("dev ino" of /proc/self/maps) beside the file the job's own
// /usr has at that path.
const char* kWhichPython = R"(
import os, sys
preloaded = 'pandas' in sys.modules and 'matplotlib.pyplot' in sys.modules
import pandas
print("preloaded", preloaded)
print("pandas", pandas.__version__, pandas.__file__)
for line in open("/proc/self/maps"):
    f = line.split()
    if len(f) >= 6 and f[5] == "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0":
        major, minor = (int(x, 16) for x in f[3].split(":"))
        print("mapped", os.makedev(major, minor), f[4])
        break
st = os.stat("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")
print("path", st.st_dev, st.st_ino)
)";

struct WhichPython {
  std::string first, pandas, mapped_dev, mapped_ino, path_dev, path_ino;
};
WhichPython parse_which(const std::string& out) {
  WhichPython w;
  std::istringstream in(out);
  std::string word;
  while (in >> word) {
    if (word == "preloaded") in >> w.first;
    else if (word == "pandas") std::getline(in, w.pandas);
    else if (word == "mapped") in >> w.mapped_dev >> w.mapped_ino;
    else if (word == "path") in >> w.path_dev >> w.path_ino;
  }
  return w;
}

TEST_F(ImagePreload, APreloadedJobOnTheImageRunsTheImagesPythonWithPandasImported) {
  REQUIRE_PYTHON_DATA(manifest, store);
  struct stat host_lib {};
  ASSERT_EQ(::stat(kLibpython, &host_lib), 0) << "the host's preloaded pool needs libpython3.11 too";
  TestPool pool(dir_.path(), dir_.state(), 0, 1, {"--image", kImage, "--image-dir", store});
  ASSERT_TRUE(pool.ready()) << pool.log();

  json image_job = run(kImage, kWhichPython, store);
  ASSERT_EQ(image_job.value("outcome", ""), "succeeded") << image_job.dump();
  EXPECT_EQ(start_of(image_job), "preloaded") << image_job.dump();
  EXPECT_EQ(image_job["image"].value("name", ""), kImage);
  WhichPython on_image = parse_which(out_of(image_job));
  EXPECT_EQ(on_image.first, "True") << out_of(image_job);
  // Debian's version (1.5.3+dfsg-2) starts with what pandas says it is.
  std::string debian = package_version(manifest, "python3-pandas");
  ASSERT_FALSE(debian.empty());
  EXPECT_EQ(on_image.pandas, " " + debian.substr(0, debian.find('+')) +
                                 " /usr/lib/python3/dist-packages/pandas/__init__.py");
  // libpython is the image's file (the inode number the job's own mount of
  // the image gives it), mapped from another superblock than the job's /usr:
  // the interpreter's, loaded before this sandbox existed. Not the host's.
  EXPECT_EQ(on_image.mapped_ino, on_image.path_ino) << out_of(image_job);
  EXPECT_NE(on_image.mapped_dev, on_image.path_dev) << out_of(image_job);
  EXPECT_NE(on_image.mapped_dev, std::to_string(host_lib.st_dev)) << "libpython mapped from the host's /usr";
  EXPECT_NE(on_image.mapped_ino, std::to_string(host_lib.st_ino)) << out_of(image_job);

  // The same code on host's preloaded class: the host's file, so the
  // comparison above can fail.
  json host_job = run("host", kWhichPython, store);
  ASSERT_EQ(host_job.value("outcome", ""), "succeeded") << host_job.dump();
  EXPECT_EQ(start_of(host_job), "preloaded");
  WhichPython on_host = parse_which(out_of(host_job));
  EXPECT_EQ(on_host.first, "True");
  EXPECT_EQ(on_host.mapped_dev, std::to_string(host_lib.st_dev)) << out_of(host_job);
  EXPECT_EQ(on_host.mapped_ino, std::to_string(host_lib.st_ino)) << out_of(host_job);
  EXPECT_EQ(pool.stop(), 0);
}

TEST_F(ImagePreload, AnImageWithoutLibpythonOrPandasGetsNoPreloadedClassAndSaysWhy) {
  // `minimal` (the tests' image) has python3 and pandas but not libpython3.11.
  std::string store = std::getenv("AIRLOCK_TEST_IMAGE_DIR") ? std::getenv("AIRLOCK_TEST_IMAGE_DIR")
                                                            : std::string(AIRLOCK_SOURCE_DIR) + "/build/images";
  if (!fs::exists(store + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << store
                 << " (scripts/test-setup/20-images.sh builds it)";
  TestPool pool(dir_.path(), dir_.state(), 1, 1, {"--image", "minimal", "--image-dir", store});
  ASSERT_TRUE(pool.ready()) << pool.log();
  EXPECT_NE(pool.log().find("airlock pool: image minimal: no preloaded sandboxes (the image has no "
                            "libpython3.11.so.1.0 (Debian package libpython3.11))"),
            std::string::npos)
      << pool.log();
  // Its Python jobs start warm: the pool keeps no preloaded class of it.
  json rec = run("minimal", "import sys; print('pandas' in sys.modules)", store);
  EXPECT_EQ(rec.value("outcome", ""), "sandbox_error") << rec.dump();
  EXPECT_NE(rec.value("reason", "").find("the warm pool keeps no class sha256:"), std::string::npos)
      << rec.dump();
  EXPECT_EQ(pool.stop(), 0);
}

// A pool asked for preloaded sandboxes checks the image's sha256 before it
// looks inside: a corrupt blob stops it with the reason, and it makes nothing.
TEST_F(ImagePreload, ACorruptImageStopsAPreloadedPoolWithTheReason) {
  std::string source = std::getenv("AIRLOCK_TEST_IMAGE_DIR") ? std::getenv("AIRLOCK_TEST_IMAGE_DIR")
                                                             : std::string(AIRLOCK_SOURCE_DIR) + "/build/images";
  if (!fs::exists(source + "/names/minimal"))
    GTEST_SKIP() << "the image 'minimal' is not built in " << source
                 << " (scripts/test-setup/20-images.sh builds it)";
  std::string store = dir_.sub("store");
  fs::copy(source, store, fs::copy_options::recursive);
  std::string hex = read_text(store + "/names/minimal").substr(7, 64);
  std::string blob = store + "/blobs/" + hex + ".erofs";
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.put('X');
  }
  Ran r = run_airlock({"pool", "--state-dir", dir_.state(), "--warm", "1", "--preloaded", "1", "--image",
                       "minimal", "--image-dir", store});
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_NE(r.err.find("airlock pool: image minimal: image is corrupt: its sha256 is "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(", not " + hex), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_.state() + "/pool.sock"));
}

// Job A leaves marks everywhere a preloaded process could carry state; job B,
// a later fork of the same image interpreter, finds none.
TEST_F(ImagePreload, NothingOfOnePreloadedJobOnTheImageReachesTheNext) {
  REQUIRE_PYTHON_DATA(manifest, store);
  TestPool pool(dir_.path(), dir_.state(), 0, 1, {"--image", kImage, "--image-dir", store});
  ASSERT_TRUE(pool.ready()) << pool.log();
  std::string a_code =
      "import os, random, pandas, numpy, sys\n"
      "pandas.airlock_mark = 'job-a'\n"
      "sys.modules['airlock_mark'] = pandas\n"
      "os.environ['AIRLOCK_MARK'] = 'job-a'\n"
      "open('/tmp/mark', 'w').write('a'); open('/workspace/mark', 'w').write('a')\n"
      "keep = open('/workspace/mark')\n"
      "print(numpy.random.rand(), random.random())\n";
  std::string b_code =
      "import os, random, pandas, numpy, sys\n"
      "print(hasattr(pandas, 'airlock_mark'), 'airlock_mark' in sys.modules, 'AIRLOCK_MARK' in os.environ)\n"
      "print(sorted(os.listdir('/tmp')), sorted(os.listdir('/workspace')), sorted(os.listdir('/proc/self/fd')))\n"
      "print(numpy.random.rand(), random.random())\n";
  json a = run(kImage, a_code, store);
  json b = run(kImage, b_code, store);
  ASSERT_EQ(start_of(a), "preloaded") << a.dump();
  ASSERT_EQ(start_of(b), "preloaded") << b.dump();
  std::string out_b = out_of(b);
  auto nl = out_b.find('\n');
  auto nl2 = out_b.find('\n', nl + 1);
  ASSERT_NE(nl2, std::string::npos) << b.dump();
  EXPECT_EQ(out_b.substr(0, nl), "False False False");
  // /proc/self/fd while listing: 0, 1, 2, the data request channel (3) and the directory fd itself.
  EXPECT_EQ(out_b.substr(nl + 1, nl2 - nl - 1), "[] [] ['0', '1', '2', '3', '4']");
  EXPECT_NE(out_of(a), out_b.substr(nl2 + 1)) << "numpy and random state repeated across jobs";
  EXPECT_NE(a["sandbox"].value("host_uid", 0u), b["sandbox"].value("host_uid", 0u));
  EXPECT_EQ(pool.stop(), 0);
}

// Two preloaded jobs at once share the interpreter's mapped files (its
// superblock of the image), but can reach them by no path: job A locks
// libpython and job B, at the same time, asks for that lock, opens and reads
// the file; a watch placed from the host in A's view sees nothing of B. And
// /proc/self/map_files, the one way from a mapping to its file, is refused.
const std::string kHolder = lock_holder_script(kLibpython);
const std::string kProbe = lock_probe_script(kLibpython) + R"(
for line in open("/proc/self/maps"):
    f = line.split()
    if len(f) >= 6 and f[5].endswith("libpython3.11.so.1.0"):
        try:
            os.open("/proc/self/map_files/" + f[0], os.O_RDONLY)
            print("map_files OPENED")
        except OSError as e:
            print("map_files refused", e.errno)
        break
)";

// On host both jobs see the host's own inodes, so there the lock is seen and
// the watch fires: the test can fail.
class ImagePreloadChannel : public ImagePreload, public ::testing::WithParamInterface<std::string> {};

TEST_P(ImagePreloadChannel, TwoPreloadedJobsAtOnceShareNoChannelThroughTheInterpretersFiles) {
  const bool host = GetParam() == "host";  // "python_data": gtest names take no '-'
  REQUIRE_PYTHON_DATA(manifest, store);
  const std::string image = host ? "host" : kImage;
  TestPool pool(dir_.path(), dir_.state(), 0, 2,
                host ? std::vector<std::string>{} : std::vector<std::string>{"--image", kImage, "--image-dir", store});
  ASSERT_TRUE(pool.ready()) << pool.log();
  Spawned holder({"run", "--json", "--state-dir", dir_.state(), "--image", image, "--image-dir", store,
                  "--start", "preloaded", "--timeout", "40", "--", "python3", "-c", kHolder},
                 dir_.path(), dir_.state());
  // A preloaded sandbox is the interpreter's child, so below the pool.
  pid_t a = 0;
  for (int i = 0; i < 2000 && a == 0; ++i) {
    for (pid_t pid : descendants_of(pool.pid()))
      if (fs::exists("/proc/" + std::to_string(pid) + "/root/workspace/ready")) a = pid;
    if (a == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(a, 0) << "job A never took its lock: " << read_text(dir_.sub("airlock.err"));
  std::string a_root = "/proc/" + std::to_string(a) + "/root";
  int in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(in, 0);
  ASSERT_GE(::inotify_add_watch(in, (a_root + kLibpython).c_str(), IN_OPEN | IN_ACCESS), 0);

  json probe = run(image, kProbe, store);
  char events[4096];
  ssize_t seen = ::read(in, events, sizeof(events));
  int read_errno = errno;
  ::close(in);
  write_text(a_root + "/workspace/done", "");
  EXPECT_EQ(holder.wait(), 0);

  ASSERT_EQ(probe.value("outcome", ""), "succeeded") << probe.dump();
  EXPECT_EQ(start_of(probe), "preloaded");
  std::string out = out_of(probe);
  EXPECT_NE(out.find("map_files refused 1\n"), std::string::npos) << out;  // EPERM
  if (host) {
    EXPECT_NE(out.find("SEEN lock of another job"), std::string::npos) << out;
    EXPECT_GT(seen, 0) << "on host the watch in job A's view saw no open or read of job B";
  } else {
    EXPECT_NE(out.find("UNSEEN no lock"), std::string::npos) << out;
    EXPECT_LT(seen, 0) << "the watch in job A's view saw job B open or read libpython";
    EXPECT_EQ(read_errno, EAGAIN);
  }
  EXPECT_EQ(pool.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Images, ImagePreloadChannel, ::testing::Values("host", "python_data"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A session on the image starts from the image's preloaded interpreter, as
// the service opens it (session_image_zygotes.cc: start_image_zygote, one per
// digest, started by the first session): pandas is imported before the first
// call, it is the image's pandas and libpython, and a second session forks
// from the same interpreter. When the image can have none, the session starts
// python3 and says why.
class ImageSessionPreload : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = sandbox::detect_cgroup_backend();
    ASSERT_TRUE(backend) << backend.error().message();
    cgroups_ = std::move(*backend);
  }
  jobs::Session::Options options(const std::string& store) {
    jobs::Session::Options o{jobs::JobPolicy{}, dir_.state(), cgroups_.get(), {}, {}};
    o.image = kImage;
    o.image_dir = store;
    o.image_zygote = [this](const jobs::ImageSource& image) -> Result<sandbox::Zygote*> {
      auto& z = zygotes_[image.info.digest];
      if (!z) {
        sandbox::ZygoteOptions zo;
        zo.env = jobs::zygote_environment(image);
        auto started = jobs::start_image_zygote(AIRLOCK_BINARY, zo, image, dir_.state() + "/cache");
        if (!started) return std::unexpected(started.error());
        z = std::move(*started);
        ++started_;
      }
      return z.get();
    };
    return o;
  }
  std::string call(jobs::Session& s, const std::string& code) {
    auto r = s.exec("c" + std::to_string(++calls_), {"python", code, 60'000}, nullptr);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    if (!r) return "";
    EXPECT_EQ(r->status, "ok") << r->error;
    return r->result;
  }
  TempDir dir_;
  std::unique_ptr<sandbox::CgroupBackend> cgroups_;
  std::map<std::string, std::unique_ptr<sandbox::Zygote>> zygotes_;
  int started_ = 0, calls_ = 0;
};

// The first call's answer: whether pandas and pyplot were imported before
// it, pandas' version and file, and libpython's mapping (dev, inode) beside
// the inode the session's own /usr gives that path.
const char* kSessionWhich = R"(import os, sys
def _which():
    first = 'pandas' in sys.modules and 'matplotlib.pyplot' in sys.modules
    import pandas
    lib = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
    mapped = None
    for line in open("/proc/self/maps"):
        f = line.split()
        if len(f) >= 6 and f[5] == lib:
            mapped = (os.makedev(*(int(x, 16) for x in f[3].split(":"))), int(f[4]))
            break
    return (first, pandas.__version__, pandas.__file__, mapped, os.stat(lib).st_ino)
_which())";

TEST_F(ImageSessionPreload, ASessionOnTheImageHasPandasImportedAtOnce) {
  REQUIRE_PYTHON_DATA(manifest, store);
  struct stat host_lib {};
  bool host_has_lib = ::stat(kLibpython, &host_lib) == 0;
  auto a = jobs::Session::open(options(store));
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ((*a)->start_kind(), jobs::StartKind::kPreloaded) << (*a)->start_note();
  std::string which = call(**a, kSessionWhich);
  std::string debian = package_version(manifest, "python3-pandas");
  ASSERT_FALSE(debian.empty());
  std::string head = "(True, '" + debian.substr(0, debian.find('+')) +
                     "', '/usr/lib/python3/dist-packages/pandas/__init__.py', (";
  EXPECT_EQ(which.rfind(head, 0), 0u) << which;
  // libpython mapped from the interpreter's own mount of the image: the
  // image's inode, not the host's file.
  unsigned long long dev = 0, ino = 0, path_ino = 0;
  ASSERT_EQ(std::sscanf(which.c_str() + std::min(which.size(), head.size()), "%llu, %llu), %llu)", &dev, &ino,
                        &path_ino),
            3)
      << which;
  EXPECT_EQ(ino, path_ino) << which;
  if (host_has_lib) {
    EXPECT_FALSE(dev == host_lib.st_dev && ino == host_lib.st_ino) << "the host's libpython";
  }
  // It works, and it is a session: state stays from one call to the next.
  EXPECT_EQ(call(**a, "import pandas\ndf = pandas.DataFrame({'x': [1, 2, 3]})\nint(df.x.sum())"), "6");
  EXPECT_EQ(call(**a, "int(df.x.max())"), "3");

  // A second session forks from the same interpreter, which the first started.
  auto b = jobs::Session::open(options(store));
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->start_kind(), jobs::StartKind::kPreloaded) << (*b)->start_note();
  EXPECT_EQ(call(**b, "import sys\n'df' in globals(), 'pandas' in sys.modules"), "(False, True)");
  EXPECT_EQ(started_, 1);
}

TEST_F(ImageSessionPreload, WithoutAnInterpreterForTheImageASessionStartsPython3AndSaysWhy) {
  REQUIRE_PYTHON_DATA(manifest, store);
  auto o = options(store);
  o.image_zygote = [](const jobs::ImageSource&) -> Result<sandbox::Zygote*> {
    return fail(ErrorKind::kNotFound, "image python-data cannot have preloaded sandboxes: the test says so");
  };
  auto s = jobs::Session::open(o);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ((*s)->start_kind(), jobs::StartKind::kCold);
  EXPECT_EQ((*s)->start_note(), "image python-data cannot have preloaded sandboxes: the test says so");
  EXPECT_EQ(call(**s, "import sys\n'pandas' in sys.modules"), "False");
  // A PYTHON* variable keeps a session off the preloaded path, on an image as on host.
  auto p = options(store);
  p.policy.env = {{"PYTHONHASHSEED", "0"}};
  auto q = jobs::Session::open(p);
  ASSERT_TRUE(q) << q.error().message();
  EXPECT_EQ((*q)->start_kind(), jobs::StartKind::kCold);
  EXPECT_NE((*q)->start_note().find("PYTHON*"), std::string::npos) << (*q)->start_note();
}

}  // namespace
}  // namespace airlock::testing
