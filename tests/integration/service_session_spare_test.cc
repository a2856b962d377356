// Spare sessions through the API (src/sessions/session_spares.cc): with the
// preloaded pool on, a session is opened ahead and fitted to the request when
// taken. The request's limits must hold on a spare exactly as on a session
// made for it; a request a spare cannot serve (policy.env) gets its own.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "service_fixture.h"

namespace airlock::testing {
namespace {

using json = nlohmann::json;

class SpareSessionApi : public ::testing::Test {
 protected:
  json create(const json& body) {
    auto r = http.request("POST", "/v1/sessions", body.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json() : json::object();
  }
  // Opens sessions with `body` until one is a spare (the spares are opened
  // while the service starts); the others are closed.
  json create_spare(const json& body) {
    for (int i = 0; i < 60; ++i) {
      json v = create(body);
      if (v.value("start_note", "") == "opened ahead as a spare") return v;
      if (v.contains("id")) close(v["id"]);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ADD_FAILURE() << "no spare session in 30 s";
    return json::object();
  }
  json exec(const std::string& sid, const std::string& code) {
    json body = {{"code", code}, {"wait_s", 120}};
    auto r = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json() : json::object();
  }
  json close(const std::string& sid) {
    auto r = http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json::object();
  }
  ServiceProcess svc{{"--preloaded", "1"}};
  HttpClient http{svc.port()};
};

TEST_F(SpareSessionApi, ASpareTakesTheRequestsLimitsAndSaysHowItStarted) {
  json v = create_spare({{"policy", {{"memory_mb", 128}, {"pids", 24}, {"workspace_mb", 16}}}});
  ASSERT_TRUE(v.contains("id")) << v.dump();
  std::string sid = v["id"];
  EXPECT_EQ(v["start"], "preloaded");
  // pandas is there before the call imports it.
  json r = exec(sid, "import sys\n'pandas' in sys.modules");
  EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["result"]["value"], "True");
  // The workspace is the request's 16 MB, not the spare's default.
  r = exec(sid, "open('/workspace/big', 'wb').write(b'x' * (32 << 20))");
  EXPECT_EQ(r["status"], "error") << r.dump();
  EXPECT_NE(r["result"]["error"].get<std::string>().find("No space left on device"), std::string::npos) << r.dump();
  // The pids limit is the request's 24.
  r = exec(sid, "import subprocess\nprocs, refused = [], None\n"
                "for i in range(60):\n"
                "    try:\n"
                "        procs.append(subprocess.Popen(['sleep', '30']))\n"
                "    except OSError as e:\n"
                "        refused = e.errno\n"
                "        break\n"
                "for p in procs:\n    p.kill()\n    p.wait()\n"
                "(len(procs) < 24, refused)");
  EXPECT_EQ(r["result"]["value"], "(True, 11)") << r.dump();
  // The memory limit is the request's 128 MB: 300 MB kills the kernel.
  r = exec(sid, "b = bytearray(300 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nlen(b)");
  EXPECT_EQ(r["status"], "kernel_died") << r.dump();
  json closed = close(sid);
  EXPECT_EQ(closed["record"]["start"], "preloaded") << closed.dump();
}

TEST_F(SpareSessionApi, ARequestWithItsOwnEnvironmentGetsItsOwnSandbox) {
  json v = create({{"policy", {{"env", {{"AIRLOCK_MINE", "1"}}}}}});
  ASSERT_TRUE(v.contains("id")) << v.dump();
  EXPECT_EQ(v["start"], "preloaded");
  EXPECT_NE(v.value("start_note", ""), "opened ahead as a spare");
  json r = exec(v["id"], "import os, sys\n(os.environ.get('AIRLOCK_MINE'), 'pandas' in sys.modules)");
  EXPECT_EQ(r["result"]["value"], "('1', True)") << r.dump();
  close(v["id"]);
}

}  // namespace
}  // namespace airlock::testing
