// A hard `nofile` limit of 1024 (soft 1024 too: nothing to raise) and one
// tenant that floods `airlock serve` with connections, idle ones and uploads
// that stall after their header (each holds its socket and a spool file),
// while another tenant keeps sessions open: the descriptors of the running
// jobs and open sessions are reserved (service/descriptor_budget.h), so the
// accept path refuses connections before they eat into them
// (http/descriptor_gate.h), and a third tenant's jobs still run (they once
// ended sandbox_error "open .../cgroup.procs: Too many open files").
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "service_fixture.h"
#include "sys/descriptors.h"

namespace airlock::testing {
namespace {

using nlohmann::json;

TEST(ServiceDescriptorFlood,
     UnderAHardLimitOf1024AConnectionFloodLeavesAnotherTenantsJobsTheirDescriptors) {
  ASSERT_TRUE(airlock::sys::raise_descriptor_limit());  // this test's own sockets
  TempDir dir;
  std::string config = dir.sub("serve.toml");
  std::ofstream(config) << "max_sessions_per_tenant = 16\nmax_running = 2\n";
  ServiceProcess svc({"--config", config}, {"/usr/bin/prlimit", "--nofile=1024:1024", "--"});
  HttpClient http = svc.client();
  // gamma keeps sessions open: descriptors the service holds for them.
  std::vector<std::string> sessions;
  for (int i = 0; i < 14; ++i) {
    auto r = http.request("POST", "/v1/sessions", "{}", svc.gamma.auth());
    ASSERT_EQ(r.status, 201) << r.body;
    sessions.push_back(r.json()["id"]);
  }
  // beta's jobs, admitted before the flood: they run (two at once,
  // max_running) while it goes on, each writing outputs the service reads.
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    json body = {
        {"command",
         {"sh", "-c", "sleep 1; for n in 1 2 3 4; do echo $n > /output/o$n.txt; done; echo fine"}}};
    auto r = http.request("POST", "/v1/jobs", body.dump(), svc.beta.auth());
    ASSERT_TRUE(r.status == 201 || r.status == 202) << r.status << " " << r.body;
    ids.push_back(r.json()["id"]);
  }
  // alpha floods: uploads that stop after their header, and idle connections.
  std::vector<std::unique_ptr<RawConnection>> flood;
  const std::string upload = "POST /v1/files?name=f HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                             svc.alpha.secret + "\r\nContent-Length: 1000000\r\n\r\nabc";
  // 1500 of each, held while the jobs run (a bounded number: loopback's
  // ephemeral ports are shared with every other test).
  for (int i = 0; i < 1500; ++i) {
    flood.push_back(std::make_unique<RawConnection>(svc.port()));
    (void)flood.back()->send(upload);
    flood.push_back(std::make_unique<RawConnection>(svc.port()));
  }
  for (const auto& id : ids) {
    for (int i = 0; i < 300; ++i) {
      auto r = http.request("GET", "/v1/jobs/" + id, "", svc.beta.auth());
      if (r.status == 200 && r.json().value("state", "") == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  flood.clear();
  for (const auto& id : ids) {
    json job;
    for (int i = 0; i < 300; ++i) {
      auto r = http.request("GET", "/v1/jobs/" + id, "", svc.beta.auth());
      if (r.status == 200) job = r.json();
      if (job.value("state", "") == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(job.value("outcome", ""), "succeeded") << job.dump().substr(0, 2000);
    if (job.contains("record")) {
      EXPECT_EQ(job["record"]["stdout"]["text"], "fine\n") << job.dump().substr(0, 2000);
    }
  }
  // gamma's sessions lived through it.
  for (const auto& sid : sessions) {
    json body = {{"code", "1 + 1"}, {"wait_s", 30}};
    auto r = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), svc.gamma.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    if (r.status == 201) {
      EXPECT_EQ(r.json()["result"].value("value", ""), "2") << r.body;
    }
  }
  std::string log = svc.log();
  // The accept path said why it refused.
  EXPECT_NE(log.find("the descriptors left are reserved for jobs and sessions"), std::string::npos);
  size_t at = log.find("Too many open files");
  EXPECT_EQ(at, std::string::npos) << log.substr(at > 1500 ? at - 1500 : 0, 3000);
}

}  // namespace
}  // namespace airlock::testing
