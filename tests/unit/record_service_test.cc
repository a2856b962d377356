// The service's fields of the typed record (tenant, key, states, its share of
// the time, the checks): written only when set, in the keys the API shows.
#include <gtest/gtest.h>

#include "jobs/record.h"

using namespace airlock;

TEST(RecordServiceFields, AbsentFromAnAirlockRunRecord) {
  jobs::JobRecord r;
  auto j = jobs::to_json(r);
  for (const char* key : {"tenant", "key_id", "states", "service_timing", "checks"}) EXPECT_FALSE(j.contains(key)) << key;
}

TEST(RecordServiceFields, WrittenAsTheApiShowsThem) {
  jobs::JobRecord r;
  r.checks = std::vector<validate::CheckResult>{{"rows", "csv_rows", false, "3 rows, want 4"}};
  r.service = jobs::JobRecord::ServiceSide{"t1", "k1", "2026-12-01T10:00:00.000Z", "", "2026-12-01T10:00:01.500Z", {}};
  r.service->timing.add("queue", 1.2345678);
  r.service->timing.add("run", 20.0);
  auto j = jobs::to_json(r);
  EXPECT_EQ(j["tenant"], "t1");
  EXPECT_EQ(j["key_id"], "k1");
  EXPECT_EQ(j["states"]["created_at"], "2026-12-01T10:00:00.000Z");
  EXPECT_TRUE(j["states"]["started_at"].is_null());  // it never started
  EXPECT_EQ(j["states"]["finished_at"], "2026-12-01T10:00:01.500Z");
  EXPECT_DOUBLE_EQ(j["service_timing"]["queue_ms"].get<double>(), 1.235);
  EXPECT_DOUBLE_EQ(j["service_timing"]["run_ms"].get<double>(), 20.0);
  ASSERT_EQ(j["checks"].size(), 1u);
  EXPECT_EQ(j["checks"][0], validate::to_json(r.checks->front()));
  EXPECT_EQ(j["checks"][0]["passed"], false);
}

TEST(RecordServiceFields, AJobThatNeverRanHasNoServiceTiming) {
  jobs::JobRecord r;
  r.service = jobs::JobRecord::ServiceSide{"t1", "k1", "a", "b", "c", {}};
  auto j = jobs::to_json(r);
  EXPECT_FALSE(j.contains("service_timing"));
  EXPECT_EQ(j["states"]["started_at"], "b");
}
