// Copies keep holes (issue 11 item 17: an 8 KB sparse output became 300 MB on
// the data disk) while the hash and size still cover every logical byte.
#include "workspace/copy_hashing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "store/cas.h"
#include "store_test_util.h"

namespace airlock::workspace {
namespace {

using store::testing::TempDir;

constexpr uint64_t kLogical = 64ull
                              << 20;     // 64 MiB (the issue saw 300 MB; the size does not matter)
constexpr uint64_t kSmall = 1ull << 20;  // "small": what a dense copy exceeds 64 times

// A 64 MiB file holding 4 KiB of data at its start and 4 KiB in its middle; holes elsewhere.
std::string make_sparse(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  EXPECT_TRUE(fd);
  std::string data(4096, 'x');
  EXPECT_EQ(::pwrite(fd.get(), data.data(), data.size(), 0), 4096);
  EXPECT_EQ(::pwrite(fd.get(), data.data(), data.size(), 32 << 20), 4096);
  EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(kLogical)), 0);
  return data;
}

// sha256 of the file's logical bytes, read plainly (holes read as zeros).
std::string logical_sha256(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  Sha256 h;
  std::string buf(1 << 20, '\0');
  for (ssize_t n; (n = ::read(fd.get(), buf.data(), buf.size())) > 0;)
    h.update(std::string_view(buf.data(), n));
  return h.hex_digest();
}

uint64_t allocated(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

uint64_t size_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_size);
}

TEST(CopyHashing, ASparseFileStaysSparseAndIsHashedWhole) {
  TempDir tmp;
  const std::string src = tmp.path() + "/sparse", dst = tmp.path() + "/copy";
  make_sparse(src);
  ASSERT_LT(allocated(src), kSmall) << "this filesystem does not make sparse files";
  UniqueFd in(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  auto copied = copy_hashing(in.get(), out.get(), UINT64_MAX, /*keep=*/16);
  ASSERT_TRUE(copied) << copied.error().message();
  ASSERT_TRUE(*copied);
  EXPECT_EQ((*copied)->size, kLogical);
  EXPECT_EQ((*copied)->content, std::string(16, 'x'));
  const std::string want = logical_sha256(src);
  EXPECT_EQ((*copied)->sha256, want);
  out.reset();
  EXPECT_EQ(size_of(dst), kLogical);
  EXPECT_LT(allocated(dst), kSmall) << "the copy is dense";
  EXPECT_EQ(logical_sha256(dst), want);
}

TEST(CopyHashing, TheLimitCountsHolesAsBytes) {
  TempDir tmp;
  const std::string src = tmp.path() + "/sparse", dst = tmp.path() + "/copy";
  make_sparse(src);
  UniqueFd in(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  auto copied = copy_hashing(in.get(), out.get(), kLogical - 1);
  ASSERT_TRUE(copied) << copied.error().message();
  EXPECT_FALSE(*copied) << "a 64 MiB file passed a limit one byte smaller";
}

TEST(CopyHashing, ZerosFromAPipeBecomeHolesToo) {
  TempDir tmp;
  const std::string dst = tmp.path() + "/copy";
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  const uint64_t total = 8ull << 20;
  pid_t child = ::fork();
  if (child == 0) {
    r.reset();
    std::string block(65536, '\0');
    for (uint64_t done = 0; done < total; done += block.size())
      if (::write(w.get(), block.data(), block.size()) != static_cast<ssize_t>(block.size()))
        _exit(1);
    _exit(0);
  }
  w.reset();
  UniqueFd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  auto copied = copy_hashing(r.get(), out.get(), UINT64_MAX, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(copied && *copied);
  EXPECT_EQ((*copied)->size, total);
  EXPECT_EQ((*copied)->sha256, Sha256::of(std::string(total, '\0')));
  out.reset();
  EXPECT_EQ(size_of(dst), total);
  EXPECT_LT(allocated(dst), kSmall);
}

TEST(CopyHashing, StoredContentsAndRestoredCopiesKeepHoles) {
  TempDir tmp;
  const std::string src = tmp.path() + "/sparse";
  make_sparse(src);
  store::ContentStore cas(tmp.path() + "/cas");
  ASSERT_TRUE(cas.create_dirs());
  UniqueFd in(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
  auto stored = cas.put_fd(in.get(), UINT64_MAX);
  ASSERT_TRUE(stored) << stored.error().message();
  EXPECT_EQ(stored->sha256, logical_sha256(src));
  EXPECT_LT(allocated(stored->path), kSmall) << "the content directory holds a dense copy";

  auto from = cas.open(stored->sha256);
  ASSERT_TRUE(from);
  const std::string restored = tmp.path() + "/restored";
  UniqueFd out(::open(restored.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  ASSERT_TRUE(copy_keeping_holes(from->get(), out.get(), kLogical));
  out.reset();
  EXPECT_EQ(size_of(restored), kLogical);
  EXPECT_LT(allocated(restored), kSmall);
  EXPECT_EQ(logical_sha256(restored), stored->sha256);
  // A stored content shorter than the manifest says is an error, not zeros.
  auto again = cas.open(stored->sha256);
  UniqueFd longer(
      ::open((tmp.path() + "/longer").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  auto st = copy_keeping_holes(again->get(), longer.get(), kLogical + 1);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what.find("ended after"), std::string::npos) << st.error().what;
}

}  // namespace
}  // namespace airlock::workspace
