#include "sandbox/seccomp_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

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
}  // namespace

TEST_F(SeccompCacheTest, StoresThenLoadsTheSameProgram) {
  auto built = sandbox::build_job_filter();
  ASSERT_TRUE(built.has_value());
  auto first = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(same(*first, *built));
  ASSERT_TRUE(sys::read_file(dir_ + "/job-filter.bpf").has_value());
  auto second = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(same(*second, *built));
}

TEST_F(SeccompCacheTest, ACorruptedOrForeignCacheIsRebuiltNotUsed) {
  auto built = sandbox::build_job_filter();
  ASSERT_TRUE(sandbox::load_or_build_job_filter(dir_).has_value());
  std::string path = dir_ + "/job-filter.bpf";
  auto file = sys::read_file(path);
  ASSERT_TRUE(file.has_value());
  // Flip one byte of the program: an "allow everything" edit must not load.
  std::string tampered = *file;
  tampered[tampered.size() - 3] ^= 0x01;
  ASSERT_TRUE(sys::write_file_atomic(path, tampered).has_value());
  auto loaded = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(same(*loaded, *built));
  // Built by another executable (other key): rebuilt too.
  ASSERT_TRUE(sys::write_file_atomic(path, "otherkey\n" + file->substr(file->find('\n') + 1)).has_value());
  auto again = sandbox::load_or_build_job_filter(dir_);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(same(*again, *built));
  EXPECT_EQ(*sys::read_file(path), *file);
}
