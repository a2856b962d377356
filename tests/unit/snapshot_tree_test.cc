// Capture of an untrusted tree into a content directory, and restore.
// Temporary directories only; restore gives files to the test's own uid.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "store/cas.h"
#include "store_test_util.h"
#include "workspace/snapshot_tree.h"

namespace airlock::workspace {
namespace {

namespace fs = std::filesystem;
using store::testing::slurp;
using store::testing::TempDir;

class SnapshotTree : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cas_.create_dirs());
    fs::create_directory(src());
    fs::create_directory(dest());
  }
  std::string src() const { return tmp_.path() + "/src"; }
  std::string dest() const { return tmp_.path() + "/dest"; }
  void write(const std::string& rel, const std::string& bytes, mode_t mode = 0644) {
    std::string p = src() + "/" + rel;
    std::ofstream(p, std::ios::binary) << bytes;
    ASSERT_EQ(::chmod(p.c_str(), mode), 0);
  }
  UniqueFd open_dir(const std::string& path) {
    return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  Result<Capture> capture(const CaptureLimits& limits = {}) {
    UniqueFd root = open_dir(src());
    return capture_tree(root.get(), cas_, limits, created_);
  }
  Status restore(const SnapshotManifest& m) {
    UniqueFd root = open_dir(dest());
    return restore_tree(m, cas_, root.get(), ::geteuid(), ::getegid());
  }
  size_t stored_files() const {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(tmp_.path() + "/cas/sha256"))
      if (e.is_regular_file()) ++n;
    return n;
  }

  TempDir tmp_;
  store::ContentStore cas_{tmp_.path() + "/cas"};
  std::vector<std::string> created_;  // contents the captures stored new
};

// path -> "file <mode> <sha256>", "dir <mode>", "symlink <target>"
std::map<std::string, std::string> describe_tree(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = fs::relative(e.path(), root);
    struct stat st{};
    EXPECT_EQ(::lstat(e.path().c_str(), &st), 0);
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
    if (S_ISLNK(st.st_mode))
      out[rel] = "symlink " + fs::read_symlink(e.path()).string();
    else if (S_ISDIR(st.st_mode))
      out[rel] = std::string("dir ") + mode;
    else
      out[rel] = std::string("file ") + mode + " " + Sha256::of(slurp(e.path()));
  }
  return out;
}

TEST_F(SnapshotTree, CaptureThenRestoreGivesTheSameTree) {
  fs::create_directories(src() + "/pkg/sub");
  write("empty.txt", "");
  write("run.sh", "#!/bin/sh\necho hi\n", 0755);
  write("secret.key", "k", 0600);
  write("pkg/data.bin", std::string(3 << 20, '\x01') + "end");
  write("pkg/sub/same.txt", "same");
  write("pkg/same-again.txt", "same");
  ASSERT_EQ(::chmod((src() + "/pkg/sub").c_str(), 0750), 0);
  ASSERT_EQ(::symlink("../run.sh", (src() + "/pkg/link").c_str()), 0);
  ASSERT_EQ(::link((src() + "/run.sh").c_str(), (src() + "/hardlink.sh").c_str()), 0);

  auto captured = capture();
  ASSERT_TRUE(captured) << captured.error().message();
  EXPECT_TRUE(captured->skipped.empty());
  EXPECT_EQ(captured->manifest.entries().size(), 10u);
  EXPECT_EQ(stored_files(), 5u);  // "same" and the hard link are stored once
  auto restored = restore(captured->manifest);
  ASSERT_TRUE(restored) << restored.error().message();
  EXPECT_EQ(describe_tree(dest()), describe_tree(src()));
  // The hard link came back as a separate file with the same bytes.
  struct stat a{}, b{};
  ASSERT_EQ(::stat((dest() + "/run.sh").c_str(), &a), 0);
  ASSERT_EQ(::stat((dest() + "/hardlink.sh").c_str(), &b), 0);
  EXPECT_NE(a.st_ino, b.st_ino);
  // The same tree captured again has the same digest.
  EXPECT_EQ(capture()->manifest.digest(), captured->manifest.digest());
}

