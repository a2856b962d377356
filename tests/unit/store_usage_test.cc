// Store::usage_rows (store_usage.cc): jobs finished in the window, every
// outcome; kept objects from before it; tenant scope; bounds or none.
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

class StoreUsage : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path(), store_, options_);
    a_ = store_->create_tenant("acme", {})->id;
    b_ = store_->create_tenant("globex", {})->id;
  }
  void job(const std::string& tenant, const std::string& outcome, const std::string& at) {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k";
    row.request_json = R"({"command":["true"]})";
    auto created = store_->create_job(row);
    ASSERT_TRUE(created) << created.error().message();
    nlohmann::json rec = {{"outcome", outcome}, {"usage", {{"cpu_ms", 5}, {"wall_ms", 9}}}};
    ASSERT_TRUE(store_->finish_job(created->first.id, outcome, at, rec.dump(), {}));
  }
  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string a_, b_;
};

TEST_P(StoreUsage, RowsOfTheWindowForOneTenantOrAll) {
  job(a_, "succeeded", "2026-01-01T10:00:00.000Z");
  job(a_, "failed", "2026-01-02T10:00:00.000Z");
  job(b_, "cancelled", "2026-01-01T11:00:00.000Z");
  FileRow f;
  f.tenant_id = a_;
  f.name = "x.csv";
  f.size = 42;
  f.sha256 = std::string(64, 'a');
  // add_file syncs the upload before its row commits: the file must exist.
  f.path = tmp_.path() + "/x.csv";
  std::ofstream(f.path) << std::string(42, 'x');
  f.created_at = "2026-01-01T09:00:00.000Z";
  ASSERT_TRUE(store_->add_file(f));

  auto all = store_->usage_rows("", "", "");
  ASSERT_TRUE(all) << all.error().message();
  EXPECT_EQ(all->size(), 4u);  // three jobs, one upload
  auto day1 = store_->usage_rows(a_, "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z");
  ASSERT_TRUE(day1) << day1.error().message();
  ASSERT_EQ(day1->size(), 2u);
  EXPECT_EQ((*day1)[0].kind, UsageRow::Kind::kJob);
  EXPECT_EQ((*day1)[0].outcome, "succeeded");
  EXPECT_NE((*day1)[0].json.find("\"cpu_ms\":5"), std::string::npos);
  EXPECT_EQ((*day1)[1].kind, UsageRow::Kind::kUpload);  // stored before the window's end
  EXPECT_EQ((*day1)[1].bytes, 42u);
  auto b_rows = store_->usage_rows(b_, "", "");
  ASSERT_TRUE(b_rows);
  ASSERT_EQ(b_rows->size(), 1u);
  EXPECT_EQ((*b_rows)[0].outcome, "cancelled");
  auto before = store_->usage_rows(a_, "", "2026-01-01T00:00:00.000Z");
  ASSERT_TRUE(before);
  EXPECT_TRUE(before->empty());
}

TEST_P(StoreUsage, AClosedSessionsEgressIsWhatItsGatewayCarriedBothWays) {
  SessionRow row;
  row.id = "s1";
  row.tenant_id = a_;
  row.key_id = "k";
  row.request_json = "{}";
  row.created_at = "2026-01-01T10:00:00.000Z";
  ASSERT_TRUE(store_->create_session(row));
  nlohmann::json record = {
      {"kind", "session"},
      {"usage", {{"cpu_ms", 7}}},
      {"events", {{{"event", "file"}, {"path", "a.csv"}},
                  {{"event", "network"},
                   {"attempts", {{{"host", "api.example"}, {"bytes_up", 100}, {"bytes_down", 1000}},
                                 {{"host", "api.example"}, {"bytes_up", 20}, {"bytes_down", 5}},
                                 {{"host", "denied.example"}, {"verdict", "denied"}}}},
                   {"dropped", 0}}}}};
  ASSERT_TRUE(store_->close_session("s1", "closed", "2026-01-01T11:00:00.000Z", record.dump()));
  auto rows = store_->usage_rows(a_, "", "");
  ASSERT_TRUE(rows) << rows.error().message();
  const UsageRow* session = nullptr;
  for (const auto& r : *rows)
    if (r.kind == UsageRow::Kind::kSession) session = &r;
  ASSERT_NE(session, nullptr);
  auto usage = nlohmann::json::parse(session->json);
  EXPECT_EQ(usage.value("cpu_ms", 0), 7);
  EXPECT_EQ(usage.value("egress_bytes", 0), 1125);  // 100 + 1000 + 20 + 5; the denied attempt carried nothing
}

AIRLOCK_STORE_BACKENDS(StoreUsage);

}  // namespace
}  // namespace airlock::store
