#include "jobs/record.h"

#include <gtest/gtest.h>

#include "jobs/policy.h"
#include "sandbox/spec.h"

using namespace airlock;

TEST(Record, HasEveryContractKey) {
  jobs::JobRecord r;
  r.id = "abc";
  r.outcome = jobs::Outcome::kSucceeded;
  r.exit_code = 0;
  auto j = jobs::to_json(r);
  for (const char* key : {"id", "owner", "command", "image", "policy", "inputs", "outputs", "outcome",
                          "reason", "exit_code", "signal", "limits_hit", "usage", "stdout", "stderr",
                          "started_at", "finished_at", "cleanup", "sandbox"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["outcome"], "succeeded");
  EXPECT_TRUE(j["signal"].is_null());
  for (const char* key : {"wall_ms", "cpu_ms", "peak_memory_bytes"}) EXPECT_TRUE(j["usage"].contains(key));
  for (const char* key : {"name", "digest"}) EXPECT_TRUE(j["image"].contains(key));
  for (const char* key : {"text", "bytes", "truncated"}) EXPECT_TRUE(j["stdout"].contains(key));
  for (const char* key : {"timeout_ms", "cpu_time_ms", "memory_bytes", "pids", "network", "env"})
    EXPECT_TRUE(j["policy"].contains(key)) << key;
}

TEST(Record, ProgramOutputThatIsNotUtf8IsStoredSafely) {
  jobs::JobRecord r;
  r.stdout_stream.text = std::string("ok \xff\xfe bad \x00 end", 15);
  std::string text = jobs::record_text(r);
  auto back = nlohmann::json::parse(text);
  std::string got = back["stdout"]["text"];
  EXPECT_NE(got.find("ok "), std::string::npos);
  EXPECT_NE(got.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD replaced the bad bytes
}

TEST(Record, OutputVerdicts) {
  jobs::JobRecord r;
  workspace::ManifestEntry good{"chart.png", 10, "aa", "png", true, ""};
  workspace::ManifestEntry bad{"link", 0, "", "", false, "symlink"};
  r.outputs = {good, bad};
  auto j = jobs::to_json(r);
  EXPECT_EQ(j["outputs"][0]["verdict"], "accepted");
  EXPECT_EQ(j["outputs"][1]["verdict"], "rejected");
  EXPECT_EQ(j["outputs"][1]["reason"], "symlink");
}

TEST(Record, LimitsAreListedOnce) {
  jobs::JobRecord r;
  r.add_limit("pids");
  r.add_limit("pids");
  r.add_limit("stdout");
  EXPECT_EQ(r.limits_hit, (std::vector<std::string>{"pids", "stdout"}));
}

TEST(Record, TimesAreRfc3339Utc) {
  std::string t = jobs::now_rfc3339();
  ASSERT_EQ(t.size(), 24u) << t;
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

TEST(Environment, MinimalSetAndUserOverrides) {
  jobs::JobPolicy p;
  p.env = {{"HOME", "/tmp"}, {"API_MODE", "test"}};
  auto env = jobs::job_environment(p);
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/tmp"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "API_MODE=test"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "PATH=/usr/local/bin:/usr/bin:/bin"), env.end());
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](auto& e) { return e.rfind("HOME=", 0) == 0; }), 1);
  EXPECT_EQ(env.size(), jobs::base_environment().size() + 1);
}

TEST(IdMap, NeverMapsToHostRoot) {
  sandbox::IdMap ids;
  EXPECT_EQ(ids.uid_map(1000), "0 3000000 1\n1000 3000001 1\n");
  EXPECT_EQ(ids.host_uid_of_job(), 3000001u);
  EXPECT_DEATH(sandbox::IdMap{0}.uid_map(1000), "invariant");
}
