// A job's directory under the state directory (jobs/state_dir.h): made
// locked, removed once, and a moved-from JobDir owns nothing (no root needed).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "jobs/state_dir.h"
#include "store_test_util.h"

namespace airlock::jobs {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;

TEST(JobDir, AMovedFromDirectoryRemovesNothingAndTheNewOwnerRemovesIt) {
  TempDir tmp;
  std::string state = tmp.path() + "/state";
  auto made = JobDir::create(state, "0123456789abcdef");
  ASSERT_TRUE(made) << made.error().message();
  std::optional<JobDir> first(std::move(*made));  // a moved-from JobDir stays in `made`
  const std::string path = first->path();
  EXPECT_EQ(path, state + "/jobs/0123456789abcdef");
  {
    std::optional<JobDir> second(std::move(*first));  // `first` keeps a moved-from value
    EXPECT_TRUE(first->remove()) << "the moved-from directory tried to remove something";
    EXPECT_TRUE(made->remove());
    first.reset();
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_TRUE(second->remove());
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(second->remove()) << "a second remove() did something";
  }
  EXPECT_TRUE(fs::is_empty(state + "/jobs"));
}

TEST(JobDir, ADirectoryNotRemovedGoesWithItsOwner) {
  TempDir tmp;
  std::string state = tmp.path() + "/state";
  std::string path;
  {
    auto made = JobDir::create(state, "fedcba9876543210");
    ASSERT_TRUE(made) << made.error().message();
    path = made->path();
    EXPECT_TRUE(fs::exists(path + "/lock"));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace airlock::jobs
