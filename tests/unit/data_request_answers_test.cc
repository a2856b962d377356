// Whether a job's data requests can be answered, and how the job view shows
// each request's answer: pure, from the stored record and the answer rows.
#include <gtest/gtest.h>

#include "service/data_request_answers.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

json record(const char* outcome = "input_requested") {
  return {{"outcome", outcome},
          {"data_requests",
           {{"limits", {{"requests", 4}}},
            {"requests", {{{"id", "r1"}, {"name", "a.csv"}, {"why", "w"}}, {{"id", "r2"}, {"name", "b.csv"}, {"why", "w"}}}},
            {"refused", json::array()}}}};
}

store::DataRequestAnswer refused(const char* id) {
  return {"t", "j", id, store::AnswerState::kRefused, "", "not yours", "key1", "2026-12-01T20:00:00.000Z"};
}

TEST(DataRequestAnswers, OpenRequestsOfAnInputRequestedJobCanBeAnswered) {
  EXPECT_FALSE(unanswerable("j", record(), {"r1", "r2"}, {}));
}

TEST(DataRequestAnswers, UnknownIsNotFoundAndDecidedOrNotAskingIsConflict) {
  auto unknown = unanswerable("j", record(), {"r1", "r3"}, {});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->message, "request r3 of job j not found");
  auto decided = unanswerable("j", record(), {"r2", "r1"}, {refused("r1")});
  ASSERT_TRUE(decided);
  EXPECT_EQ(decided->status, 409);
  EXPECT_EQ(decided->message, "request r1 of job j is already refused");
  auto other = unanswerable("j", record("cancelled"), {"r1"}, {});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409) << "a cancelled job's requests are recorded, not answerable";
  auto none = unanswerable("j", json{{"outcome", "succeeded"}}, {"r1"}, {});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
}

TEST(DataRequestAnswers, TheViewShowsEachAnswer) {
  store::DataRequestAnswer answered{"t", "j", "r2", store::AnswerState::kAnswered, "j2", "", "key1", "at"};
  json v = data_requests_view(record(), {refused("r1"), answered});
  EXPECT_EQ(v["requests"][0]["answer"],
            json({{"state", "refused"}, {"reason", "not yours"}, {"at", "2026-12-01T20:00:00.000Z"}, {"key_id", "key1"}}));
  EXPECT_EQ(v["requests"][1]["answer"], json({{"state", "answered"}, {"by_job", "j2"}, {"at", "at"}}));
  EXPECT_EQ(data_requests_view(record(), {})["requests"][0]["answer"], json({{"state", "open"}}));
  EXPECT_TRUE(data_requests_view(json{{"outcome", "succeeded"}}, {}).is_null());
}

TEST(DataRequestAnswers, ARefusalNeedsAReason) {
  EXPECT_FALSE(refusal_reason_problem({{"reason", "not shared with generated code"}}));
  EXPECT_TRUE(refusal_reason_problem({{"reason", ""}}));
  EXPECT_TRUE(refusal_reason_problem({{"reason", std::string(1001, 'x')}}));
  EXPECT_TRUE(refusal_reason_problem({{"reason", 3}}));
  EXPECT_TRUE(refusal_reason_problem(json::object()));
  EXPECT_TRUE(refusal_reason_problem({{"reason", "x"}, {"answer", "job"}}));
}

}  // namespace
}  // namespace airlock::service
