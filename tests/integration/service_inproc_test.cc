// Jobs of `airlock serve` run in the service's own process, and a job's
// outcome is one: its row and its chained record say the same, also for a job
// that never ran.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "run_helpers.h"
#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Direct children of `parent`: pid -> argv.
std::map<pid_t, std::vector<std::string>> children_of(pid_t parent) {
  std::map<pid_t, std::vector<std::string>> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::string cmdline = slurp("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> argv;
    for (size_t start = 0, nul; (nul = cmdline.find('\0', start)) != std::string::npos; start = nul + 1)
      argv.push_back(cmdline.substr(start, nul - start));
    out[pid] = argv;
  }
  ::closedir(d);
  return out;
}

class InProcessJobs : public ::testing::Test {
 protected:
  ServiceProcess svc{{"--max-running", "1"}};
  HttpClient http{svc.port()};

  std::string submit(const json& body) {
    auto r = http.request("POST", "/v1/jobs", body.dump(), svc.alpha.auth());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["id"].get<std::string>() : "";
  }
  json wait_finished(const std::string& id, int timeout_ms = 60000) {
    json v;
    for (auto end = Clock::now() + std::chrono::milliseconds(timeout_ms); Clock::now() < end;) {
      auto r = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth());
      if (r.status == 200 && (v = r.json())["state"] == "finished") return v;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return v;
  }
};

}  // namespace

// The sandbox of a running job is a child of the service itself: no
// `airlock run` process sits between them.
TEST_F(InProcessJobs, TheSandboxIsAChildOfTheServiceNotOfAnAirlockRun) {
  std::string id = submit({{"command", {"sleep", "3"}}});
  ASSERT_FALSE(id.empty());
  bool sandbox_child = false;
  for (auto end = Clock::now() + std::chrono::seconds(10); Clock::now() < end && !sandbox_child;) {
    for (const auto& [pid, argv] : children_of(svc.pid())) {
      EXPECT_FALSE(argv.size() > 1 && argv[1] == "run") << "the service started `airlock run` (pid " << pid << ")";
      std::string cgroups = slurp("/proc/" + std::to_string(pid) + "/cgroup");
      if (cgroups.find("/airlock/") != std::string::npos) sandbox_child = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(sandbox_child) << "no child of the service was in a job's cgroup while the job ran";
  json done = wait_finished(id);
  EXPECT_EQ(done["outcome"], "succeeded") << done.dump(2);
  EXPECT_EQ(done["record"]["outcome"], "succeeded");
}

// STYLE-REVIEW P1: a queued job whose snapshot is removed before it runs is
// input_rejected in its row *and* in its chained record (it was sandbox_error
// in the record).
TEST_F(InProcessJobs, ASnapshotRemovedBeforeTheJobRanIsInputRejectedInRowAndRecord) {
  auto opened = http.request("POST", "/v1/sessions", "{}", svc.alpha.auth());
  ASSERT_EQ(opened.status, 201) << opened.body;
  std::string sid = opened.json()["id"];
  auto wrote = http.request("PUT", "/v1/sessions/" + sid + "/files?path=notes.txt", "kept\n", svc.alpha.auth());
  ASSERT_EQ(wrote.status, 201) << wrote.body;
  auto snap = http.request("POST", "/v1/sessions/" + sid + "/snapshots", "", svc.alpha.auth());
  ASSERT_EQ(snap.status, 201) << snap.body;
  std::string digest = snap.json()["digest"];
  ASSERT_EQ(http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth()).status, 200);

  // The only worker is busy, so the snapshot's job waits in the queue while
  // the snapshot goes.
  std::string blocker = submit({{"command", {"sleep", "2"}}});
  ASSERT_FALSE(blocker.empty());
  std::string id = submit({{"snapshot", digest}, {"command", {"cat", "/workspace/notes.txt"}}});
  ASSERT_FALSE(id.empty());
  auto queued = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth());
  ASSERT_EQ(queued.status, 200);
  ASSERT_EQ(queued.json()["state"], "queued") << "the job ran before its snapshot could be removed";
  ASSERT_EQ(http.request("DELETE", "/v1/snapshots/" + digest, "", svc.alpha.auth()).status, 200);

  json done = wait_finished(id);
  ASSERT_EQ(done["state"], "finished") << done.dump(2);
  EXPECT_EQ(done["outcome"], "input_rejected") << done.dump(2);
  EXPECT_EQ(done["record"]["outcome"], "input_rejected") << done["record"].dump(2);
  EXPECT_NE(done["record"]["reason"].get<std::string>().find("was removed before the job ran"), std::string::npos)
      << done["record"]["reason"];
  EXPECT_EQ(done["record"]["states"]["started_at"], nullptr);  // it never started
  EXPECT_EQ(wait_finished(blocker)["outcome"], "succeeded");
}

// Cancelling a running job (the eventfd the engine polls) ends it as
// cancelled at once, in row and record, and the worker takes the next job.
TEST_F(InProcessJobs, CancellingARunningJobEndsItAsCancelled) {
  std::string id = submit({{"command", {"sleep", "30"}}});
  ASSERT_FALSE(id.empty());
  for (auto end = Clock::now() + std::chrono::seconds(10); Clock::now() < end;) {
    auto r = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth());
    if (r.status == 200 && r.json()["state"] == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto t0 = Clock::now();
  auto c = http.request("POST", "/v1/jobs/" + id + "/cancel", "", svc.alpha.auth());
  ASSERT_EQ(c.status, 200) << c.body;
  json done = wait_finished(id, 20000);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "the job ran on after its cancel";
  EXPECT_EQ(done["outcome"], "cancelled") << done.dump(2);
  EXPECT_EQ(done["record"]["outcome"], "cancelled");
  json next = run_job(http, svc.alpha, {{"command", {"/bin/true"}}});
  EXPECT_EQ(next["outcome"], "succeeded") << next.dump(2);
}

// The service answers once the record is stored; what is left of the sandbox
// (nothing of it runs any more) is removed right after, and the record says
// which parts went after it.
TEST_F(InProcessJobs, TheSandboxIsRemovedRightAfterTheRecordWhichNamesWhatWentAfterIt) {
  std::string id = submit({{"command", {"/bin/true"}}});
  ASSERT_FALSE(id.empty());
  json done = wait_finished(id);
  ASSERT_EQ(done["outcome"], "succeeded") << done.dump(2);
  const json& cleanup = done["record"]["cleanup"];
  EXPECT_EQ(cleanup["ok"], true) << cleanup.dump();
  EXPECT_EQ(cleanup["removed"], json::array({"processes"})) << cleanup.dump();
  EXPECT_EQ(cleanup["after_record"], json::array({"mounts", "cgroup", "staging"})) << cleanup.dump();
  const std::string sandbox_id = done["record"]["id"];
  const std::string staging = svc.state_dir() + "/jobs/" + sandbox_id;
  auto gone = [&] { return cgroups_named(sandbox_id).empty() && ::access(staging.c_str(), F_OK) != 0; };
  for (auto end = Clock::now() + std::chrono::seconds(5); Clock::now() < end && !gone();)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(cgroups_named(sandbox_id), std::vector<std::string>{});
  EXPECT_NE(::access(staging.c_str(), F_OK), 0) << staging << " outlived the job";
  auto metrics = http.request("GET", "/metrics", "", {});
  EXPECT_NE(metrics.body.find("airlock_job_teardown_failures_total 0\n"), std::string::npos) << metrics.body;
}
