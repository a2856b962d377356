// GET /v1/usage's pure half: store rows to items (open work up to now,
// storage clipped to the window), the time bounds, and the report's sums.
#include "api/usage_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace airlock::service {
namespace {

using json = nlohmann::json;
using K = store::UsageRow::Kind;

int64_t at(const char* t) { return *usage::parse_time_ms(t); }

TEST(UsageReport, TimeBoundsAreDaysOrUtcTimes) {
  auto day = parse_time_bound("2026-11-30", 0);
  ASSERT_TRUE(day);
  EXPECT_EQ(day->text, "2026-11-30T00:00:00.000Z");
  EXPECT_EQ(day->ms, at("2026-11-30T00:00:00Z"));
  auto t = parse_time_bound("2026-11-30T10:00:00Z", 0);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "2026-11-30T10:00:00.000Z");  // compares with stored times as text
  auto none = parse_time_bound("", 42);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->text, "");
  EXPECT_EQ(none->ms, 42);
  for (const char* bad : {"yesterday", "2026-11-30' OR '1'='1", "2026-11-30T10:00:00+02:00", "30/11/2026"})
    EXPECT_FALSE(parse_time_bound(bad, 0)) << bad;
}

TEST(UsageReport, RowsBecomeItemsWithOpenWorkCountedUpToNow) {
  int64_t now = at("2026-11-30T12:00:00Z");
  std::vector<store::UsageRow> rows = {
      {K::kJob, "j1", "t1", "", "2026-11-30T09:00:00.000Z", "failed",
       R"({"image":{"name":"py"},"usage":{"wall_ms":1000,"cpu_ms":400,"peak_memory_bytes":1000000}})", "", 0},
      {K::kJob, "j2", "t1", "", "2026-11-30T09:30:00.000Z", "sandbox_error", "not json", "", 0},
      {K::kSession, "s1", "t2", "2026-11-30T11:00:00.000Z", "", "open", R"({"cpu_ms":50})", "py", 0},
      {K::kArtifact, "j1/out.csv", "t1", "2026-11-30T09:00:00.000Z", "", "", "", "py", 2000},
      {K::kSnapshot, "sha256:x", "t2", "2026-11-29T12:00:00.000Z", "2026-11-30T06:00:00.000Z", "", "", "", 500},
      {K::kUpload, "f1", "t1", "garbage", "", "", "", "", 7},
  };
  auto items = usage_items(rows, at("2026-11-30T00:00:00Z"), at("2026-12-01T00:00:00Z"), now);
  ASSERT_EQ(items.size(), 5u);  // the upload with no time is left out
  EXPECT_EQ(items[0].figures.cpu_ms, 400u);
  EXPECT_EQ(items[0].image, "py");
  EXPECT_EQ(items[1].figures.wall_ms, 0u);  // a record that is not JSON counts nothing, the job still counts
  EXPECT_EQ(items[1].outcome, "sandbox_error");
  EXPECT_EQ(items[2].figures.session_ms, 3'600'000u);  // open since 11:00, now 12:00
  EXPECT_EQ(items[2].outcome, "open");
  // The artifact: kept 09:00 .. now (12:00), 3 h.
  EXPECT_TRUE(items[3].figures.storage_byte_ms == static_cast<unsigned __int128>(2000) * 3 * 3'600'000);
  // The snapshot: in the window from 00:00 until it expired at 06:00.
  EXPECT_EQ(items[4].image, "host");
  EXPECT_TRUE(items[4].figures.storage_byte_ms == static_cast<unsigned __int128>(500) * 6 * 3'600'000);
}

TEST(UsageReport, TheTotalIsTheSumOfTheGroupsAndOfTheItems) {
  std::vector<usage::Item> items;
  for (int i = 0; i < 7; ++i) {
    usage::Item it;
    it.id = "j" + std::to_string(i);
    it.tenant = i % 2 ? "t1" : "t2";
    it.day = i < 3 ? "2026-11-29" : "2026-11-30";
    it.figures.cpu_ms = 333;  // 0.000011 * 0.333 = 0.000003663 each
    items.push_back(it);
  }
  json r = usage_report(items, usage::GroupBy::kDay, true, 5, usage::RateCard{}, {{"t1", "alpha"}});
  EXPECT_EQ(r["total"]["usage"]["cpu_ms"], 7 * 333);
  EXPECT_EQ(r["total"]["cost"]["total"], "0.000026");  // 7 * 0.000003663 = 0.000025641
  ASSERT_EQ(r["groups"].size(), 2u);
  EXPECT_EQ(r["groups"][0]["key"], "2026-11-29");
  EXPECT_EQ(r["groups"][0]["jobs"], 3);
  EXPECT_EQ(r["items"].size(), 5u);
  EXPECT_TRUE(r["items_truncated"].get<bool>());
  EXPECT_EQ(r["rates"]["currency"], "GBP");
  json t = usage_report(items, usage::GroupBy::kTenant, false, 5, usage::RateCard{}, {{"t1", "alpha"}});
  EXPECT_EQ(t["groups"][0]["name"], "alpha");
  EXPECT_FALSE(t["groups"][1].contains("name"));
  EXPECT_FALSE(t.contains("items"));
}

}  // namespace
}  // namespace airlock::service