TEST_F(SnapshotTree, HostileEntriesAreRecordedOrSkippedNeverFollowed) {
  ASSERT_EQ(::symlink("/etc/passwd", (src() + "/passwd").c_str()), 0);
  ASSERT_EQ(::symlink("/etc", (src() + "/etc").c_str()), 0);
  ASSERT_EQ(::mkfifo((src() + "/pipe").c_str(), 0644), 0);
  write(".hidden", "dot");
  write("bad\nname", "x");
  ASSERT_EQ(::symlink("tar\x01get", (src() + "/odd-link").c_str()), 0);
  write("ok.txt", "ok");

  auto captured = capture();  // must not block on the fifo
  ASSERT_TRUE(captured) << captured.error().message();
  std::map<std::string, std::string> skipped;
  for (const auto& s : captured->skipped) skipped[s.path] = s.reason;
  EXPECT_EQ(skipped["pipe"], "fifo; not captured");
  EXPECT_EQ(skipped.count(".hidden"), 0u);  // dotfiles (.local, .git) are part of a workspace
  EXPECT_NE(skipped["bad\\x0aname"].find("bad name"), std::string::npos);
  EXPECT_NE(skipped["odd-link"].find("not printable ASCII"), std::string::npos);
  std::map<std::string, SnapshotEntry> entries;
  for (const auto& e : captured->manifest.entries()) entries[e.path] = e;
  ASSERT_EQ(entries.size(), 4u);  // passwd, etc, .hidden, ok.txt: nothing beneath the "etc" link
  EXPECT_EQ(entries[".hidden"].kind, SnapshotKind::kFile);
  EXPECT_EQ(entries["passwd"].kind, SnapshotKind::kSymlink);
  EXPECT_EQ(entries["passwd"].target, "/etc/passwd");
  EXPECT_EQ(entries["etc"].kind, SnapshotKind::kSymlink);
  // Only ok.txt's and .hidden's bytes were stored: the link's target was never read.
  EXPECT_EQ(stored_files(), 2u);
  EXPECT_EQ(cas_.path(Sha256::of(slurp("/etc/passwd"))).empty(), false);
  EXPECT_FALSE(fs::exists(cas_.path(Sha256::of(slurp("/etc/passwd")))));

  // Restored, the symlinks are symlinks again (their targets untouched).
  ASSERT_TRUE(restore(captured->manifest));
  EXPECT_EQ(fs::read_symlink(dest() + "/passwd"), "/etc/passwd");
  EXPECT_FALSE(fs::exists(dest() + "/pipe"));
}

TEST_F(SnapshotTree, LimitsFailClearly) {
  std::string deep = src();
  for (int i = 0; i < 5; ++i) fs::create_directory(deep += "/d");
  auto too_deep = capture({.max_depth = 4});
  ASSERT_FALSE(too_deep);
  EXPECT_EQ(too_deep.error().what, "workspace path \"d/d/d/d/d\" is deeper than 4 levels (limit)");
  EXPECT_TRUE(capture({.max_depth = 5}));

  write("big.bin", std::string(5000, 'x'));
  auto too_big = capture({.max_bytes = 4096});
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().what.find("more than 4096 bytes of files (limit), reached at \"big.bin\""),
            std::string::npos);

  auto too_many = capture({.max_entries = 3});
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().what, "the workspace has more than 3 entries (limit)");
}

TEST_F(SnapshotTree, RestoreRefusesANonEmptyDestinationAndMissingContent) {
  write("a.txt", "a");
  auto captured = capture();
  ASSERT_TRUE(captured);
  std::ofstream(dest() + "/already") << "x";
  auto busy = restore(captured->manifest);
  ASSERT_FALSE(busy);
  EXPECT_NE(busy.error().what.find("not empty"), std::string::npos);
  fs::remove(dest() + "/already");

  ASSERT_TRUE(cas_.remove(Sha256::of("a")));
  auto missing = restore(captured->manifest);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().err, ENOENT);
  EXPECT_NE(missing.error().what.find("restore \"a.txt\": content " + Sha256::of("a") + " is not stored"),
            std::string::npos);
}

TEST_F(SnapshotTree, RestoreChecksSizesAgainstTheManifest) {
  write("a.txt", "abc");
  auto captured = capture();
  ASSERT_TRUE(captured);
  SnapshotEntry lying = captured->manifest.entries()[0];
  lying.size = 2;
  auto m = SnapshotManifest::from_entries({lying});
  ASSERT_TRUE(m);
  auto r = restore(*m);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("has 3 bytes, the manifest says 2"), std::string::npos);
}

}  // namespace
}  // namespace airlock::workspace
