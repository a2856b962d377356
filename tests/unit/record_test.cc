#include "jobs/record.h"

#include <gtest/gtest.h>

#include <random>

#include "base/base64.h"
#include "jobs/outputs.h"
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
  for (const char* key : {"text", "encoding", "bytes", "truncated"}) EXPECT_TRUE(j["stdout"].contains(key));
  for (const char* key : {"timeout_ms", "cpu_time_ms", "memory_bytes", "pids", "network", "env"})
    EXPECT_TRUE(j["policy"].contains(key)) << key;
}

TEST(Record, ProgramOutputThatIsNotUtf8IsStoredExactlyAsBase64) {
  jobs::JobRecord r;
  const std::string raw("ok \xff\xfe bad \x00 end", 15);
  r.stdout_stream.text = raw;
  r.stderr_stream.text = "plain\n";
  auto back = nlohmann::json::parse(jobs::record_text(r));
  EXPECT_EQ(back["stdout"]["encoding"], "base64");
  EXPECT_EQ(jobs::stream_bytes(back["stdout"]), raw);
  EXPECT_EQ(back["stderr"]["encoding"], "utf-8");
  EXPECT_EQ(back["stderr"]["text"], "plain\n");  // text stays readable in the record
}

// The record is bounded by the caps: a capped stream takes at most its
// base64 size plus kStreamTextSlack, however hostile the bytes (\x01 is six
// bytes as a JSON escape), and decodes back to exactly what was captured.
TEST(Record, StreamsTakeAtMostTheirBase64SizePlusSlack) {
  constexpr size_t kCap = 1 << 20;
  std::mt19937_64 rng(11);
  std::string random(kCap, '\0');
  for (char& c : random) c = static_cast<char>(rng());
  const std::string controls(kCap, '\x01');
  std::string quotes;  // valid UTF-8, every byte escaped in JSON
  while (quotes.size() < kCap) quotes += "\"\\\n";
  for (const std::string& bytes : {random, controls, quotes}) {
    jobs::JobRecord r;
    r.stdout_stream.text = bytes;
    r.stderr_stream.text = bytes;
    const std::string text = jobs::record_text(r);
    EXPECT_LE(text.size(), 2 * (base64_size(kCap) + jobs::kStreamTextSlack) + (16 << 10));
    auto back = nlohmann::json::parse(text);
    EXPECT_EQ(back["stdout"]["encoding"], "base64");
    EXPECT_EQ(jobs::stream_bytes(back["stdout"]), bytes);
    EXPECT_EQ(jobs::stream_bytes(back["stderr"]), bytes);
  }
}

TEST(Record, TextWithSomeEscapesStaysText) {
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "row " + std::to_string(i) + "\t\"q\"\n";
  EXPECT_EQ(jobs::stream_encoding(lines), jobs::StreamEncoding::kUtf8);
  EXPECT_EQ(jobs::stream_encoding("1\n2\n3\n"), jobs::StreamEncoding::kUtf8);  // within the slack
  EXPECT_EQ(jobs::stream_encoding(std::string(100, '\x1b')), jobs::StreamEncoding::kUtf8);
  EXPECT_EQ(jobs::stream_encoding(std::string(10000, '\x1b')), jobs::StreamEncoding::kBase64);
  EXPECT_EQ(jobs::stream_encoding("caf\xc3\xa9"), jobs::StreamEncoding::kUtf8);
  EXPECT_EQ(jobs::stream_encoding("caf\xc3"), jobs::StreamEncoding::kBase64);
}

TEST(Record, JsonEscapedSizeIsWhatTheSerializerWrites) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    std::string s;
    for (int i = 0; i < 64; ++i) s += static_cast<char>(rng() % 0x80);  // ASCII: always valid
    s += "\xc3\xa9\xe2\x82\xac";
    EXPECT_EQ(jobs::json_escaped_size(s) + 2, nlohmann::json(s).dump().size()) << round;
  }
}

TEST(Record, StreamBytesReadsOlderRecordsAndRefusesMalformedOnes) {
  using nlohmann::json;
  EXPECT_EQ(jobs::stream_bytes(json{{"text", "old\n"}, {"bytes", 4}}), "old\n");
  EXPECT_EQ(jobs::stream_bytes(json{{"text", "aGk="}, {"encoding", "base64"}}), "hi");
  EXPECT_EQ(jobs::stream_bytes(json{{"text", "a*c="}, {"encoding", "base64"}}), std::nullopt);
  EXPECT_EQ(jobs::stream_bytes(json{{"text", "x"}, {"encoding", "rot13"}}), std::nullopt);
  EXPECT_EQ(jobs::stream_bytes(json{{"text", "x"}, {"encoding", 7}}), std::nullopt);
  EXPECT_EQ(jobs::stream_bytes(json{{"bytes", 4}}), std::nullopt);
  EXPECT_EQ(jobs::stream_bytes(json("text")), std::nullopt);
}

// Where --record lies inside --output-dir decides what no output may take.
TEST(RecordPath, InsideTheOutputDirectoryIsReserved) {
  EXPECT_EQ(jobs::path_inside("/w/out", "/w/out/record.json").value(), "record.json");
  EXPECT_EQ(jobs::path_inside("/w/out", "/w/out/runs/1.json").value(), "runs/1.json");
  EXPECT_EQ(jobs::path_inside("/", "/r.json").value(), "r.json");
  EXPECT_EQ(jobs::path_inside("/w/out", "/w/outside.json").value(), std::nullopt);
  EXPECT_EQ(jobs::path_inside("/w/out", "/w/record.json").value(), std::nullopt);
  EXPECT_FALSE(jobs::path_inside("/w/out", "/w/out").has_value());  // the record cannot be the directory
  auto parent = jobs::path_inside("/w/out", "/w");
  ASSERT_FALSE(parent.has_value());
  EXPECT_NE(parent.error().message().find("cannot be the output directory or contain it"), std::string::npos);
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
