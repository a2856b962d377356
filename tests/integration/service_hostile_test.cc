// The hostile suite through the API: each case of tests/hostile/cases runs as
// a POST /v1/jobs job on one running `airlock serve`, whose jobs run in its
// own process (service/job_runner.cc). The job's row and record must agree,
// the record must match the case's verdict, the job must leave no process,
// mount or cgroup behind, and afterwards the service must still be healthy
// (the same process, answering, running jobs).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "hostile_cases.h"
#include "jobs/run_request.h"
#include "service_fixture.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using airlock::testing::HttpClient;
using airlock::testing::ServiceProcess;
using namespace airlock::testing::hostile;

// `airlock run` flags of a case that the API has as policy fields.
const std::set<std::string> kPolicyFlags = {"--timeout", "--cpu-time", "--memory", "--pids", "--workspace-size",
                                            "--env"};

// Why the case cannot run through the API as written, or "".
std::string not_through_the_api(const Case& c) {
  if (!c.all("after").empty()) return "it runs after another case in the same state directory";
  if (!c.all("expect-collected").empty()) return "it checks airlock run's --output-dir";
  for (const auto& a : c.all("args"))
    for (const auto& w : split_words(a))
      if (w.starts_with("--") && !kPolicyFlags.count(w)) return "its flag " + w + " has no policy field here";
  return "";
}

// The case's flags as the API's "policy" object (only what differs from the defaults).
json policy_of(const Case& c) {
  std::vector<std::string> words;
  for (const auto& a : c.all("args"))
    for (const auto& w : split_words(a)) words.push_back(w);
  words.insert(words.end(), {"--", "true"});
  auto parsed = airlock::jobs::parse_run_args(words);
  EXPECT_TRUE(parsed.has_value()) << c.file << ": " << (parsed ? "" : parsed.error().message());
  json policy = json::object();
  if (!parsed) return policy;
  const airlock::jobs::JobPolicy defaults, &p = parsed->policy;
  if (p.timeout_ms != defaults.timeout_ms) policy["timeout_s"] = static_cast<double>(p.timeout_ms) / 1000;
  if (p.cpu_time_ms != defaults.cpu_time_ms) policy["cpu_time_s"] = static_cast<double>(p.cpu_time_ms) / 1000;
  if (p.memory_bytes != defaults.memory_bytes) policy["memory_mb"] = static_cast<double>(p.memory_bytes) / (1 << 20);
  if (p.pids != defaults.pids) policy["pids"] = p.pids;
  if (p.workspace_bytes != defaults.workspace_bytes)
    policy["workspace_mb"] = static_cast<double>(p.workspace_bytes) / (1 << 20);
  if (!p.env.empty()) {
    policy["env"] = json::object();
    for (const auto& [name, value] : p.env) policy["env"][name] = value;
  }
  return policy;
}

std::string upload(HttpClient& http, const airlock::testing::TestKey& key, const fs::path& file) {
  auto r = http.request("POST", "/v1/files?name=" + file.filename().string(), read_file(file), key.auth());
  EXPECT_EQ(r.status, 201) << file << ": " << r.body;
  return r.status == 201 ? r.json()["id"].get<std::string>() : "";
}

class ServiceHostile : public testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { svc_ = new ServiceProcess({"--max-running", "2"}); }
  static void TearDownTestSuite() {
    // Still the same process, answering, and running jobs after every case.
    EXPECT_EQ(::kill(svc_->pid(), 0), 0) << "the service died during the suite\n" << svc_->log();
    HttpClient http(svc_->port());
    EXPECT_EQ(http.request("GET", "/healthz", "", {}).status, 200);
    json after = airlock::testing::run_job(http, svc_->alpha, {{"command", {"/bin/echo", "still here"}}});
    EXPECT_EQ(after.value("outcome", ""), "succeeded") << after.dump(2);
    EXPECT_EQ(text_of(after["record"], "stdout"), "still here\n");
    EXPECT_EQ(svc_->stop(), 0) << svc_->log();
    delete svc_;
    svc_ = nullptr;
  }
  static ServiceProcess* svc_;
};
ServiceProcess* ServiceHostile::svc_ = nullptr;

TEST_P(ServiceHostile, ContainedThroughTheApi) {
  const Case& c = GetParam();
  ASSERT_TRUE(c.one("expect-outcome").has_value()) << c.file << ": no '# expect-outcome:' header";
  for (const auto& need : c.all("requires"))
    if (auto missing = unmet_requirement(need)) GTEST_SKIP() << c.file << ": " << *missing;
  if (auto why = not_through_the_api(c); !why.empty())
    GTEST_SKIP() << c.file << " runs only through airlock run (HostileTest): " << why;
  HostSetup setup;  // listeners, a canary, a pipe core_pattern: the same as through airlock run
  for (const auto& s : c.all("setup")) {
    if (s == "tcp-listener") setup.tcp_listener();
    else if (s == "abstract-socket") setup.abstract_socket();
    else if (s == "canary") setup.start_canary();
    else if (s == "pipe-core-pattern") setup.pipe_core_pattern();
    else ADD_FAILURE() << c.file << ": unknown setup '" << s << "'";
  }
  if (HasFatalFailure()) return;
  HttpClient http(svc_->port());
  json inputs = json::array({upload(http, svc_->alpha, cases_dir() / c.file)});
  for (const auto& in : c.all("input")) inputs.push_back(upload(http, svc_->alpha, data_dir() / in));
  std::vector<std::string> command;
  if (auto cmd = c.one("command")) {
    command = split_words(*cmd);
  } else {
    command = {fs::path(c.file).extension() == ".sh" ? "sh" : "python3", "/inputs/" + c.file};
  }
  json policy = policy_of(c);
  for (const auto& e : setup.env) {  // NAME=VALUE, as the airlock run runner passes --env
    size_t eq = e.find('=');
    policy["env"][e.substr(0, eq)] = e.substr(eq + 1);
  }
  json body = {{"command", command}, {"inputs", inputs}, {"policy", policy}};
  auto mounts_before = airlock_mounts();
  json job = airlock::testing::run_job(http, svc_->alpha, body, 150);
  ASSERT_EQ(job.value("state", ""), "finished") << job.dump(2);
  const json& record = job["record"];
  ASSERT_TRUE(record.is_object()) << job.dump(2);
  std::string context = c.file + "\n  record: outcome=" + record.value("outcome", json()).dump() +
                        " reason=" + record.value("reason", json()).dump() +
                        " limits_hit=" + record.value("limits_hit", json()).dump() + "\n  stdout: " +
                        text_of(record, "stdout").substr(0, 1500) + "\n  stderr: " +
                        text_of(record, "stderr").substr(0, 1500) + "\n";
  // One outcome: the row and the chained record say the same.
  EXPECT_EQ(job["outcome"], record["outcome"]) << context;
  expect_verdict(c, record, context);
  if (c.one("expect-outcome") != "sandbox_error") {
    EXPECT_NE(record.value("outcome", ""), "sandbox_error") << context;
  }
  EXPECT_EQ(record["cleanup"].value("ok", false), true) << record["cleanup"].dump() << "\n" << context;
  EXPECT_TRUE(record.contains("service_timing")) << context;
  setup.expect_untouched(context);
  setup.expect_no_dump(record, context);
  expect_nothing_left(record, mounts_before, context);
  EXPECT_EQ(::kill(svc_->pid(), 0), 0) << "the service died in " << c.file << "\n" << svc_->log();
}

INSTANTIATE_TEST_SUITE_P(Cases, ServiceHostile, testing::ValuesIn(load_cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.test_name; });

}  // namespace
