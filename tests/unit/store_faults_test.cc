// Pure: what the service does when the store fails (docs/store.md "When the
// store fails"): which failures are tried again, the waits between tries,
// when a node may judge other nodes' heartbeats, what a client is told, and
// when an MCP tool sends a call again.
#include <gtest/gtest.h>

#include "cluster/store_contact.h"
#include "mcp/retry.h"
#include "service/api_error.h"
#include "service/store_retry.h"

namespace airlock {
namespace {

using namespace std::chrono_literals;

TEST(StoreRetry, TheStoresOwnFailuresAreTriedAgainRefusalsAreNot) {
  EXPECT_TRUE(service::store_may_pass_later(Error{"sql: COMMIT: no connection to the server", 0, ErrorKind::kUnavailable}));
  EXPECT_TRUE(service::store_may_pass_later(Error{"write the record", ENOSPC, ErrorKind::kInternal}));
  EXPECT_TRUE(service::store_may_pass_later(Error{"sql: ...: disk I/O error", 0, ErrorKind::kInternal}));
  EXPECT_FALSE(service::store_may_pass_later(Error{"job 'x' already finished", 0, ErrorKind::kRefused}));
  EXPECT_FALSE(service::store_may_pass_later(Error{"no job 'x'", 0, ErrorKind::kNotFound}));
  EXPECT_FALSE(service::store_may_pass_later(Error{"the record is not JSON", 0, ErrorKind::kInvalid}));
}

TEST(StoreRetry, WaitsDoubleFromFiftyMillisecondsToOneSecond) {
  EXPECT_EQ(service::store_retry_wait(1), 50ms);
  EXPECT_EQ(service::store_retry_wait(2), 100ms);
  EXPECT_EQ(service::store_retry_wait(5), 800ms);
  EXPECT_EQ(service::store_retry_wait(6), 1000ms);
  EXPECT_EQ(service::store_retry_wait(1000), 1000ms);
  EXPECT_EQ(service::store_retry_wait(0), 50ms);
}

TEST(StoreRetry, ACallIsTriedAgainUntilItPassesIsRefusedOrTheServiceStops) {
  int calls = 0;
  auto away_twice = [&]() -> Status {
    return ++calls <= 2 ? fail(ErrorKind::kUnavailable, "sql: BEGIN: no connection to the server") : Status{};
  };
  EXPECT_TRUE(service::until_the_store_answers(away_twice, [] { return false; }));
  EXPECT_EQ(calls, 3);

  calls = 0;
  auto refused = [&]() -> Status { return ++calls, fail(ErrorKind::kRefused, "job 'x' already finished"); };
  auto r = service::until_the_store_answers(refused, [] { return false; });
  EXPECT_FALSE(r);
  EXPECT_EQ(calls, 1);  // a refusal is the answer

  calls = 0;
  int asked = 0;
  auto always_away = [&]() -> Status { return ++calls, fail(ErrorKind::kUnavailable, "no connection"); };
  auto stopped = service::until_the_store_answers(always_away, [&] { return ++asked >= 3; });
  EXPECT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(calls, 3);  // gave up when the service stopped
}

TEST(StoreContact, ANodeJudgesHeartbeatsOnlyAfterAWholeLeaseInTouch) {
  cluster::StoreContact c;
  auto t0 = cluster::StoreContact::Clock::now();
  EXPECT_FALSE(c.unbroken_for(1500ms, t0));  // never in touch
  c.saw(true, t0);
  EXPECT_FALSE(c.unbroken_for(1500ms, t0 + 1499ms));
  EXPECT_TRUE(c.unbroken_for(1500ms, t0 + 1500ms));
  c.saw(true, t0 + 1600ms);  // more successes do not move the start
  EXPECT_TRUE(c.unbroken_for(1500ms, t0 + 1700ms));
  // An outage: every heartbeat in the store is old now; the clock starts again at the next success.
  c.saw(false, t0 + 2000ms);
  EXPECT_FALSE(c.unbroken_for(1500ms, t0 + 9000ms));
  c.saw(true, t0 + 9000ms);
  EXPECT_FALSE(c.unbroken_for(1500ms, t0 + 10000ms));
  EXPECT_TRUE(c.unbroken_for(1500ms, t0 + 10500ms));
}

TEST(ApiErrorText, AnInternalErrorTellsTheClientAReferenceAndLogsTheDetail) {
  std::vector<nlohmann::json> logged;
  service::set_api_error_log([&](const nlohmann::json& j) { logged.push_back(j); });
  auto e = service::internal("sql: SELECT id FROM api_keys WHERE secret_sha256 = $1: no connection to the server").error();
  EXPECT_EQ(e.status, 500);
  EXPECT_EQ(e.code, "internal");
  EXPECT_EQ(e.message.find("SELECT"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("reference "), std::string::npos) << e.message;
  service::log_api_error(e);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0]["detail"].get<std::string>().find("api_keys"), std::string::npos);
  // The reference ties the answer to its log line.
  std::string ref = e.message.substr(e.message.find("reference ") + 10);
  ref = ref.substr(0, ref.find(' '));
  EXPECT_NE(logged[0]["detail"].get<std::string>().find("[" + ref + "]"), std::string::npos);
  service::set_api_error_log({});
}

TEST(ApiErrorText, TheStoreAwayIs503StoreUnavailableWithRetryAfterAndNoInternalText) {
  auto e = service::store_failure(Error{"sql: SELECT ... FROM jobs: no connection to the server", 0,
                                        ErrorKind::kUnavailable}).error();
  EXPECT_EQ(e.status, 503);
  EXPECT_EQ(e.code, "store_unavailable");
  EXPECT_EQ(e.message.find("sql"), std::string::npos) << e.message;
  EXPECT_EQ(service::retry_after_s(e), 2);
  auto full = service::store_failure(Error{"write", ENOSPC, ErrorKind::kInternal}).error();
  EXPECT_EQ(full.status, 507);
  auto other = service::store_failure(Error{"sql: ...: malformed", 0, ErrorKind::kInternal}).error();
  EXPECT_EQ(other.status, 500);
  EXPECT_EQ(other.message.find("malformed"), std::string::npos);
  EXPECT_EQ(service::retry_after_s(other), 0);
}

api::Response answer(int status, const char* retry_after = nullptr) {
  api::Response r;
  r.status = status;
  if (retry_after) r.headers["retry-after"] = retry_after;
  return r;
}

TEST(McpRetry, A429AndA503WithRetryAfterAreSentAgainABoundedNumberOfTimes) {
  EXPECT_EQ(mcp::retry_wait(answer(503, "2"), 1), 2000ms);
  EXPECT_EQ(mcp::retry_wait(answer(429, "1"), 2), 1000ms);
  EXPECT_EQ(mcp::retry_wait(answer(429), 1), 1000ms);  // no hint: 1 s, doubling
  EXPECT_EQ(mcp::retry_wait(answer(429), 2), 2000ms);
  EXPECT_EQ(mcp::retry_wait(answer(503, "3600"), 1), mcp::kMaxRetryWait);
  EXPECT_EQ(mcp::retry_wait(answer(503, "2"), mcp::kMaxRetries + 1), std::nullopt);
}

TEST(McpRetry, OtherAnswersAreTheToolsResult) {
  EXPECT_EQ(mcp::retry_wait(answer(503), 1), std::nullopt);  // stopping: no hint
  EXPECT_EQ(mcp::retry_wait(answer(503, "soon"), 1), std::nullopt);
  EXPECT_EQ(mcp::retry_wait(answer(500, "1"), 1), std::nullopt);
  EXPECT_EQ(mcp::retry_wait(answer(200), 1), std::nullopt);
  EXPECT_EQ(mcp::retry_wait(answer(0), 1), std::nullopt);  // no answer at all
}

}  // namespace
}  // namespace airlock
