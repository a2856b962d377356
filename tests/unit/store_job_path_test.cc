// The store's part of one job (create, mark running, finish, then the reads a
// `wait` answer makes: the job, its record, its artifacts) must not cost more
// as the store grows: every query on that path finds its rows through an
// index. Counted as SQLite's virtual machine steps (Store::sql_vm_steps),
// which grow with the rows a query visits. Store::record once scanned the
// tenant's whole chain for each job (a partial index on records.job_id that
// the planner cannot use with a bound parameter unless the query repeats the
// index's condition): ~450 page reads per job in a service with 550 records.
#include <cstdint>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

class StoreJobPath : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::open(tmp_.path());
    ASSERT_TRUE(opened) << opened.error().message();
    store_ = std::move(*opened);
    tenant_ = store_->create_tenant("acme", {})->id;
  }

  // One job through the store, as the service does it; its record carries
  // `padding` bytes, like a job's captured output.
  void one_job(size_t padding) {
    JobRow row;
    row.tenant_id = tenant_;
    row.key_id = "k1";
    row.request_json = R"({"command":["/bin/true"]})";
    auto created = store_->create_job(row);
    ASSERT_TRUE(created) << created.error().message();
    const std::string id = created->first.id;
    ASSERT_TRUE(store_->mark_running(id, 4242, "2026-01-01T00:00:01.000Z"));
    nlohmann::json rec = {{"id", id}, {"outcome", "succeeded"}, {"stdout", std::string(padding, 'x')}};
    auto stored = store_->finish_job(id, "succeeded", "2026-01-01T00:00:02.000Z", rec.dump(), {});
    ASSERT_TRUE(stored) << stored.error().message();
    auto job = store_->job(tenant_, id);
    ASSERT_TRUE(job && *job);
    auto record = store_->record(tenant_, id);
    ASSERT_TRUE(record && *record);
    ASSERT_TRUE(store_->artifacts(id));
  }

  // SQLite's steps per job, over `jobs` jobs.
  uint64_t steps_per_job(int jobs) {
    uint64_t before = store_->sql_vm_steps();
    for (int i = 0; i < jobs; ++i) one_job(kPadding);
    return (store_->sql_vm_steps() - before) / static_cast<uint64_t>(jobs);
  }

  static constexpr size_t kPadding = 2 << 10;
  testing::TempDir tmp_;
  std::unique_ptr<Store> store_;
  std::string tenant_;
};

TEST_F(StoreJobPath, WorkPerJobDoesNotGrowWithTheStoredRecords) {
  for (int i = 0; i < 20; ++i) one_job(kPadding);
  uint64_t small = steps_per_job(10);
  for (int i = 0; i < 470; ++i) one_job(kPadding);
  uint64_t large = steps_per_job(10);
  std::printf("SQLite steps per job: %llu with 30 jobs stored, %llu with 500\n",
              static_cast<unsigned long long>(small), static_cast<unsigned long long>(large));
  ASSERT_GT(small, 0u) << "the store counts no work";
  EXPECT_LT(large, small + small / 2) << "a query on the job path visits more rows as the store grows";
}

}  // namespace
}  // namespace airlock::store
