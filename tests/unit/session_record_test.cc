// The record of a closed session: calls without their outputs, usage summed.
#include <gtest/gtest.h>

#include "sessions/session_service.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

TEST(SessionRecord, KeepsWhatRanAndHowItEndedNotWhatItPrinted) {
  store::SessionRow row;
  row.id = "s1";
  row.tenant_id = "t1";
  row.key_id = "k1";
  row.created_at = "2026-11-30T00:00:00.000Z";
  row.request_json = R"({"snapshot":"sha256:ab","idle_timeout_s":600})";
  json calls = json::array({
      {{"id", "x1"}, {"code", "print(secret)"}, {"status", "ok"}, {"stdout", "hunter2\n"}, {"value", "'v'"},
       {"usage", {{"cpu_ms", 30}, {"peak_memory_bytes", 1000}}}},
      {{"id", "x2"}, {"code", "1/0"}, {"status", "error"}, {"stderr", "trace"},
       {"usage", {{"cpu_ms", 12}, {"peak_memory_bytes", 4000}}}},
  });
  json events = json::array({{{"event", "upload"}, {"path", "a.csv"}}});
  json r = session_record(row, "2026-11-30T00:10:00.000Z", "idle_timeout", calls, events);
  EXPECT_EQ(r["kind"], "session");
  EXPECT_EQ(r["close_reason"], "idle_timeout");
  EXPECT_EQ(r["snapshot"], "sha256:ab");
  ASSERT_EQ(r["calls"].size(), 2u);
  EXPECT_EQ(r["calls"][0]["code"], "print(secret)");
  EXPECT_FALSE(r["calls"][0].contains("stdout"));
  EXPECT_FALSE(r["calls"][0].contains("value"));
  EXPECT_FALSE(r["calls"][1].contains("stderr"));
  EXPECT_EQ(r["usage"]["calls"], 2);
  EXPECT_EQ(r["usage"]["cpu_ms"], 42);
  EXPECT_EQ(r["usage"]["peak_memory_bytes"], 4000);
  EXPECT_EQ(r["events"][0]["path"], "a.csv");
}

TEST(SessionRecord, AnUnreadableRequestStillGivesARecord) {
  store::SessionRow row;
  row.id = "s2";
  row.request_json = "not json";
  json r = session_record(row, "t", "service_restarted", json::array({{{"status", "ok"}, {"usage", "odd"}}}),
                          json::array());
  EXPECT_EQ(r["snapshot"], "");
  EXPECT_EQ(r["usage"]["cpu_ms"], 0);
}

}  // namespace
}  // namespace airlock::service
