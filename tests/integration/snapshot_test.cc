// Workspace snapshots on real detached tmpfs mounts, and `airlock run` with
// its /workspace restored from a snapshot.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "run_helpers.h"
#include "sandbox/tmpfs.h"
#include "store/cas.h"
#include "sys/file_io.h"
#include "workspace/snapshot_tree.h"

using namespace airlock;
using airlock::testing::run_airlock;
using airlock::testing::TempDir;

namespace {

constexpr uid_t kJobUid = 3000001;  // an unprivileged host uid, as a sandbox's

UniqueFd fresh_tmpfs() {
  auto m = sandbox::make_detached_tmpfs({64ull << 20, 4096, 0755, kJobUid, kJobUid, false});
  EXPECT_TRUE(m) << m.error().message();
  return m ? std::move(*m) : UniqueFd();
}

UniqueFd root_of(const UniqueFd& mount) {
  return UniqueFd(::openat(mount.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

void put(int dir, const std::string& rel, const std::string& bytes, mode_t mode) {
  UniqueFd f(::openat(dir, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  ASSERT_TRUE(f) << rel;
  ASSERT_TRUE(sys::write_all(f.get(), bytes));
  ASSERT_EQ(::fchmod(f.get(), mode), 0);
}

std::string read_beneath(int dir, const std::string& rel) {
  UniqueFd f(::openat(dir, rel.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  EXPECT_TRUE(f) << rel;
  auto text = sys::read_all(f.get());
  return text ? *text : "";
}

// A workspace as a session leaves it: nested files, a script, a symlink
// pointing out of the workspace, a fifo.
void fill(int root) {
  ASSERT_EQ(::mkdirat(root, "proj", 0755), 0);
  ASSERT_EQ(::mkdirat(root, "proj/data", 0700), 0);
  put(root, "proj/main.py", "print('hello from the snapshot')\n", 0644);
  put(root, "proj/run.sh", "#!/bin/sh\necho ran\n", 0755);
  put(root, "proj/data/big.bin", std::string(2 << 20, 'z'), 0600);
  ASSERT_EQ(::symlinkat("/etc/shadow", root, "proj/shadow"), 0);
  ASSERT_EQ(::mkfifoat(root, "proj/pipe", 0644), 0);
}

// A content directory and a source workspace (a detached tmpfs) per test.
class Snapshot : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cas.create_dirs()); }
  Result<workspace::Capture> capture() { return workspace::capture_tree(source_root.get(), cas, {}, created); }

  TempDir t;
  store::ContentStore cas{t.sub("content")};
  UniqueFd source = fresh_tmpfs();
  UniqueFd source_root = root_of(source);
  std::vector<std::string> created;  // contents the captures stored new
};

}  // namespace

TEST_F(Snapshot, CaptureAndRestoreBetweenDetachedTmpfsMounts) {
  fill(source_root.get());

  auto captured = capture();
  ASSERT_TRUE(captured) << captured.error().message();
  ASSERT_EQ(captured->skipped.size(), 1u);
  EXPECT_EQ(captured->skipped[0].path, "proj/pipe");

  UniqueFd dest = fresh_tmpfs();
  UniqueFd dest_root = root_of(dest);
  auto restored = workspace::restore_tree(captured->manifest, cas, dest_root.get(), kJobUid, kJobUid);
  ASSERT_TRUE(restored) << restored.error().message();
  for (const char* rel : {"proj/main.py", "proj/run.sh", "proj/data/big.bin"}) {
    EXPECT_EQ(Sha256::of(read_beneath(dest_root.get(), rel)), Sha256::of(read_beneath(source_root.get(), rel)))
        << rel;
    struct stat a{}, b{};
    ASSERT_EQ(::fstatat(source_root.get(), rel, &a, AT_SYMLINK_NOFOLLOW), 0);
    ASSERT_EQ(::fstatat(dest_root.get(), rel, &b, AT_SYMLINK_NOFOLLOW), 0);
    EXPECT_EQ(a.st_mode, b.st_mode) << rel;
    EXPECT_EQ(b.st_uid, kJobUid) << rel;
    EXPECT_EQ(b.st_gid, kJobUid) << rel;
  }
  struct stat link{};
  ASSERT_EQ(::fstatat(dest_root.get(), "proj/shadow", &link, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_EQ(link.st_uid, kJobUid);
  char target[64] = {};
  ASSERT_GT(::readlinkat(dest_root.get(), "proj/shadow", target, sizeof(target) - 1), 0);
  EXPECT_STREQ(target, "/etc/shadow");
  // The restored tree captures to the same digest.
  auto again = workspace::capture_tree(dest_root.get(), cas, {}, created);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->manifest.digest(), captured->manifest.digest());
}

TEST_F(Snapshot, AJobStartsWithItsWorkspaceRestored) {
  fill(source_root.get());
  auto captured = capture();
  ASSERT_TRUE(captured) << captured.error().message();
  std::string manifest = t.sub("manifest.json");
  airlock::testing::write_text(manifest, captured->manifest.to_json());

  auto ran = run_airlock({"run", "--state-dir", t.state(), "--json", "--snapshot-manifest", manifest,
                          "--content-dir", t.sub("content"), "--", "sh", "-c",
                          "python3 proj/main.py && ./proj/run.sh && sha256sum proj/data/big.bin && "
                          "stat -c '%u %a %n' proj/data proj/data/big.bin && readlink proj/shadow && "
                          "echo more > proj/new.txt"});
  ASSERT_EQ(ran.status, 0) << ran.err << ran.out;
  auto r = ran.record();
  EXPECT_EQ(r["outcome"], "succeeded");
  EXPECT_EQ(r["snapshot"]["digest"], captured->manifest.digest());
  EXPECT_EQ(r["snapshot"]["entries"], captured->manifest.entries().size());
  EXPECT_EQ(r["snapshot"]["size_bytes"], captured->manifest.total_bytes());
  EXPECT_TRUE(r["timing"].contains("restore_ms")) << r["timing"].dump();
  const std::string expected = "hello from the snapshot\nran\n" + Sha256::of(std::string(2 << 20, 'z')) +
                               "  proj/data/big.bin\n1000 700 proj/data\n1000 600 proj/data/big.bin\n"
                               "/etc/shadow\n";
  EXPECT_EQ(r["stdout"]["text"], expected);
  // The job wrote into its own copy: the stored contents are unchanged and read-only.
  for (const auto& sha : captured->manifest.contents()) {
    struct stat st{};
    ASSERT_EQ(::stat(cas.path(sha).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0400u);
  }
}

TEST_F(Snapshot, AnUnusableSnapshotRejectsTheJobBeforeItStarts) {
  put(source_root.get(), "a.txt", "a", 0644);
  auto captured = capture();
  ASSERT_TRUE(captured);
  std::string manifest = t.sub("manifest.json");
  airlock::testing::write_text(manifest, captured->manifest.to_json());
  auto run = [&](const std::string& manifest_path) {
    return run_airlock({"run", "--state-dir", t.state(), "--json", "--snapshot-manifest", manifest_path,
                        "--content-dir", t.sub("content"), "--", "true"});
  };

  ASSERT_TRUE(cas.remove(Sha256::of("a")));
  auto missing = run(manifest);
  EXPECT_EQ(missing.status, 120) << missing.err;
  EXPECT_EQ(missing.record()["outcome"], "input_rejected");
  EXPECT_NE(missing.record()["reason"].get<std::string>().find(Sha256::of("a") + " is not stored"),
            std::string::npos);

  airlock::testing::write_text(manifest, R"({"version":1,"entries":[{"kind":"dir","mode":"0755","path":"../x"}]})");
  auto hostile = run(manifest);
  EXPECT_EQ(hostile.status, 120) << hostile.err;
  EXPECT_NE(hostile.record()["reason"].get<std::string>().find("path:"), std::string::npos);

  auto usage = run_airlock({"run", "--state-dir", t.state(), "--snapshot-manifest", manifest, "--", "true"});
  EXPECT_EQ(usage.status, 125);
  EXPECT_NE(usage.err.find("--snapshot-manifest and --content-dir go together"), std::string::npos);
}
