// End to end: the README's analyst example through the real airlock binary.
// Two sales CSVs and analyst.py go in; summary.csv and chart.png must come out, accepted,
// with manifests whose hashes match the files, and with totals that match the inputs.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Ran {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
};

// Runs argv with stdout captured; stderr passes through to the test log.
Ran run_capture(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return {};
  }
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  Ran ran;
  char buf[65536];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ran.out.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::stringstream s(line);
  std::string field;
  while (std::getline(s, field, sep)) fields.push_back(field);
  return fields;
}

// Our own example files: a header line, no quoting. Returns column -> values per line.
std::vector<std::map<std::string, std::string>> parse_csv(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::stringstream s(text);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(s, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = split(line, ',');
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

double sum_column(const std::vector<std::map<std::string, std::string>>& rows,
                  const std::string& column) {
  double sum = 0;
  for (const auto& row : rows) sum += std::stod(row.at(column));
  return sum;
}

const json* find_entry(const json& list, const std::string& name) {
  for (const json& entry : list) {
    if (entry.value("name", "") == name) return &entry;
  }
  return nullptr;
}

// Under every profile: compute (no sockets, no processes, writes only to
// /output and /tmp) is made for this job.
class AnalystExampleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "airlock-analyst-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
    // airlock's records, caches and job directories go here, not to /var/lib/airlock;
    // the sandbox's user must be able to pass through it.
    fs::create_directory(tmp_ / "state");
    fs::permissions(tmp_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    fs::permissions(tmp_ / "state",
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  fs::path tmp_;
};

TEST_P(AnalystExampleTest, TwoCsvsInSummaryAndChartOut) {
  const fs::path examples = fs::path(AIRLOCK_SOURCE_DIR) / "examples";
  const fs::path out_dir = tmp_ / "out";
  const std::vector<std::string> inputs = {"analyst.py", "sales_jan.csv", "sales_feb.csv"};

  Ran ran = run_capture({AIRLOCK_BINARY, "run", "--json",
                         "--state-dir", (tmp_ / "state").string(),
                         "--input", (examples / "sales_jan.csv").string(),
                         "--input", (examples / "sales_feb.csv").string(),
                         "--input", (examples / "analyst.py").string(),
                         "--output-dir", out_dir.string(), "--profile", GetParam(),
                         "--", "python3", "/inputs/analyst.py"});
  json record = json::parse(ran.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(record.is_discarded()) << "stdout is not a JSON record:\n" << ran.out;
  ASSERT_EQ(record.value("outcome", ""), "succeeded")
      << "reason: " << record.value("reason", "") << "\nstderr: " << record["stderr"].dump();
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(record["exit_code"], 0);
  EXPECT_EQ(record["profile"]["name"], GetParam());
  EXPECT_THAT(record["profile"].value("digest", ""), ::testing::StartsWith("sha256:"));

  // Input manifest: exactly the three admitted files, hashed as they are on disk.
  ASSERT_TRUE(record["inputs"].is_array());
  EXPECT_EQ(record["inputs"].size(), 3u);
  for (const std::string& name : inputs) {
    const json* entry = find_entry(record["inputs"], name);
    ASSERT_NE(entry, nullptr) << name << " missing from the input manifest";
    std::string content = read_whole(examples / name);
    EXPECT_EQ(entry->value("sha256", ""), airlock::Sha256::of(content)) << name;
    EXPECT_EQ(entry->value("size", uint64_t{0}), content.size()) << name;
  }
  EXPECT_EQ(find_entry(record["inputs"], "sales_jan.csv")->value("type", ""), "csv");

  // Output manifest: summary.csv and chart.png, typed by content, accepted, hashes match
  // the copies in --output-dir.
  ASSERT_TRUE(record["outputs"].is_array());
  const json* summary_entry = find_entry(record["outputs"], "summary.csv");
  const json* chart_entry = find_entry(record["outputs"], "chart.png");
  ASSERT_NE(summary_entry, nullptr) << record["outputs"].dump();
  ASSERT_NE(chart_entry, nullptr) << record["outputs"].dump();
  EXPECT_EQ(summary_entry->value("type", ""), "csv");
  EXPECT_EQ(summary_entry->value("verdict", ""), "accepted");
  EXPECT_EQ(chart_entry->value("type", ""), "png");
  EXPECT_EQ(chart_entry->value("verdict", ""), "accepted");

  const std::string summary = read_whole(out_dir / "summary.csv");
  const std::string chart = read_whole(out_dir / "chart.png");
  EXPECT_EQ(summary_entry->value("sha256", ""), airlock::Sha256::of(summary));
  EXPECT_EQ(chart_entry->value("sha256", ""), airlock::Sha256::of(chart));
  EXPECT_EQ(chart_entry->value("size", uint64_t{0}), chart.size());
  ASSERT_GE(chart.size(), 8u);
  EXPECT_EQ(chart.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  // The numbers: per-month totals in summary.csv equal the revenue sums of the inputs.
  auto rows = parse_csv(summary);
  ASSERT_EQ(rows.size(), 4u) << summary;  // North, South, East, West
  const double jan = sum_column(parse_csv(read_whole(examples / "sales_jan.csv")), "revenue");
  const double feb = sum_column(parse_csv(read_whole(examples / "sales_feb.csv")), "revenue");
  EXPECT_NEAR(sum_column(rows, "revenue_jan"), jan, 0.01);
  EXPECT_NEAR(sum_column(rows, "revenue_feb"), feb, 0.01);
  EXPECT_NEAR(sum_column(rows, "revenue_total"), jan + feb, 0.01);

  // The program's own summary line is in the record, not on airlock's stdout.
  EXPECT_THAT(record["stdout"].value("text", ""), ::testing::HasSubstr("4 regions"));
}

INSTANTIATE_TEST_SUITE_P(Profiles, AnalystExampleTest, ::testing::Values("standard", "compute"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
