// airlock serve with "profile": a compute job over the API runs narrowed (no
// process, no socket, /workspace read-only) and its record names the profile;
// the same code under standard can do all three, so the test can fail.
#include <gtest/gtest.h>

#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

const char* kProbe =
    "import os, socket\n"
    "def t(f):\n"
    "    try:\n"
    "        f(); return 'OK'\n"
    "    except OSError as e:\n"
    "        return 'E%d' % e.errno\n"
    "def fork():\n"
    "    pid = os.fork()\n"
    "    if pid == 0: os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "print('fork', t(fork), 'socket', t(lambda: socket.socket().close()),\n"
    "      'workspace', t(lambda: open('/workspace/x', 'w').close()), 'output', t(lambda: "
    "open('/output/x.txt', 'w').close()))\n";

TEST(ServiceProfile, ComputeJobsRunNarrowedAndRecordTheProfile) {
  ServiceProcess svc;
  HttpClient http{svc.port()};
  json standard = run_job(http, svc.alpha, {{"code", kProbe}});
  ASSERT_EQ(standard["outcome"], "succeeded") << standard.dump(2);
  EXPECT_EQ(standard["record"]["profile"]["name"], "standard");
  EXPECT_NE(standard["record"]["stdout"]["text"].get<std::string>().find(
                "fork OK socket OK workspace OK output OK"),
            std::string::npos)
      << standard["record"]["stdout"].dump();

  json compute = run_job(http, svc.alpha, {{"code", kProbe}, {"profile", "compute"}});
  ASSERT_EQ(compute["outcome"], "succeeded") << compute.dump(2);
  EXPECT_EQ(compute["record"]["profile"]["name"], "compute");
  EXPECT_EQ(compute["record"]["profile"]["digest"].get<std::string>().size(), 71u);
  EXPECT_NE(compute["record"]["stdout"]["text"].get<std::string>().find(
                "fork E1 socket E1 workspace E13 output OK"),
            std::string::npos)
      << compute["record"]["stdout"].dump();

  auto refused =
      http.request("POST", "/v1/sessions", json{{"profile", "compute"}}.dump(), svc.alpha.auth());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("compute is for jobs only"), std::string::npos) << refused.body;
  auto unknown = http.request("POST", "/v1/jobs", json{{"code", "1"}, {"profile", "open"}}.dump(),
                              svc.alpha.auth());
  EXPECT_EQ(unknown.status, 400) << unknown.body;
}

}  // namespace
