// admit_inputs: manifests for good inputs; for every refusal, one clear reason
// and an empty staging directory.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "sys/file_io.h"
#include "workspace/manifest.h"

namespace airlock::workspace {
namespace {

// A 1x1 PNG.
const std::string kPng(
    "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    "\x1f\x15\xc4\x89\x00\x00\x00\x0aIDATx\x9c\x63\x00\x01\x00\x00\x05\x00\x01\x0d\x0a\x2d\xb4"
    "\x00\x00\x00\x00IEND\xae\x42\x60\x82",
    67);

class AdmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-admit-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    src_ = root_ + "/src";
    staging_ = root_ + "/staging";
    ASSERT_EQ(::mkdir(src_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(staging_.c_str(), 0700), 0);
  }

  void TearDown() override {
    auto remove = [](const char* path, const struct stat*, int, FTW*) { return ::remove(path); };
    ::nftw(root_.c_str(), remove, 16, FTW_DEPTH | FTW_PHYS);
  }

  std::string write(const std::string& name, std::string_view content) {
    std::string path = src_ + "/" + name;
    EXPECT_TRUE(sys::write_file_atomic(path, content).has_value()) << path;
    return path;
  }

  std::vector<std::string> staged() const {
    std::vector<std::string> names;
    DIR* d = ::opendir(staging_.c_str());
    while (const dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    return names;
  }

  Admission admit(const std::vector<std::string>& paths, const InputPolicy& policy = {}) {
    auto result = admit_inputs(paths, staging_, policy);
    EXPECT_TRUE(result.has_value()) << result.error().message();
    return result.value_or(Admission{});
  }

  // Expects a rejection with exactly `reason`, nothing admitted, nothing staged.
  void expect_rejected(const std::vector<std::string>& paths, const std::string& reason,
                       const InputPolicy& policy = {}) {
    Admission a = admit(paths, policy);
    EXPECT_EQ(a.rejection.value_or("(admitted)"), reason);
    EXPECT_TRUE(a.inputs.empty());
    EXPECT_TRUE(staged().empty());
  }

  std::string root_, src_, staging_;
};

TEST_F(AdmitTest, HappyPathManifest) {
  const std::string csv = "name,score\n\"Smith, J\",3\n";
  const std::string json = "{\"k\": [1, 2]}";
  const std::string text = "just some notes\n";
  Admission a = admit({write("data.csv", csv), write("config.json", json), write("notes.txt", text),
                       write("chart.png", kPng)});
  ASSERT_FALSE(a.rejection.has_value()) << *a.rejection;
  ASSERT_EQ(a.inputs.size(), 4u);
  struct Want {
    std::string name, content, type;
  };
  const std::vector<Want> want = {{"data.csv", csv, "csv"},
                                  {"config.json", json, "json"},
                                  {"notes.txt", text, "text"},
                                  {"chart.png", kPng, "png"}};
  for (size_t i = 0; i < want.size(); ++i) {
    const ManifestEntry& e = a.inputs[i];
    EXPECT_EQ(e.name, want[i].name);
    EXPECT_EQ(e.size, want[i].content.size());
    EXPECT_EQ(e.sha256, Sha256::of(want[i].content));
    EXPECT_EQ(e.type, want[i].type);
    const std::string copy = staging_ + "/" + e.name;
    EXPECT_EQ(sys::read_file(copy).value_or("(unreadable)"), want[i].content);
    struct stat st {};
    ASSERT_EQ(::lstat(copy.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0444u);
  }
}

TEST_F(AdmitTest, EmptyListAdmitsNothing) {
  Admission a = admit({});
  EXPECT_FALSE(a.rejection.has_value());
  EXPECT_TRUE(a.inputs.empty());
}

TEST_F(AdmitTest, BinaryRefusedAndEarlierCopiesRemoved) {
  const std::string good = write("good.csv", "a,b\n1,2\n");
  const std::string bin = write("data.bin", std::string("\x7f"
                                                        "ELF\0\0\0",
                                                        7));
  expect_rejected({good, bin},
                  "input \"data.bin\": type binary is not allowed "
                  "(allowed: text, csv, tsv, json, png, jpeg, pdf, xml, git-bundle)");
}

TEST_F(AdmitTest, TypeOutsideAPolicyRefused) {
  InputPolicy policy;
  policy.allowed = {FileType::kCsv};
  expect_rejected({write("notes.txt", "hello\n")},
                  "input \"notes.txt\": type text is not allowed (allowed: csv)", policy);
}

TEST_F(AdmitTest, SymlinkRefused) {
  const std::string link = src_ + "/passwd";
  ASSERT_EQ(::symlink("/etc/passwd", link.c_str()), 0);
  expect_rejected({write("ok.txt", "x"), link}, "input \"passwd\": is a symlink");
}

TEST_F(AdmitTest, FifoRefusedWithoutBlocking) {
  const std::string fifo = src_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  expect_rejected({fifo}, "input \"pipe\": is a fifo");
}

TEST_F(AdmitTest, DirectoryAndDeviceRefused) {
  const std::string dir = src_ + "/folder";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  expect_rejected({dir}, "input \"folder\": is a directory");
  expect_rejected({"/dev/null"}, "input \"null\": is a device");
}

TEST_F(AdmitTest, MissingFileRefused) {
  expect_rejected({src_ + "/nope.csv"}, "input \"nope.csv\": does not exist");
}

TEST_F(AdmitTest, TooManyRefused) {
  InputPolicy policy;
  policy.max_count = 2;
  expect_rejected({write("a.txt", "a"), write("b.txt", "b"), write("c.txt", "c")},
                  "too many inputs: 3 (limit 2)", policy);
}

TEST_F(AdmitTest, TooBigRefused) {
  InputPolicy policy;
  policy.max_file_bytes = 10;
  expect_rejected({write("big.txt", std::string(11, 'x'))},
                  "input \"big.txt\": size 11 bytes exceeds the limit of 10", policy);
  // Exactly at the limit is fine.
  Admission a = admit({write("fits.txt", std::string(10, 'x'))}, policy);
  EXPECT_FALSE(a.rejection.has_value());
}

TEST_F(AdmitTest, TotalTooBigRefused) {
  InputPolicy policy;
  policy.max_total_bytes = 15;
  expect_rejected({write("one.txt", std::string(10, 'x')), write("two.txt", std::string(10, 'y'))},
                  "input \"two.txt\": total input size exceeds the limit of 15 bytes", policy);
}

TEST_F(AdmitTest, DuplicateNamesRefused) {
  ASSERT_EQ(::mkdir((src_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((src_ + "/b").c_str(), 0755), 0);
  expect_rejected({write("a/x.txt", "1"), write("b/x.txt", "2")},
                  "input \"x.txt\": duplicate name");
}

TEST_F(AdmitTest, BadNamesRefused) {
  expect_rejected({src_ + "/.."}, "input \"..\": bad name: name starts with '.'");
  expect_rejected({write(".hidden", "x")}, "input \".hidden\": bad name: name starts with '.'");
  expect_rejected({write("new\nline.txt", "x")},
                  "input \"new\\x0aline.txt\": bad name: name contains \\x0a "
                  "(allowed: A-Z a-z 0-9 . _ + - space)");
  expect_rejected({src_ + "/"}, "input \"\": bad name: empty name");
}

TEST_F(AdmitTest, MissingStagingIsAnError) {
  auto result = admit_inputs({write("a.txt", "a")}, root_ + "/no-such-dir", InputPolicy{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().err, ENOENT);
}

}  // namespace
}  // namespace airlock::workspace
