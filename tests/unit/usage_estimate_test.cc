// airlock estimate's arithmetic: a workload description to a month, exactly,
// and a measured period scaled to 30 days.
#include "usage/estimate.h"

#include <gtest/gtest.h>

namespace airlock::usage {
namespace {

using json = nlohmann::json;

RateCard card() {
  auto c = parse_rate_card({{"vcpu_second", "0.00001"}, {"memory_gb_second", "0.000001"},
                            {"storage_gb_month", "0.02"}, {"egress_gb", "0.05"}, {"session_hour", "0.01"}});
  EXPECT_TRUE(c);
  return *c;
}

TEST(UsageEstimate, AWorkloadBecomesAMonthExactly) {
  auto w = parse_workload(json::parse(R"({
    "tasks": [{"name": "chart", "jobs_per_day": 100, "wall_ms": 2000, "cpu_ms": 1500, "peak_memory_mb": 500,
               "egress_kb": 100, "output_mb": 1, "kept_days": 30}],
    "sessions": [{"name": "analyst", "sessions_per_day": 10, "minutes": 30, "cpu_ms": 60000, "peak_memory_mb": 1000}]})"));
  ASSERT_TRUE(w) << w.error().what;
  json e = estimate_month(*w, card());
  ASSERT_EQ(e["lines"].size(), 2u);
  const json& chart = e["lines"][0];
  // 3000 jobs: 4500 CPU-s * 0.00001 = 0.045; 3000 * 0.5 GB * 2 s = 3000 GB-s * 0.000001 = 0.003;
  // 300 MB of egress * 0.05/GB = 0.015; 3000 MB kept all month = 3 GB-month * 0.02 = 0.06.
  EXPECT_EQ(chart["cost"]["cpu"], "0.045000");
  EXPECT_EQ(chart["cost"]["memory"], "0.003000");
  EXPECT_EQ(chart["cost"]["egress"], "0.015000");
  EXPECT_EQ(chart["cost"]["storage"], "0.060000");
  EXPECT_EQ(chart["cost"]["total"], "0.123000");
  // 300 sessions of 30 min = 150 h * 0.01 = 1.5; 18000 CPU-s = 0.18; 300 * 1 GB * 1800 s = 540000 GB-s = 0.54.
  const json& s = e["lines"][1];
  EXPECT_EQ(s["cost"]["session"], "1.500000");
  EXPECT_EQ(s["cost"]["cpu"], "0.180000");
  EXPECT_EQ(s["cost"]["memory"], "0.540000");
  EXPECT_EQ(e["total"]["cost"]["total"], "2.343000");
  EXPECT_EQ(e["total"]["cost"]["currency"], "GBP");
  EXPECT_GE(e["assumptions"].size(), 3u);
}

TEST(UsageEstimate, RefusesAnUnclearWorkload) {
  for (const char* bad : {R"({})", R"({"tasks": [{"jobs_per_day": -1}]})", R"({"tasks": [{"jobs_per_day": 1.5}]})",
                          R"({"tasks": [{"runs": 3}]})", R"({"tasks": {}})", R"([])", R"({"extra": 1})"})
    EXPECT_FALSE(parse_workload(json::parse(bad))) << bad;
}

TEST(UsageEstimate, AMeasuredWeekIsScaledToAMonth) {
  json total = {{"usage", {{"wall_ms", 7000}, {"cpu_ms", 700000}, {"memory_gb_s", "7.000000"},
                           {"storage_gb_h", "0.000000"}, {"egress_bytes", 0}, {"session_ms", 7 * 3'600'000}}}};
  json e = estimate_from_measured(total, 7, card());
  EXPECT_EQ(e["total"]["usage"]["cpu_ms"], 3'000'000);         // 700 s a week -> 3000 s a month
  EXPECT_EQ(e["total"]["usage"]["memory_gb_s"], "30.000000");
  EXPECT_EQ(e["total"]["cost"]["cpu"], "0.030000");
  EXPECT_EQ(e["total"]["cost"]["session"], "0.300000");        // 30 h
  EXPECT_EQ(e["measured_days"], 7);
}

}  // namespace
}  // namespace airlock::usage
