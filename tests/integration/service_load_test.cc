// Load: many clients submit many jobs at once; every job ends with a final
// record and nothing is left behind. AIRLOCK_LOAD_JOBS sets the number of
// jobs (default 200, so CI stays quick; the figure is 2000).
#include <dirent.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "service_fixture.h"

using namespace airlock::testing;
using nlohmann::json;

TEST(ServiceLoad, ManyClientsManyJobsEveryOneRecordedNothingLeft) {
  const char* env = std::getenv("AIRLOCK_LOAD_JOBS");
  const int jobs = env ? std::atoi(env) : 200;
  const int clients = 32;
  ServiceProcess svc({"--max-queued", "256"});
  std::mutex mu;
  std::vector<std::string> ids;
  std::atomic<int> refused{0}, errors{0};
  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      HttpClient http(svc.port());
      for (int i = c; i < jobs; i += clients) {
        for (int attempt = 0; attempt < 2000; ++attempt) {
          auto r = http.request("POST", "/v1/jobs",
                                json{{"command", {"echo", "job" + std::to_string(i)}}}.dump(), svc.alpha.auth());
          if (r.status == 201) {
            std::lock_guard lock(mu);
            ids.push_back(r.json()["id"]);
            break;
          }
          if (r.status == 429) {  // back off as Retry-After asks, a little less to keep the queue full
            ++refused;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
          }
          ++errors;
          break;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  ASSERT_EQ(static_cast<int>(ids.size()), jobs);

  HttpClient http(svc.port());
  int finished = 0, succeeded = 0;
  std::set<uid_t> job_uids;
  std::set<std::string> record_ids;  // each job's sandbox (and cgroup) id
  for (const auto& id : ids) {
    json j;
    for (int waited = 0; waited < 120000; waited += 20) {
      j = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth()).json();
      if (j["state"] == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (j["state"] == "finished" && j.contains("record")) {
      ++finished;
      job_uids.insert(j["record"]["sandbox"].value("host_uid", 0u));
      record_ids.insert(j["record"].value("id", ""));
    }
    if (j["outcome"] == "succeeded" && j["record"]["stdout"]["text"].get<std::string>().rfind("job", 0) == 0)
      ++succeeded;
    else if (finished - succeeded <= 3)
      ADD_FAILURE() << "job " << id << ": " << j.dump().substr(0, 2000);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("load: %d jobs, %d clients, %.1f s, %.1f jobs/s, %d refusals (429)\n", jobs, clients, seconds,
              jobs / seconds, refused.load());
  EXPECT_EQ(finished, jobs);
  EXPECT_EQ(succeeded, jobs);
  EXPECT_EQ(svc.stop(), 0);
  // Nothing left: no sandbox processes, no airlock job directories, chains intact.
  // A uid lease is host-wide: once a job ended, a sandbox of another airlock on
  // this host (in its own airlock/<id> cgroup) may hold the same uid. Any
  // other process of the uid, or one in a cgroup of these jobs, is a leftover.
  auto foreign = [&](pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
    for (std::string line; std::getline(in, line);) {
      size_t at = line.find("/airlock/");
      if (at == std::string::npos) continue;
      std::string id = line.substr(at + 9);
      id = id.substr(0, id.find('/'));
      return !id.empty() && !record_ids.count(id);
    }
    return false;
  };
  for (uid_t u : job_uids) {
    std::vector<pid_t> left;
    for (pid_t pid : processes_of_uid(u))
      if (!foreign(pid)) left.push_back(pid);
    EXPECT_TRUE(left.empty()) << "uid " << u << ": " << left.size() << " process(es) left, e.g. pid "
                              << (left.empty() ? 0 : left[0]);
  }
  int left = 0;
  if (DIR* d = ::opendir((svc.state_dir() + "/jobs").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++left;
    ::closedir(d);
  }
  EXPECT_EQ(left, 0);
  auto verify = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
}
