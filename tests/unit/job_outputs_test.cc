// collect_job_outputs: the job's /output copied into the job directory, and
// no directory made when /output is empty.
#include "jobs/outputs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "base/unique_fd.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"

using namespace airlock;

namespace {

class JobOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "job-outputs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::mkdir(out().c_str(), 0755), 0);
    out_fd_ = UniqueFd(::open(out().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(out_fd_.valid());
  }
  void TearDown() override {
    out_fd_.reset();
    (void)sys::remove_tree(root_);
  }
  std::string out() const { return root_ + "/output"; }
  std::string dest() const { return root_ + "/collected"; }
  bool exists(const std::string& path) const {
    struct stat st{};
    return ::lstat(path.c_str(), &st) == 0;
  }

  std::string root_;
  UniqueFd out_fd_;
};

TEST_F(JobOutputs, AnEmptyOutputMakesNoDirectory) {
  auto c = jobs::collect_job_outputs(out_fd_.get(), dest(), {});
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(c->outputs.empty());
  EXPECT_FALSE(c->any_rejected);
  EXPECT_TRUE(c->limits_hit.empty());
  EXPECT_FALSE(exists(dest()));
}

// The emptiness check reads /output before the collector does: every entry
// is still found (a check that moved a shared directory offset would lose the
// first ones).
TEST_F(JobOutputs, EveryEntryIsCollectedAfterTheEmptinessCheck) {
  for (const char* name : {"a.csv", "b.csv", "c.csv", "d.txt"})
    ASSERT_TRUE(sys::write_file_atomic(out() + "/" + name, std::string(name) + "\n", 0644).has_value());
  auto c = jobs::collect_job_outputs(out_fd_.get(), dest(), {});
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->outputs.size(), 4u);
  for (const auto& e : c->outputs) {
    EXPECT_TRUE(e.accepted) << e.name << ": " << e.reason;
    auto copied = sys::read_file(dest() + "/" + e.name, 100);
    ASSERT_TRUE(copied.has_value()) << e.name;
    EXPECT_EQ(*copied, e.name + "\n");
  }
}

TEST_F(JobOutputs, AnOutputHoldingOnlyAnEmptyDirectoryIsCollected) {
  ASSERT_EQ(::mkdir((out() + "/sub").c_str(), 0755), 0);
  auto c = jobs::collect_job_outputs(out_fd_.get(), dest(), {});
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(exists(dest()));  // not empty: the collector ran
}

}  // namespace
