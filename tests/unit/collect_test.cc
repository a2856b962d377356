// collect_outputs against hostile output trees: links, special files, huge
// and deep and wide trees, hostile names. Plain directories, no root needed.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "workspace/manifest.h"

namespace airlock::workspace {
namespace {

const std::string kPng(
    "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    "\x1f\x15\xc4\x89\x00\x00\x00\x0aIDATx\x9c\x63\x00\x01\x00\x00\x05\x00\x01\x0d\x0a\x2d\xb4"
    "\x00\x00\x00\x00IEND\xae\x42\x60\x82",
    67);

std::vector<std::string> list_dir(int dirfd) {
  std::vector<std::string> names;
  DIR* d = ::fdopendir(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (d == nullptr) return names;
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

// Removes a tree of any depth with a constant number of fds: the entries of
// each subdirectory are first moved up into the top directory.
void remove_tree(const std::string& path) {
  UniqueFd top(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!top) return;
  unsigned hoisted = 0;
  for (bool again = true; again;) {
    again = false;
    for (const std::string& name : list_dir(top.get())) {
      struct stat st {};
      if (::fstatat(top.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        ::unlinkat(top.get(), name.c_str(), 0);
        continue;
      }
      UniqueFd sub(::openat(top.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
      for (const std::string& child : list_dir(sub.get())) {
        const std::string to = "~hoisted" + std::to_string(hoisted++);
        ::renameat(sub.get(), child.c_str(), top.get(), to.c_str());
        again = true;
      }
      ::unlinkat(top.get(), name.c_str(), AT_REMOVEDIR);
    }
  }
  ::rmdir(path.c_str());
}

class CollectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // tmpfs when there is one: a 10,000-deep tree takes seconds on a disk.
    std::string tmpl = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    tmpl += "/airlock-collect-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    out_ = root_ + "/out";
    dest_ = root_ + "/dest";
    ASSERT_EQ(::mkdir(out_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(dest_.c_str(), 0700), 0);
    out_fd_ = UniqueFd(::open(out_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(out_fd_.valid());
  }

  void TearDown() override {
    out_fd_.reset();
    remove_tree(root_);
  }

  void write(const std::string& rel, std::string_view content) {
    ASSERT_TRUE(sys::write_file_atomic(out_ + "/" + rel, content).has_value()) << rel;
  }
  void mkdir(const std::string& rel) { ASSERT_EQ(::mkdir((out_ + "/" + rel).c_str(), 0755), 0); }

  Collection collect(const OutputPolicy& policy = {}) {
    auto result = collect_outputs(out_fd_.get(), dest_, policy);
    EXPECT_TRUE(result.has_value()) << result.error().message();
    return result.value_or(Collection{});
  }

  bool copied(const std::string& rel) const {
    struct stat st {};
    return ::lstat((dest_ + "/" + rel).c_str(), &st) == 0;
  }

  std::vector<std::string> dest_entries() const {
    UniqueFd fd(::open(dest_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return list_dir(fd.get());
  }

  // The only entry of `c`, which must be refused with `reason`.
  static void expect_one_refusal(const Collection& c, const std::string& name,
                                 const std::string& reason) {
    EXPECT_TRUE(c.any_rejected);
    ASSERT_EQ(c.outputs.size(), 1u);
    EXPECT_EQ(c.outputs[0].name, name);
    EXPECT_FALSE(c.outputs[0].accepted);
    EXPECT_EQ(c.outputs[0].reason, reason);
  }

  std::string root_, out_, dest_;
  UniqueFd out_fd_;
};

TEST_F(CollectTest, EmptyOutput) {
  Collection c = collect();
  EXPECT_TRUE(c.outputs.empty());
  EXPECT_FALSE(c.any_rejected);
  EXPECT_TRUE(c.limits_hit.empty());
}

TEST_F(CollectTest, NestedFilesCopiedWithRelativeNamesAndHashes) {
  const std::string csv = "x,y\n1,2\n";
  const std::string json = "{\"ok\": true}";
  mkdir("charts");
  mkdir("charts/deep");
  write("report.csv", csv);
  write("charts/a.png", kPng);
  write("charts/deep/data.json", json);
  Collection c = collect();
  EXPECT_FALSE(c.any_rejected);
  ASSERT_EQ(c.outputs.size(), 3u);
  struct Want {
    std::string name, content, type;
  };
  const std::vector<Want> want = {{"charts/a.png", kPng, "png"},
                                  {"charts/deep/data.json", json, "json"},
                                  {"report.csv", csv, "csv"}};
  for (size_t i = 0; i < want.size(); ++i) {
    const ManifestEntry& e = c.outputs[i];
    EXPECT_EQ(e.name, want[i].name);
    EXPECT_TRUE(e.accepted) << e.reason;
    EXPECT_EQ(e.size, want[i].content.size());
    EXPECT_EQ(e.sha256, Sha256::of(want[i].content));
    EXPECT_EQ(e.type, want[i].type);
    EXPECT_EQ(sys::read_file(dest_ + "/" + e.name).value_or("(missing)"), want[i].content);
    struct stat st {};
    ASSERT_EQ(::lstat((dest_ + "/" + e.name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
  }
}

TEST_F(CollectTest, SymlinkToEtcPasswdRefusedAndNotCopied) {
  ASSERT_EQ(::symlink("/etc/passwd", (out_ + "/passwd").c_str()), 0);
  Collection c = collect();
  expect_one_refusal(c, "passwd", "symlink; not followed");
  EXPECT_EQ(c.outputs[0].sha256, "");
  EXPECT_FALSE(copied("passwd"));
}

TEST_F(CollectTest, SymlinkToSiblingRefused) {
  write("real.txt", "real\n");
  ASSERT_EQ(::symlink("real.txt", (out_ + "/alias.txt").c_str()), 0);
  Collection c = collect();
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(c.outputs[0].name, "alias.txt");
  EXPECT_FALSE(c.outputs[0].accepted);
  EXPECT_EQ(c.outputs[0].reason, "symlink; not followed");
  EXPECT_EQ(c.outputs[1].name, "real.txt");
  EXPECT_TRUE(c.outputs[1].accepted);
  EXPECT_TRUE(c.any_rejected);
  EXPECT_FALSE(copied("alias.txt"));
  EXPECT_TRUE(copied("real.txt"));
}

TEST_F(CollectTest, SymlinkedDirectoryNotEntered) {
  ASSERT_EQ(::symlink("/etc", (out_ + "/etc").c_str()), 0);
  Collection c = collect();
  expect_one_refusal(c, "etc", "symlink; not followed");
  EXPECT_TRUE(dest_entries().empty());
}

TEST_F(CollectTest, HardlinkRefused) {
  write("a.txt", "shared\n");
  ASSERT_EQ(::link((out_ + "/a.txt").c_str(), (out_ + "/b.txt").c_str()), 0);
  Collection c = collect();
  ASSERT_EQ(c.outputs.size(), 2u);
  for (const ManifestEntry& e : c.outputs) {
    EXPECT_FALSE(e.accepted);
    EXPECT_EQ(e.reason, "hard link (2 links); not collected");
  }
  EXPECT_TRUE(dest_entries().empty());
}

TEST_F(CollectTest, FifoRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((out_ + "/pipe").c_str(), 0644), 0);
  Collection c = collect();  // opening the fifo for reading would block here
  expect_one_refusal(c, "pipe", "fifo; not a regular file");
  EXPECT_FALSE(copied("pipe"));
}

TEST_F(CollectTest, SocketRefused) {
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(sock.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = out_ + "/sock";
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  expect_one_refusal(collect(), "sock", "socket; not a regular file");
}

TEST_F(CollectTest, SparseTerabyteFileRefusedBySize) {
  UniqueFd fd(::open((out_ + "/huge.csv").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(::ftruncate(fd.get(), 1ll << 40), 0);
  Collection c = collect();
  expect_one_refusal(c, "huge.csv", "size 1099511627776 bytes exceeds the limit of 67108864");
  EXPECT_EQ(c.outputs[0].size, 1ull << 40);
  EXPECT_EQ(c.outputs[0].sha256, "");  // never read
  EXPECT_FALSE(copied("huge.csv"));
  EXPECT_EQ(c.limits_hit, std::vector<std::string>{"output_size"});
}

TEST_F(CollectTest, TotalSizeLimit) {
  OutputPolicy policy;
  policy.max_total_bytes = 15;
  write("a.txt", std::string(10, 'a'));
  write("b.txt", std::string(10, 'b'));
  write("c.txt", std::string(5, 'c'));
  Collection c = collect(policy);
  ASSERT_EQ(c.outputs.size(), 3u);
  EXPECT_TRUE(c.outputs[0].accepted);
  EXPECT_FALSE(c.outputs[1].accepted);
  EXPECT_EQ(c.outputs[1].reason, "total output size would exceed the limit of 15 bytes");
  EXPECT_TRUE(c.outputs[2].accepted);  // still fits
  EXPECT_EQ(c.limits_hit, std::vector<std::string>{"output_size"});
  EXPECT_FALSE(copied("b.txt"));
}

TEST_F(CollectTest, DeepChainStopsAtMaxDepthWithOneRefusal) {
  UniqueFd fd(::open(out_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(::mkdirat(fd.get(), "d", 0755), 0);
    fd = UniqueFd(::openat(fd.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
  }
  ASSERT_TRUE(
      sys::write_all(
          UniqueFd(::openat(fd.get(), "bottom.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0644)).get(),
          "deep\n")
          .has_value());
  Collection c = collect();  // default max_depth 8
  std::string nine = "d";
  for (int i = 1; i < 9; ++i) nine += "/d";
  expect_one_refusal(c, nine, "directory deeper than 8 levels; its contents were not collected");
  EXPECT_EQ(c.limits_hit, std::vector<std::string>{"output_depth"});
  EXPECT_TRUE(dest_entries().empty());  // directories with nothing accepted are removed
}

TEST_F(CollectTest, FileAtMaxDepthAccepted) {
  OutputPolicy policy;
  policy.max_depth = 2;
  mkdir("a");
  mkdir("a/b");
  mkdir("a/b/c");
  write("a/b/ok.txt", "ok\n");
  write("a/b/c/deep.txt", "too deep\n");
  Collection c = collect(policy);
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(c.outputs[0].name, "a/b/c");
  EXPECT_FALSE(c.outputs[0].accepted);
  EXPECT_EQ(c.outputs[1].name, "a/b/ok.txt");
  EXPECT_TRUE(c.outputs[1].accepted);
  EXPECT_TRUE(copied("a/b/ok.txt"));
  EXPECT_FALSE(copied("a/b/c"));
}

TEST_F(CollectTest, ManyFilesBoundedByMaxCount) {
  mkdir("many");
  UniqueFd dir(::open((out_ + "/many").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "f" + std::to_string(i) + ".txt";
    UniqueFd f(::openat(dir.get(), name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    ASSERT_TRUE(f.valid());
  }
  OutputPolicy policy;
  policy.max_count = 100;
  Collection c = collect(policy);
  EXPECT_TRUE(c.any_rejected);
  EXPECT_EQ(c.limits_hit, std::vector<std::string>{"output_count"});
  // "many" itself is one of the 100 entries: 99 files, then one limit record.
  ASSERT_EQ(c.outputs.size(), 100u);
  const auto accepted = std::count_if(c.outputs.begin(), c.outputs.end(),
                                      [](const ManifestEntry& e) { return e.accepted; });
  EXPECT_EQ(accepted, 99);
  EXPECT_EQ(c.outputs[0].name, "many");
  EXPECT_EQ(c.outputs[0].reason,
            "more than 100 entries in the output; the rest were not collected");
}

TEST_F(CollectTest, NewlineNameRefusedAndPrintable) {
  write("evil\nname.txt", "x\n");
  Collection c = collect();
  expect_one_refusal(c, "evil\\x0aname.txt",
                     "bad name: name contains \\x0a (allowed: A-Z a-z 0-9 . _ + - space)");
  EXPECT_TRUE(dest_entries().empty());
}

TEST_F(CollectTest, NonUtf8AndLongNamesRefused) {
  write("caf\xE9.txt", "x\n");
  UniqueFd longest(::openat(out_fd_.get(), std::string(255, 'a').c_str(),
                            O_CREAT | O_WRONLY | O_CLOEXEC, 0644));  // NAME_MAX bytes
  ASSERT_TRUE(longest.valid());
  Collection c = collect();
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(c.outputs[0].name, std::string(255, 'a'));
  EXPECT_EQ(c.outputs[0].reason, "bad name: name longer than 128 bytes");
  EXPECT_EQ(c.outputs[1].name, "caf\\xe9.txt");
  EXPECT_FALSE(c.outputs[1].accepted);
  EXPECT_TRUE(dest_entries().empty());
}

TEST_F(CollectTest, HiddenDirectoryNotEntered) {
  mkdir(".git");
  write(".git/config", "[core]\n");
  expect_one_refusal(collect(), ".git", "bad name: name starts with '.'");
  EXPECT_TRUE(dest_entries().empty());
}

TEST_F(CollectTest, BinaryRefusedByTypeAndCopyRemoved) {
  const std::string blob(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0",
      10);
  write("blob.bin", blob);
  Collection c = collect();
  expect_one_refusal(c, "blob.bin",
                     "type binary is not allowed (allowed: text, csv, tsv, json, png, jpeg, pdf, "
                     "svg, xml)");
  EXPECT_EQ(c.outputs[0].type, "binary");
  EXPECT_EQ(c.outputs[0].sha256, Sha256::of(blob));
  EXPECT_EQ(c.outputs[0].size, blob.size());
  EXPECT_FALSE(copied("blob.bin"));
}

TEST_F(CollectTest, WorksFromAnOPathRootFd) {
  write("a.txt", "a\n");
  UniqueFd path_fd(::open(out_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto c = collect_outputs(path_fd.get(), dest_, OutputPolicy{});
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->outputs.size(), 1u);
  EXPECT_TRUE(c->outputs[0].accepted);
}

TEST_F(CollectTest, NonEmptyDestinationIsAnError) {
  write("a.txt", "a\n");
  ASSERT_TRUE(sys::write_file_atomic(dest_ + "/a.txt", "old").has_value());
  auto c = collect_outputs(out_fd_.get(), dest_, OutputPolicy{});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().err, EEXIST);
}

// --record inside --output-dir: a job must not take the record's path
// (a directory there makes the record unwritable) nor stand in its way.
TEST_F(CollectTest, OutputAtTheRecordsPathIsRefused) {
  mkdir("record.json");
  write("record.json/x.csv", "a\n");
  OutputPolicy policy;
  policy.reserved = {"record.json"};
  Collection c = collect(policy);
  expect_one_refusal(c, "record.json", "collides with the path of the job record (record.json)");
  EXPECT_FALSE(copied("record.json"));

  write("other.csv", "b\n");  // a file at the path itself is refused too; others are kept
  ASSERT_EQ(::unlink((out_ + "/record.json/x.csv").c_str()), 0);
  ASSERT_EQ(::rmdir((out_ + "/record.json").c_str()), 0);
  write("record.json", "{\"outcome\": \"succeeded\"}");
  ASSERT_EQ(::rmdir(dest_.c_str()), 0);
  ASSERT_EQ(::mkdir(dest_.c_str(), 0700), 0);
  c = collect(policy);
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_TRUE(c.outputs[0].accepted) << c.outputs[0].name;
  EXPECT_EQ(c.outputs[1].name, "record.json");
  EXPECT_FALSE(c.outputs[1].accepted);
  EXPECT_FALSE(copied("record.json"));
}

// The record is written through PATH.tmp.PID: a directory at a guessed
// temporary name would make the write fail just the same.
TEST_F(CollectTest, OutputAtTheRecordsTemporaryNameIsRefused) {
  mkdir("record.json.tmp.4242");
  write("record.json.tmp.4242/x.csv", "a\n");
  write("record.json.txt", "kept\n");
  OutputPolicy policy;
  policy.reserved = {"record.json"};
  Collection c = collect(policy);
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(c.outputs[0].name, "record.json.tmp.4242");
  EXPECT_FALSE(c.outputs[0].accepted);
  EXPECT_EQ(c.outputs[0].reason, "collides with the path of the job record (record.json)");
  EXPECT_EQ(c.outputs[1].name, "record.json.txt");
  EXPECT_TRUE(c.outputs[1].accepted);
}

TEST_F(CollectTest, FileWhereTheRecordsDirectoryMustBeIsRefused) {
  write("runs", "not a directory\n");
  OutputPolicy policy;
  policy.reserved = {"runs/1/record.json"};
  Collection c = collect(policy);
  expect_one_refusal(c, "runs", "stands where the job record's directory must be (runs/1/record.json)");
}

TEST_F(CollectTest, DirectoriesAboveTheRecordAreCollectedNormally) {
  mkdir("runs");
  write("runs/table.csv", "a,b\n");
  OutputPolicy policy;
  policy.reserved = {"runs/record.json"};
  Collection c = collect(policy);
  EXPECT_FALSE(c.any_rejected);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].name, "runs/table.csv");
}

}  // namespace
}  // namespace airlock::workspace
