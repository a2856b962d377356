// airlock usage's table and CSV: every group and the total, CSV cells
// quoted per RFC 4180, and no formula a spreadsheet would run.
#include "usage/usage_table.h"

#include <gtest/gtest.h>

namespace airlock::usage {
namespace {

using json = nlohmann::json;

json report() {
  json g = {{"key", "2026-11-30"}, {"jobs", 3}, {"sessions", 1},
            {"usage", {{"wall_ms", 1200}, {"cpu_ms", 800}, {"memory_gb_s", "0.000100"}, {"storage_gb_h", "0.000000"},
                       {"egress_bytes", 0}, {"session_ms", 60000}}},
            {"cost", {{"currency", "GBP"}, {"total", "0.000175"}}}};
  json t = g;
  t["key"] = "total";
  return {{"groups", {g}}, {"total", t}};
}

TEST(UsageTable, ShowsEachGroupAndTheTotal) {
  std::string table = usage_table(report());
  EXPECT_NE(table.find("key"), std::string::npos);
  EXPECT_NE(table.find("2026-11-30"), std::string::npos);
  EXPECT_NE(table.find("0.000175 GBP"), std::string::npos);
  EXPECT_NE(table.find("total"), std::string::npos);
  std::string csv = usage_csv(report());
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")), "key,jobs,sessions,wall_ms,cpu_ms,memory_gb_s,storage_gb_h,egress_bytes,session_ms,cost");
  EXPECT_NE(csv.find("2026-11-30,3,1,1200,800,0.000100,0.000000,0,60000,0.000175 GBP\r\n"), std::string::npos) << csv;
}

TEST(UsageTable, CsvCellsAreQuotedAndFormulasDefused) {
  EXPECT_EQ(csv_cell("plain"), "plain");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "\"'@SUM(A1)\"");
  json r = report();
  r["groups"][0]["key"] = "t1";
  r["groups"][0]["name"] = "evil\x1b[2J";
  EXPECT_EQ(usage_table(r).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace airlock::usage
