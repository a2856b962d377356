// The rate card applied exactly (integers of 1e-12 GBP, never floating
// point), usage figures read from records, and their grouping.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "usage/ledger.h"
#include "usage/money.h"
#include "usage/rate_card.h"

namespace airlock::usage {
namespace {

using json = nlohmann::json;

Pico pico(const char* text) {
  auto v = parse_decimal(text, "t");
  EXPECT_TRUE(v) << text;
  return v ? *v : -1;
}

TEST(UsageMoney, ParsesDecimalsExactly) {
  EXPECT_TRUE(pico("0.0000125") == 12'500'000);
  EXPECT_TRUE(pico("1") == kPicoPerUnit);
  EXPECT_TRUE(pico("0.000000000001") == 1);
  EXPECT_TRUE(pico("12.5") == 12 * kPicoPerUnit + kPicoPerUnit / 2);
  EXPECT_TRUE(pico(".5") == kPicoPerUnit / 2);
}

TEST(UsageMoney, RefusesWhatIsNotAnExactDecimal) {
  for (const char* bad : {"", "-1", "1e-5", "0.0000000000001", "1.2.3", "abc", "2000000", ".", "0,5", " 1"}) {
    auto v = parse_decimal(bad, "rates.x");
    ASSERT_FALSE(v) << bad;
    EXPECT_EQ(v.error().kind, ErrorKind::kInvalid);
    EXPECT_NE(v.error().what.find("rates.x"), std::string::npos) << v.error().what;
  }
}

TEST(UsageMoney, FormatsRoundingHalfUp) {
  EXPECT_EQ(format_decimal(12'500'000, 6), "0.000013");   // 0.0000125
  EXPECT_EQ(format_decimal(12'499'999, 6), "0.000012");
  EXPECT_EQ(format_decimal(kPicoPerUnit / 2, 0), "1");
  EXPECT_EQ(format_decimal(3 * kPicoPerUnit + 1, 12), "3.000000000001");
  EXPECT_EQ(format_decimal(0, 6), "0.000000");
}

TEST(UsageMoney, ScaleRoundsHalfUpAndSaturates) {
  EXPECT_TRUE(scale(1, 1, 2) == 1);
  EXPECT_TRUE(scale(1, 1, 3) == 0);
  EXPECT_TRUE(scale(2, 1, 3) == 1);
  unsigned __int128 huge = ~static_cast<unsigned __int128>(0);
  EXPECT_TRUE(scale(huge, kPicoPerUnit, 1) > 0);  // saturated, not wrapped
}

TEST(UsageRateCard, AppliesEachRateExactly) {
  auto card = parse_rate_card({{"vcpu_second", "0.000011"},
                               {"memory_gb_second", "0.0000012"},
                               {"storage_gb_month", "0.02"},
                               {"egress_gb", "0.07"},
                               {"session_hour", "0.01"}});
  ASSERT_TRUE(card);
  Figures f;
  f.cpu_ms = 1500;                                                        // 1.5 vCPU-s
  f.memory_byte_ms = static_cast<unsigned __int128>(2'000'000'000) * 3000;  // 6 GB-s
  f.storage_byte_ms = static_cast<unsigned __int128>(1'000'000'000) * 30 * 86'400'000;  // 1 GB-month
  f.egress_bytes = 1'500'000'000;                                         // 1.5 GB
  f.session_ms = 90 * 60'000;                                             // 1.5 h
  Cost c = cost_of(f, *card);
  EXPECT_TRUE(c.cpu == pico("0.0000165"));
  EXPECT_TRUE(c.memory == pico("0.0000072"));
  EXPECT_TRUE(c.storage == pico("0.02"));
  EXPECT_TRUE(c.egress == pico("0.105"));
  EXPECT_TRUE(c.session == pico("0.015"));
  EXPECT_TRUE(c.total() == pico("0.1400237"));
  json j = to_json(c, *card);
  EXPECT_EQ(j["currency"], "GBP");
  EXPECT_EQ(j["total"], "0.140024");  // 0.1400237 rounded half up to 6 places
  EXPECT_EQ(j["cpu"], "0.000017");    // 0.0000165
}

TEST(UsageRateCard, TenTimesAPennyTenthIsExactlyAPenny) {
  // 0.001 ten times: a double sum gives 0.010000000000000002.
  auto card = parse_rate_card({{"vcpu_second", "0.001"}});
  ASSERT_TRUE(card);
  std::vector<Item> items;
  for (int i = 0; i < 10; ++i) {
    Item it;
    it.tenant = "t";
    it.figures.cpu_ms = 1000;
    items.push_back(it);
  }
  auto groups = group_items(items, GroupBy::kTenant, *card);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(groups[0].cost.cpu == pico("0.01"));
  EXPECT_EQ(to_json(groups[0].cost, *card)["total"], "0.010000");
}

TEST(UsageRateCard, RefusesUnknownKeysAndBadCurrencies) {
  EXPECT_FALSE(parse_rate_card({{"vcpu_hour", "1"}}));
  EXPECT_FALSE(parse_rate_card({{"currency", "gbp"}}));
  EXPECT_FALSE(parse_rate_card({{"currency", "<script>"}}));
  EXPECT_FALSE(parse_rate_card({{"egress_gb", "0.1e1"}}));
  auto eur = parse_rate_card({{"currency", "EUR"}});
  ASSERT_TRUE(eur);
  EXPECT_EQ(eur->currency, "EUR");
  EXPECT_TRUE(eur->vcpu_second == RateCard{}.vcpu_second);  // the rest stays as it was
  EXPECT_EQ(to_json(RateCard{})["currency"], "GBP");
  EXPECT_EQ(to_json(RateCard{})["vcpu_second"], "0.000011000000");
}

TEST(UsageTime, ParsesRfc3339Utc) {
  EXPECT_EQ(parse_time_ms("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(parse_time_ms("1970-01-02T00:00:00Z"), 86'400'000);
  EXPECT_EQ(parse_time_ms("2026-11-30T03:00:00.123Z"), 1796007600123);
  EXPECT_EQ(day_of(1796007600123), "2026-11-30");
  for (const char* bad : {"", "2026-11-30 03:00:00Z", "2026-11-30T03:00:00+01:00", "2026-13-01T00:00:00Z",
                          "2026-11-30T03:00:00.Z", "2026-11-30T03:00:0xZ"})
    EXPECT_FALSE(parse_time_ms(bad)) << bad;
}

TEST(UsageItems, AJobCountsItsRecordsFigures) {
  json record = {{"image", {{"name", "python-data"}}},
                 {"usage", {{"wall_ms", 2000}, {"cpu_ms", 700}, {"peak_memory_bytes", 500'000'000}}},
                 {"network", {{{"bytes_up", 100}, {"bytes_down", 5000}}, {{"bytes_up", 7}, {"allowed", false}}}}};
  Item it = job_item("j1", "t1", "2026-11-30T23:59:59.999Z", "cancelled", record);
  EXPECT_EQ(it.image, "python-data");
  EXPECT_EQ(it.day, "2026-11-30");
  EXPECT_EQ(it.outcome, "cancelled");
  EXPECT_EQ(it.figures.wall_ms, 2000u);
  EXPECT_EQ(it.figures.cpu_ms, 700u);
  EXPECT_TRUE(it.figures.memory_byte_ms == static_cast<unsigned __int128>(500'000'000) * 2000);
  EXPECT_EQ(it.figures.egress_bytes, 5107u);
}

TEST(UsageItems, MalformedFiguresCountAsZero) {
  json record = {{"image", "x"},
                 {"usage", {{"wall_ms", "1000"}, {"cpu_ms", -5}, {"peak_memory_bytes", 1e300}}},
                 {"network", {{{"bytes_up", nullptr}}, 3}}};
  Item it = job_item("j", "t", "not a time", "failed", record);
  EXPECT_EQ(it.image, "host");
  EXPECT_EQ(it.day, "unknown");
  EXPECT_EQ(it.figures.wall_ms, 0u);
  EXPECT_EQ(it.figures.cpu_ms, 0u);
  EXPECT_EQ(it.figures.egress_bytes, 0u);
  EXPECT_FALSE(job_item("j", "t", "", "failed", json::array()).figures.wall_ms);
}

TEST(UsageItems, ASessionsIdleTimeCounts) {
  // Open for an hour, one call of 200 ms CPU: all of the hour counts.
  Item it = session_item("s", "t", "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "idle_timeout", "",
                         {{"cpu_ms", 200}, {"peak_memory_bytes", 1000}});
  EXPECT_EQ(it.image, "host");
  EXPECT_EQ(it.figures.session_ms, 3'600'000u);
  EXPECT_EQ(it.figures.wall_ms, 3'600'000u);
  EXPECT_EQ(it.figures.cpu_ms, 200u);
  EXPECT_TRUE(it.figures.memory_byte_ms == static_cast<unsigned __int128>(1000) * 3'600'000);
  Cost c = cost_of(it.figures, RateCard{});
  EXPECT_TRUE(c.session == RateCard{}.session_hour);
  EXPECT_EQ(it.figures.egress_bytes, 0u);
  Item net = session_item("s", "t", "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "closed", "",
                          {{"cpu_ms", 200}, {"egress_bytes", 5120}});
  EXPECT_EQ(net.figures.egress_bytes, 5120u);
}

TEST(UsageItems, StorageIsSplitByDayAndClippedToTheWindow) {
  int64_t day2 = *parse_time_ms("2026-11-30T00:00:00Z");
  int64_t hour = 3'600'000;
  auto items = storage_items("sha", "t", "img", 1000, day2 - hour, day2 + 2 * hour, day2 - 10 * hour, day2 + hour);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].day, "2026-11-29");
  EXPECT_TRUE(items[0].figures.storage_byte_ms == static_cast<unsigned __int128>(1000) * hour);
  EXPECT_EQ(items[1].day, "2026-11-30");
  EXPECT_TRUE(items[1].figures.storage_byte_ms == static_cast<unsigned __int128>(1000) * hour);  // clipped
  EXPECT_TRUE(storage_items("sha", "t", "img", 1000, day2, day2 + hour, day2 + hour, day2 + 2 * hour).empty());
  EXPECT_EQ(to_json(items[0].figures)["storage_gb_h"], "0.000001");
}

TEST(UsageGroups, GroupsSumTheirItemsAndTheTotalSumsTheGroups) {
  std::vector<Item> items;
  auto add = [&](const char* tenant, const char* day, const char* image, uint64_t cpu, ItemKind kind) {
    Item it;
    it.kind = kind;
    it.tenant = tenant;
    it.day = day;
    it.image = image;
    it.figures.cpu_ms = cpu;
    it.figures.wall_ms = cpu * 2;
    items.push_back(it);
  };
  add("a", "2026-11-29", "host", 100, ItemKind::kJob);
  add("a", "2026-11-30", "py", 200, ItemKind::kSession);
  add("b", "2026-11-30", "py", 400, ItemKind::kJob);
  add("b", "2026-11-30", "py", 0, ItemKind::kStorage);
  auto by_tenant = group_items(items, GroupBy::kTenant, RateCard{});
  ASSERT_EQ(by_tenant.size(), 2u);
  EXPECT_EQ(by_tenant[0].key, "a");
  EXPECT_EQ(by_tenant[0].figures.cpu_ms, 300u);
  EXPECT_EQ(by_tenant[0].jobs, 1u);
  EXPECT_EQ(by_tenant[0].sessions, 1u);
  EXPECT_EQ(by_tenant[1].jobs, 1u);
  auto by_day = group_items(items, GroupBy::kDay, RateCard{});
  ASSERT_EQ(by_day.size(), 2u);
  EXPECT_EQ(by_day[1].figures.cpu_ms, 600u);
  auto by_image = group_items(items, GroupBy::kImage, RateCard{});
  ASSERT_EQ(by_image.size(), 2u);
  for (const auto* g : {&by_tenant, &by_day, &by_image}) {
    Group t = total_of(*g);
    EXPECT_EQ(t.figures.cpu_ms, 700u);
    EXPECT_EQ(t.figures.wall_ms, 1400u);
    EXPECT_TRUE(t.cost.total() == scale(700, RateCard{}.vcpu_second, 1000));
  }
  EXPECT_FALSE(parse_group_by("week"));
  EXPECT_EQ(*parse_group_by("image"), GroupBy::kImage);
}

}  // namespace
}  // namespace airlock::usage
