// `airlock serve --warm N --preloaded N`: the service's jobs start from its
// warm pool (code jobs preloaded, commands warm), and stopping the service
// removes the pool's sandboxes.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "service_fixture.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

std::string start_of(const json& job) {
  return job.value("record", json::object()).value("sandbox", json::object()).value("start", "");
}

TEST(ServicePool, CodeJobsStartPreloadedAndCommandsWarm) {
  ServiceProcess svc({"--warm", "1", "--preloaded", "1"});
  HttpClient http = svc.client();
  // A tenant's first preloaded jobs start warm while its own interpreters
  // start (docs/fast-start.md): wait until both kinds serve alpha.
  for (const char* code : {"import pandas", "import json"}) {
    bool preloaded = false;
    for (int i = 0; i < 100 && !preloaded; ++i) {
      json job = run_job(http, svc.alpha, {{"code", code}});
      ASSERT_EQ(job["outcome"], "succeeded") << job.dump(2);
      preloaded = start_of(job) == "preloaded";
      if (!preloaded) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(preloaded) << "alpha's preloaded interpreter did not start: " << code;
  }
  // A class of one sandbox refills after each take: a job that finds its own
  // class still empty takes the next in order (a standard-library job the
  // data stack's, a data job a warm sandbox), so each kind is run until it
  // has found its own class ready, never depending on how fast it refills.
  auto until_served_by = [&](const std::string& code, const std::string& interpreter) {
    json job;
    for (int i = 0; i < 100; ++i) {
      job = run_job(http, svc.alpha, {{"code", code}});
      EXPECT_EQ(job["outcome"], "succeeded") << job.dump(2);
      if (start_of(job) == "preloaded" && job["record"]["sandbox"].value("interpreter", "") == interpreter) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(start_of(job), "preloaded") << job.dump(2);
    EXPECT_EQ(job["record"]["sandbox"].value("interpreter", ""), interpreter) << job.dump(2);
    return job;
  };
  for (int i = 0; i < 3; ++i) {
    // The import after the print sends it to the data stack's interpreter.
    json code = until_served_by("import sys\nprint('pandas' in sys.modules)\nimport pandas", "data");
    EXPECT_EQ(code["record"]["stdout"]["text"], "True\n");
    // Code that imports only standard modules: the standard library's.
    json small = until_served_by("import sys, json\nprint('pandas' in sys.modules)", "stdlib");
    EXPECT_EQ(small["record"]["stdout"]["text"], "False\n");
    json cmd = run_job(http, svc.alpha, {{"command", {"echo", "hi"}}});
    EXPECT_EQ(cmd["outcome"], "succeeded") << cmd.dump(2);
    EXPECT_EQ(start_of(cmd), "warm") << cmd.dump(2);
  }
  // The pool is a child process of the service ("warm_pool" event with its pid), gone with it.
  std::string log = svc.log();
  auto at = log.find("\"event\":\"warm_pool\"");
  ASSERT_NE(at, std::string::npos) << log;
  auto line = json::parse(log.substr(log.rfind('\n', at) + 1, log.find('\n', at) - log.rfind('\n', at) - 1));
  pid_t pool_pid = line.value("pid", 0);
  ASSERT_GT(pool_pid, 0) << line.dump();
  EXPECT_EQ(::kill(pool_pid, 0), 0) << "the pool is not running";
  EXPECT_EQ(svc.stop(), 0) << svc.log();
  EXPECT_NE(::kill(pool_pid, 0), 0) << "the pool outlived the service";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(svc.state_dir() + "/jobs", ec))
    ADD_FAILURE() << "left behind: " << e.path();
}

}  // namespace
}  // namespace airlock::testing
