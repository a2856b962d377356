// The data requests of a session (src/sessions/session_data_requests.h),
// without a sandbox: what a call's lines become, ids across calls, the
// session's limit, answers and refusals, and the status a call ends with.
#include "sessions/session_data_requests.h"

#include <gtest/gtest.h>

namespace airlock::service {
namespace {

jobs::CallResult sent(std::vector<std::string> lines) {
  jobs::CallResult r;
  r.status = "ok";
  for (auto& l : lines) r.data_requests.push_back({l, l.size()});
  return r;
}

TEST(SessionDataRequests, IdsRunAcrossCallsAndBadLinesAreRefusedWithTheirReason) {
  SessionDataRequests s;
  auto first = s.admit("x1", sent({R"({"name": "a.csv", "why": "first"})", "not json",
                                   R"({"name": "b.csv", "why": "second", "params": {"year": 2025}})"}));
  EXPECT_EQ(first.ids, (std::vector<std::string>{"r1", "r2"}));
  ASSERT_EQ(first.refused.size(), 1u);
  EXPECT_FALSE(first.refused[0].reason.empty());
  EXPECT_EQ(first.refused[0].bytes, 8u);
  auto second = s.admit("x2", sent({R"({"name": "../etc/passwd", "why": "path"})", R"({"name": "c", "why": "c"})"}));
  EXPECT_EQ(second.ids, (std::vector<std::string>{"r3"}));  // a bad name is refused, the id not used up
  ASSERT_EQ(second.refused.size(), 1u);
  EXPECT_NE(second.refused[0].reason.find("name"), std::string::npos) << second.refused[0].reason;
  auto j = s.request_json("r2");
  EXPECT_EQ(j["params"]["year"], 2025);
  EXPECT_EQ(j["call_id"], "x1");
  EXPECT_EQ(j["answer"]["state"], "open");
}

TEST(SessionDataRequests, TheHostsLimitsHoldWhateverTheEngineOrKernelPassedOn) {
  SessionDataRequests s;  // 4 a call, 4096 bytes a request
  jobs::CallResult r = sent({});
  for (int i = 0; i < 6; ++i) r.data_requests.push_back({R"({"name": "n", "why": "w"})", 24});
  r.data_requests.push_back({std::string(5000, 'x'), 5000});  // over the size, yet passed on
  r.requests_over_lines = 10;
  r.requests_over_bytes = 240;
  auto c = s.admit("x1", r);
  EXPECT_EQ(c.ids.size(), 4u);
  ASSERT_EQ(c.refused.size(), 1u);
  EXPECT_EQ(c.refused[0].lines, 13u);  // 2 + the long one + 10 the kernel counted
  EXPECT_EQ(c.refused[0].bytes, 240u + 48u + 5000u);
  EXPECT_EQ(c.refused[0].reason, requests::beyond_limit_reason({}));
  jobs::CallResult big = sent({});
  big.data_requests.push_back({std::nullopt, 9u << 20});
  auto b = s.admit("x2", big);
  ASSERT_EQ(b.refused.size(), 1u);
  EXPECT_EQ(b.refused[0].bytes, 9u << 20);
  EXPECT_NE(b.refused[0].reason.find("longer than 4096 bytes"), std::string::npos);
}

TEST(SessionDataRequests, TheThirtyThirdIsRefusedForTheSessionsLimit) {
  SessionDataRequests s;
  for (int call = 0; call < 8; ++call) {
    auto c = s.admit("x" + std::to_string(call), sent(std::vector<std::string>(4, R"({"name": "n", "why": "w"})")));
    ASSERT_EQ(c.ids.size(), 4u);
  }
  EXPECT_EQ(s.size(), 32u);
  auto over = s.admit("x9", sent({R"({"name": "n", "why": "w"})"}));
  EXPECT_TRUE(over.ids.empty());
  ASSERT_EQ(over.refused.size(), 1u);
  EXPECT_NE(over.refused[0].reason.find("32 data requests, its limit"), std::string::npos);
}

TEST(SessionDataRequests, AnswersAndRefusalsHappenOnceAndAllOrNone) {
  SessionDataRequests s;
  s.admit("x1", sent({R"({"name": "a", "why": "w"})", R"({"name": "b", "why": "w"})"}));
  // One unknown id: nothing is answered.
  auto bad = s.answer({"r1", "r5"}, "x2", "k1", "t");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(s.request_json("r1")["answer"]["state"], "open");
  ASSERT_TRUE(s.answer({"r1"}, "x2", "k1", "t1"));
  EXPECT_EQ(s.answer({"r1"}, "x3", "k1", "t2").error().kind, ErrorKind::kRefused);
  EXPECT_EQ(s.refuse("r1", "no", "k1", "t2").error().kind, ErrorKind::kRefused);
  ASSERT_TRUE(s.refuse("r2", "not for you", "k2", "t3"));
  EXPECT_EQ(s.refuse("r2", "again", "k2", "t4").error().kind, ErrorKind::kRefused);
  EXPECT_EQ(s.refuse("r3", "none", "k2", "t4").error().kind, ErrorKind::kNotFound);
  auto r1 = s.request_json("r1")["answer"];
  EXPECT_EQ(r1, (nlohmann::json{{"state", "answered"}, {"by_call", "x2"}, {"at", "t1"}, {"key_id", "k1"}}));
  auto r2 = s.request_json("r2")["answer"];
  EXPECT_EQ(r2["reason"], "not for you");
  auto known = s.known();
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known[0].state, "answered");
  EXPECT_EQ(known[1].state, "refused");
  EXPECT_EQ(known[1].reason, "not for you");
}

TEST(SessionDataRequests, ACallsStatusSaysWhetherItAsked) {
  EXPECT_EQ(status_after_requests("ok", 1), "input_requested");
  EXPECT_EQ(status_after_requests("error", 2), "input_requested");
  EXPECT_EQ(status_after_requests("input_requested", 1), "input_requested");
  EXPECT_EQ(status_after_requests("input_requested", 0), "error");  // it asked; nothing was accepted
  EXPECT_EQ(status_after_requests("ok", 0), "ok");
  // Statuses that say more keep their word: the requests are still listed.
  EXPECT_EQ(status_after_requests("timed_out", 3), "timed_out");
  EXPECT_EQ(status_after_requests("interrupted", 1), "interrupted");
  EXPECT_EQ(status_after_requests("kernel_died", 1), "kernel_died");
}

TEST(SessionDataRequests, JoinAnswersReplacesOnlyMatchingIds) {
  nlohmann::json call = nlohmann::json::parse(R"([{"id": "r1", "answer": {"state": "open"}}, {"id": "r2"}])");
  nlohmann::json session = nlohmann::json::parse(R"([{"id": "r2", "answer": {"state": "refused", "reason": "x"}}])");
  join_answers(call, session);
  EXPECT_EQ(call[0]["answer"]["state"], "open");
  EXPECT_EQ(call[1]["answer"]["reason"], "x");
  nlohmann::json not_a_list = "garbage";
  join_answers(not_a_list, session);  // stored JSON of any shape: left as it is
  EXPECT_EQ(not_a_list, "garbage");
}

}  // namespace
}  // namespace airlock::service
