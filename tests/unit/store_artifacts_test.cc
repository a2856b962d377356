// Store: the content-addressed artifact directory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

using testing::slurp;

size_t files_under(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

class StoreArtifacts : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path() + "/data", store_, options_);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = tmp_.path() + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string artifacts() const { return tmp_.path() + "/data/artifacts"; }

  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreArtifacts, StoresByContentReadOnly) {
  std::string bytes(200000, 'x');
  bytes += "tail";
  std::string sha = Sha256::of(bytes);
  auto stored = store_->put_artifact(write("chart.png", bytes), sha);
  ASSERT_TRUE(stored) << stored.error().message();
  EXPECT_EQ(*stored, tmp_.path() + "/data/artifacts/sha256/" + sha.substr(0, 2) + "/" + sha);
  EXPECT_EQ(*stored, store_->artifact_path(sha));
  EXPECT_EQ(slurp(*stored), bytes);
  struct stat st{};
  ASSERT_EQ(::stat(stored->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
}

TEST_P(StoreArtifacts, TheSameContentIsStoredOnce) {
  std::string sha = Sha256::of("same bytes");
  auto first = store_->put_artifact(write("a.csv", "same bytes"), sha);
  auto second = store_->put_artifact(write("b.csv", "same bytes"), sha);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(files_under(artifacts()), 1u);  // and nothing left in tmp/
  ASSERT_TRUE(store_->put_artifact(write("c.csv", "other"), Sha256::of("other")));
  EXPECT_EQ(files_under(artifacts()), 2u);
}

TEST_P(StoreArtifacts, AShaMismatchIsRefusedAndLeavesNothing) {
  std::string claimed = Sha256::of("what the manifest said");
  auto r = store_->put_artifact(write("x", "what the file holds"), claimed);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("expected " + claimed), std::string::npos);
  EXPECT_EQ(files_under(artifacts()), 0u);
  EXPECT_FALSE(std::filesystem::exists(store_->artifact_path(claimed)));
}

TEST_P(StoreArtifacts, RefusesSymlinksDirectoriesMissingFilesAndBadHashes) {
  std::string target = write("secret", "host secret");
  std::string link = tmp_.path() + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(store_->put_artifact(link, Sha256::of("host secret")));
  EXPECT_FALSE(store_->put_artifact(tmp_.path(), Sha256::of("")));
  EXPECT_FALSE(store_->put_artifact(tmp_.path() + "/missing", Sha256::of("")));
  EXPECT_FALSE(store_->put_artifact(target, "../../etc/passwd"));
  EXPECT_FALSE(store_->put_artifact(target, std::string(64, 'A')));  // upper case is not canonical
  EXPECT_EQ(files_under(artifacts()), 0u);
  EXPECT_EQ(store_->artifact_path("../../etc/passwd"), "");
  EXPECT_EQ(store_->artifact_path(""), "");
}

TEST_P(StoreArtifacts, VerifyNoticesAMissingArtifactFile) {
  auto t = store_->create_tenant("acme", {});
  JobRow row;
  row.tenant_id = t->id;
  row.request_json = "{}";
  auto job = store_->create_job(row);
  std::string sha = Sha256::of("out");
  auto stored = store_->put_artifact(write("out", "out"), sha);
  ASSERT_TRUE(stored);
  ASSERT_TRUE(store_->finish_job(job->first.id, "succeeded", "", "{}",
                                 {{"", "out.txt", sha, "txt", 3}}));
  EXPECT_TRUE(store_->verify()->ok);
  ASSERT_EQ(::unlink(stored->c_str()), 0);
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->ok);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].find("out.txt"), std::string::npos);
}

AIRLOCK_STORE_BACKENDS(StoreArtifacts);

}  // namespace
}  // namespace airlock::store
