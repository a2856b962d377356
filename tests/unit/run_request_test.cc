#include "jobs/run_request.h"

#include <gtest/gtest.h>

using airlock::jobs::parse_run_args;
using airlock::jobs::parse_seconds;
using airlock::jobs::parse_size;

TEST(RunRequest, SizesUseBinaryUnits) {
  EXPECT_EQ(parse_size("512").value(), 512u);
  EXPECT_EQ(parse_size("64K").value(), 64u << 10);
  EXPECT_EQ(parse_size("256m").value(), 256u << 20);
  EXPECT_EQ(parse_size("1.5G").value(), 3ull << 29);
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("-1M").has_value());
  EXPECT_FALSE(parse_size("12Q").has_value());
  EXPECT_FALSE(parse_size("1e400").has_value());
  EXPECT_FALSE(parse_size("99999999T").has_value());
}

TEST(RunRequest, SecondsBecomeMilliseconds) {
  EXPECT_EQ(parse_seconds("10").value(), 10000u);
  EXPECT_EQ(parse_seconds("0.25").value(), 250u);
  EXPECT_FALSE(parse_seconds("ten").has_value());
  EXPECT_FALSE(parse_seconds("nan").has_value());
  EXPECT_FALSE(parse_seconds("inf").has_value());
}

TEST(RunRequest, ParsesEveryOption) {
  auto r = parse_run_args({"--input", "a.csv", "--input=b.csv", "--output-dir", "out", "--record",
                           "rec.json", "--json", "--quiet", "--timeout", "5", "--cpu-time", "2", "--memory",
                           "128M", "--pids", "32", "--cpus", "0.5", "--env", "A=1", "--env", "B=x=y",
                           "--image", "host", "--workspace-size", "64M", "--stdout-cap", "4K", "--",
                           "python3", "-c", "print(1)"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->inputs, (std::vector<std::string>{"a.csv", "b.csv"}));
  EXPECT_EQ(r->output_dir, "out");
  EXPECT_EQ(r->record_path, "rec.json");
  EXPECT_TRUE(r->json);
  EXPECT_TRUE(r->quiet);
  EXPECT_EQ(r->policy.timeout_ms, 5000u);
  EXPECT_EQ(r->policy.cpu_time_ms, 2000u);
  EXPECT_EQ(r->policy.memory_bytes, 128u << 20);
  EXPECT_EQ(r->policy.pids, 32u);
  EXPECT_DOUBLE_EQ(r->policy.cpus, 0.5);
  ASSERT_EQ(r->policy.env.size(), 2u);
  EXPECT_EQ(r->policy.env[1].second, "x=y");
  EXPECT_EQ(r->policy.workspace_bytes, 64u << 20);
  EXPECT_EQ(r->policy.stdout_cap_bytes, 4u << 10);
  EXPECT_EQ(r->command, (std::vector<std::string>{"python3", "-c", "print(1)"}));
}

TEST(RunRequest, CommandWithoutSeparatorStartsAtFirstNonOption) {
  auto r = parse_run_args({"--timeout", "1", "echo", "--json"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->command, (std::vector<std::string>{"echo", "--json"}));
  EXPECT_FALSE(r->json);
}

TEST(RunRequest, ErrorsAreOneClearLine) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  std::vector<Case> cases = {
      {{"--", }, "no command"},
      {{}, "no command"},
      {{"--bogus", "--", "x"}, "unknown option --bogus"},
      {{"--timeout"}, "needs a value"},
      {{"--timeout", "0", "--", "x"}, "--timeout '0' must be more than 0"},
      {{"--memory", "lots", "--", "x"}, "--memory 'lots'"},
      {{"--memory", "1M", "--", "x"}, "below the minimum"},
      {{"--pids", "2", "--", "x"}, "--pids"},
      {{"--pids", "3.5", "--", "x"}, "--pids"},
      {{"--cpus", "0", "--", "x"}, "--cpus"},
      {{"--env", "NOVALUE", "--", "x"}, "NAME=VALUE"},
      {{"--env", "1BAD=x", "--", "x"}, "not a valid variable name"},
      {{"--env", "A-B=x", "--", "x"}, "not a valid variable name"},
      {{"--", ""}, "empty string"},
  };
  for (const auto& c : cases) {
    auto r = parse_run_args(c.args);
    ASSERT_FALSE(r.has_value()) << c.says;
    EXPECT_NE(r.error().message().find(c.says), std::string::npos) << r.error().message();
    EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
  }
}

TEST(RunRequest, DefaultsAreTight) {
  auto r = parse_run_args({"--", "true"});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->policy.allow.empty());
  EXPECT_EQ(r->policy.timeout_ms, 60000u);
  EXPECT_EQ(r->policy.memory_bytes, 512u << 20);
  EXPECT_EQ(r->policy.pids, 128u);
  EXPECT_TRUE(r->policy.env.empty());
  EXPECT_EQ(r->image, "host");
}

#include "jobs/job_sandbox.h"

TEST(ExecCandidates, FollowTheJobsPath) {
  using airlock::jobs::exec_candidates;
  EXPECT_EQ(exec_candidates("/bin/sh", {"PATH=/usr/bin"}), std::vector<std::string>{"/bin/sh"});
  EXPECT_EQ(exec_candidates("./run.sh", {"PATH=/usr/bin"}), std::vector<std::string>{"./run.sh"});
  EXPECT_EQ(exec_candidates("python3", {"HOME=/x", "PATH=/usr/local/bin:/usr/bin:/bin"}),
            (std::vector<std::string>{"/usr/local/bin/python3", "/usr/bin/python3", "/bin/python3"}));
  // Relative and empty PATH entries are skipped: the sandbox's cwd is not a search path.
  EXPECT_EQ(exec_candidates("tool", {"PATH=.::relative:/opt/bin:"}),
            std::vector<std::string>{"/opt/bin/tool"});
  EXPECT_TRUE(exec_candidates("tool", {}).empty());
}

TEST(RunRequest, OutputPolicyOptions) {
  auto r = parse_run_args({"--output-types", "csv,png", "--output-max-files", "3", "--output-max-size", "1M",
                           "--output-max-total", "2M", "--", "true"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  using airlock::workspace::FileType;
  EXPECT_EQ(r->policy.outputs.allowed, (airlock::workspace::TypeSet{FileType::kCsv, FileType::kPng}));
  EXPECT_EQ(r->policy.outputs.max_count, 3u);
  EXPECT_EQ(r->policy.outputs.max_file_bytes, 1u << 20);
  EXPECT_EQ(r->policy.outputs.max_total_bytes, 2u << 20);
  EXPECT_FALSE(parse_run_args({"--output-types", "csv,exe", "--", "true"}).has_value());
  EXPECT_FALSE(parse_run_args({"--output-types", "binary", "--", "true"}).has_value());
  EXPECT_FALSE(parse_run_args({"--output-max-files", "0", "--", "true"}).has_value());
}

#include "base/strings.h"

TEST(Strings, Split) {
  using airlock::split;
  EXPECT_EQ(split("a,b,,c", ','), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(split("", ','), std::vector<std::string>{""});
  EXPECT_EQ(split("x:", ':'), (std::vector<std::string>{"x", ""}));
}
