// The session and exec request bodies: defaults, caps, and clear refusals.
#include <gtest/gtest.h>

#include "sessions/session_request.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

TEST(SessionRequest, DefaultsComeFromTheCaps) {
  SessionCaps caps;
  caps.default_idle_timeout_s = 600;
  caps.max_lifetime_s = 3600;
  auto r = parse_session_request(json::object(), PolicyCaps{}, caps);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->idle_timeout_s, 600);
  EXPECT_EQ(r->max_lifetime_s, 3600);
  EXPECT_EQ(r->image, "");  // the service's default_image, chosen when it is accepted
  EXPECT_TRUE(r->snapshot.empty());
}

TEST(SessionRequest, FieldsAreCheckedAndCapped) {
  SessionCaps caps;
  caps.max_lifetime_s = 3600;
  PolicyCaps pc;
  pc.max_memory_bytes = 512ull << 20;
  auto ok = parse_session_request(
      json{{"idle_timeout_s", 5}, {"max_lifetime_s", 60}, {"inputs", {"f1"}},
           {"snapshot", "sha256:" + std::string(64, 'a')}, {"policy", {{"memory_mb", 256}, {"timeout_s", 30}}}},
      pc, caps);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->idle_timeout_s, 5);
  EXPECT_EQ(ok->policy.memory_bytes, 256ull << 20);
  EXPECT_EQ(ok->policy.timeout_ms, 30'000u);
  EXPECT_EQ(ok->input_ids, std::vector<std::string>{"f1"});

  auto refused = [&](const json& body) {
    auto r = parse_session_request(body, pc, caps);
    return r ? std::string() : r.error().message();
  };
  EXPECT_NE(refused({{"max_lifetime_s", 7200}}).find("max_lifetime_s"), std::string::npos);
  EXPECT_NE(refused({{"idle_timeout_s", 0}}).find("idle_timeout_s"), std::string::npos);
  EXPECT_NE(refused({{"policy", {{"memory_mb", 1024}}}}).find("policy.memory_mb"), std::string::npos);
  EXPECT_NE(refused({{"snapshot", "../../etc"}}).find("snapshot"), std::string::npos);
  // Destinations only within the tenant's caps (none here).
  EXPECT_NE(refused({{"policy", {{"allow", {{{"host", "api.test"}, {"port", 443}}}}}}}).find("policy.allow"),
            std::string::npos);
  EXPECT_NE(refused({{"colour", "red"}}).find("colour: unknown field"), std::string::npos);
  EXPECT_NE(refused({{"inputs", {"a", "a"}}}).find("twice"), std::string::npos);
  EXPECT_NE(refused(json::array()).find("JSON object"), std::string::npos);
}

TEST(ExecRequest, KindTimeoutAndWait) {
  auto r = parse_exec_request(json{{"code", "x = 1"}}, 60'000, 600'000);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, "python");
  EXPECT_EQ(r->timeout_ms, 60'000u);
  auto s = parse_exec_request(json{{"code", "ls"}, {"kind", "shell"}, {"timeout_s", 0.5}, {"wait_s", 10}}, 60'000, 600'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "shell");
  EXPECT_EQ(s->timeout_ms, 500u);
  EXPECT_EQ(s->wait_s, 10);
  EXPECT_FALSE(parse_exec_request(json{{"code", 1}}, 1, 1));
  EXPECT_FALSE(parse_exec_request(json::object(), 1, 1));
  EXPECT_FALSE(parse_exec_request(json{{"code", "x"}, {"kind", "ruby"}}, 1, 1));
  EXPECT_FALSE(parse_exec_request(json{{"code", "x"}, {"timeout_s", 700}}, 60'000, 600'000));
  auto over = parse_exec_request(json{{"code", "x"}, {"timeout_s", 2}}, 1'000, 1'500);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message(), "timeout_s: exceeds the tenant's limit of 1.5") << "not 1 (1500 / 1000)";
  EXPECT_FALSE(parse_exec_request(json{{"code", "x"}, {"wait_s", -1}}, 60'000, 600'000));
  EXPECT_FALSE(parse_exec_request(json{{"code", std::string(2 << 20, 'x')}}, 60'000, 600'000));
}

}  // namespace
}  // namespace airlock::service
