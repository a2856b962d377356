#include "sandbox/seccomp_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>

#include "base/sha256.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"

using namespace airlock;

namespace {
class SeccompCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-seccomp-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)sys::remove_tree(dir_); }
  std::string dir_;
};

bool same(const sandbox::SeccompProgram& a, const sandbox::SeccompProgram& b) {
  return a.instructions.size() == b.instructions.size() &&
         std::memcmp(a.instructions.data(), b.instructions.data(),
                     a.instructions.size() * sizeof(sock_filter)) == 0;
}

// The file's inode and change time: a rewrite (write_file_atomic renames a new file in) changes
// them.
std::pair<ino_t, timespec> identity(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {st.st_ino, st.st_ctim};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}
}  // namespace

TEST_F(SeccompCacheTest, StoresThenLoadsTheSameProgram) {
  auto built = sandbox::build_job_filter();
  ASSERT_TRUE(built.has_value());
  auto first = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(same(*first, *built));
  std::string path = sandbox::job_filter_path(dir_, sandbox::job_filter_key());
  ASSERT_TRUE(sys::read_file(path).has_value());
  auto before = identity(path);
  auto second = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(same(*second, *built));
  EXPECT_EQ(identity(path).first, before.first) << "loaded, not stored again";
}

TEST_F(SeccompCacheTest, ACorruptedOrForeignCacheIsRebuiltNotUsed) {
  auto built = sandbox::build_job_filter();
  ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_).has_value());
  std::string path = sandbox::job_filter_path(dir_, sandbox::job_filter_key());
  auto file = sys::read_file(path);
  ASSERT_TRUE(file.has_value());
  // Flip one byte of the program: an "allow everything" edit must not load.
  std::string tampered = *file;
  tampered[tampered.size() - 3] ^= 0x01;
  ASSERT_TRUE(sys::write_file_atomic(path, tampered).has_value());
  auto loaded = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(same(*loaded, *built));
  // Another key in this key's file (a name collision, or a copied file): rebuilt too.
  ASSERT_TRUE(sys::write_file_atomic(path, "otherkey\n" + file->substr(file->find('\n') + 1)).has_value());
  auto again = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(same(*again, *built));
  EXPECT_EQ(*sys::read_file(path), *file);
}

// Two executables on one state directory (a new CLI beside an old pool):
// each keeps its own file, and neither rewrites the other's when they
// alternate. With one file for all, each cold start rebuilt and stored.
TEST_F(SeccompCacheTest, TwoExecutablesAlternatingKeepTheirOwnFiles) {
  std::string a = Sha256::of("executable a"), b = Sha256::of("executable b");
  ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, a).has_value());
  ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, b).has_value());
  std::string path_a = sandbox::job_filter_path(dir_, a),
              path_b = sandbox::job_filter_path(dir_, b);
  ASSERT_NE(path_a, path_b);
  auto first_a = identity(path_a), first_b = identity(path_b);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, a).has_value());
    ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, b).has_value());
  }
  EXPECT_EQ(identity(path_a).first, first_a.first);
  EXPECT_EQ(identity(path_b).first, first_b.first);
  EXPECT_EQ(identity(path_a).second.tv_nsec, first_a.second.tv_nsec);
  EXPECT_EQ(identity(path_b).second.tv_nsec, first_b.second.tv_nsec);
}

// Storing a filter keeps the newest kKeptJobFilters files and removes the
// older ones, and the single file of earlier airlocks.
TEST_F(SeccompCacheTest, StoringPrunesTheOldestFiles) {
  ASSERT_TRUE(sys::write_file_atomic(dir_ + "/job-filter.bpf", "old layout\n").has_value());
  ASSERT_TRUE(sys::write_file_atomic(dir_ + "/unrelated.txt", "kept\n").has_value());
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) {
    keys.push_back(Sha256::of("executable " + std::to_string(i)));
    ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, keys.back()).has_value());
    // Distinct modification times, oldest first, whatever the clock's grain.
    timespec times[2] = {{1'700'000'000 + i, 0}, {1'700'000'000 + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, sandbox::job_filter_path(dir_, keys.back()).c_str(), times, 0),
              0);
  }
  // Each store beyond the fourth removed the oldest file then; one more (a
  // seventh key) leaves exactly the newest four of all.
  std::string last = Sha256::of("executable 6");
  ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_, last).has_value());
  EXPECT_TRUE(exists(sandbox::job_filter_path(dir_, last)));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(exists(sandbox::job_filter_path(dir_, keys[i])), i >= 3) << "key " << i;
  EXPECT_FALSE(exists(dir_ + "/job-filter.bpf"));
  EXPECT_TRUE(exists(dir_ + "/unrelated.txt"));
}
