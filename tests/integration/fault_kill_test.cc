// SIGKILL of `airlock serve` at random moments during a load of trivial jobs,
// several times: after each restart every accepted job still ends exactly
// once with a record, what a response said had finished is unchanged, and
// nothing of the killed service is left (processes, job directories,
// cgroups, mounts, work directories). The seed of the kill points is printed;
// AIRLOCK_FAULT_SEED replays a run, AIRLOCK_FAULT_JOBS changes the load
// (default 500 jobs, 5 kills).

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "process_tree.h"
#include "service_fixture.h"
#include "sys/file_io.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// What the clients learnt, shared with the killer.
struct Ledger {
  std::mutex mu;
  std::condition_variable changed;
  uint16_t port = 0;
  int generation = 0;                          // bumped by each restart
  std::map<int, std::string> id_of;            // logical job -> the id the service gave it
  std::map<std::string, std::string> finished;  // id -> record (dump) a response showed finished
  int accepted = 0;
  std::vector<std::string> problems;
  bool abandon = false;  // the test ended early: clients stop
};

// Joins the client threads however the test ends (an early ASSERT included).
struct JoinClients {
  Ledger& ledger;
  std::vector<std::thread>& threads;
  ~JoinClients() {
    {
      std::lock_guard lock(ledger.mu);
      ledger.abandon = true;
      ledger.changed.notify_all();
    }
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
};

}  // namespace

TEST(FaultKill, KilledAtRandomMomentsEveryAcceptedJobEndsOnceWithItsRecord) {
  const int jobs = env_int("AIRLOCK_FAULT_JOBS", 500);
  const int kills = 5;
  const unsigned seed = static_cast<unsigned>(env_int("AIRLOCK_FAULT_SEED", static_cast<int>(std::random_device{}() >> 1)));
  std::printf("fault kill: seed %u (AIRLOCK_FAULT_SEED=%u replays), %d jobs, %d kills\n", seed, seed, jobs, kills);
  SCOPED_TRACE("AIRLOCK_FAULT_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<int> kill_at;  // after this many accepted jobs, plus a random delay
  std::uniform_int_distribution<int> point(1, jobs - 1);
  for (int i = 0; i < kills; ++i) kill_at.push_back(point(rng));
  std::sort(kill_at.begin(), kill_at.end());
  std::uniform_int_distribution<int> delay_ms(0, 40);

  ServiceProcess svc({"--max-queued", "256"});
  Ledger ledger;
  ledger.port = svc.port();
  auto started = std::chrono::steady_clock::now();

  // Clients: each logical job is one Idempotency-Key, retried with the same key
  // when the service died under the request, so an accepted job exists once.
  // Every other one waits for its end (a response that says finished).
  const int clients = 8;
  std::vector<std::thread> threads;
  JoinClients join_clients{ledger, threads};
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int i = c; i < jobs; i += clients) {
        {
          std::lock_guard lock(ledger.mu);
          if (ledger.abandon) return;
        }
        const json body = {{"command", {"/bin/true"}}, {"wait_s", i % 2 ? 10 : 0}};
        for (int attempt = 0;; ++attempt) {
          uint16_t port;
          int generation;
          {
            std::lock_guard lock(ledger.mu);
            port = ledger.port;
            generation = ledger.generation;
          }
          HttpClient http(port, 15000);
          auto r = http.request("POST", "/v1/jobs", body.dump(),
                                {{"authorization", "Bearer " + svc.alpha.secret},
                                 {"idempotency-key", "fault-" + std::to_string(i)}});
          std::unique_lock lock(ledger.mu);
          if (r.status == 201 || r.status == 200) {
            json view = r.json();
            auto [it, fresh] = ledger.id_of.emplace(i, view["id"].get<std::string>());
            if (fresh) ++ledger.accepted;
            else if (it->second != view["id"])
              ledger.problems.push_back("job " + std::to_string(i) + " got a second id " + view["id"].dump());
            if (view["state"] == "finished") ledger.finished[it->second] = view["record"].dump();
            ledger.changed.notify_all();
            break;
          }
          if (r.status == 429) {  // the tenant's queue is full: back off, as Retry-After asks
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            --attempt;
            continue;
          }
          if (r.status != 0 && r.status != 503) {
            ledger.problems.push_back("job " + std::to_string(i) + ": " + std::to_string(r.status) + " " + r.body);
            break;
          }
          // The service died under the request (or is stopping): wait for the next one.
          if (attempt > 20) {
            ledger.problems.push_back("job " + std::to_string(i) + " never got an answer: " + r.error);
            break;
          }
          ledger.changed.wait_for(lock, std::chrono::seconds(10),
                                  [&] { return ledger.generation != generation || ledger.abandon; });
          if (ledger.abandon) return;
        }
      }
    });
  }

  // The killer: SIGKILL at each point, check the dead service's processes are gone, restart.
  std::vector<std::string> killed_job_dirs;  // airlock run job directories at the moment of a kill
  for (int k = 0; k < kills; ++k) {
    {
      std::unique_lock lock(ledger.mu);
      bool reached = ledger.changed.wait_for(lock, std::chrono::minutes(2), [&] {
        return ledger.accepted >= kill_at[k] || !ledger.problems.empty();
      });
      ASSERT_TRUE(reached && ledger.problems.empty())
          << "kill " << k << " waits for " << kill_at[k] << " accepted jobs, " << ledger.accepted << " so far; "
          << (ledger.problems.empty() ? "" : ledger.problems[0]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    auto below = tree_below(svc.pid());
    auto dirs = dir_entries(svc.state_dir() + "/jobs");
    svc.kill_hard();
    killed_job_dirs.insert(killed_job_dirs.end(), dirs.begin(), dirs.end());
    std::vector<TreeProc> survivors;
    for (int waited = 0; waited <= 5000; waited += 20) {
      survivors.clear();
      for (const auto& p : below)
        if (still_running(p)) survivors.push_back(p);
      if (survivors.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (const auto& p : survivors)
      ADD_FAILURE() << "kill " << k << ": process " << p.pid << " (uid " << p.uid << ") outlived the service";
    svc.start();
    std::map<std::string, std::string> seen;
    {
      std::lock_guard lock(ledger.mu);
      ledger.port = svc.port();
      ++ledger.generation;
      seen = ledger.finished;
      ledger.changed.notify_all();
    }
    // What a response said had finished is still there, record unchanged.
    HttpClient http(svc.port());
    for (const auto& [id, record] : seen) {
      auto r = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth());
      ASSERT_EQ(r.status, 200) << "kill " << k << ": job " << id << " " << r.body;
      EXPECT_EQ(r.json()["record"].dump(), record) << "kill " << k << ": job " << id << " changed";
    }
    std::printf("fault kill: kill %d after %d accepted jobs: %zu processes of the service, %zu job directories, %zu "
                "finished jobs checked\n",
                k, kill_at[k], below.size(), dirs.size(), seen.size());
  }
  for (auto& t : threads) t.join();
  for (const auto& p : ledger.problems) ADD_FAILURE() << p;
  ASSERT_EQ(static_cast<int>(ledger.id_of.size()), jobs);

  // Every accepted job ends, exactly once, with a record.
  HttpClient http(svc.port());
  std::map<std::string, int> outcomes;
  for (const auto& [i, id] : ledger.id_of) {
    json j;
    for (int waited = 0; waited < 60000; waited += 20) {
      j = http.request("GET", "/v1/jobs/" + id, "", svc.alpha.auth()).json();
      if (j["state"] == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(j["state"], "finished") << id;
    ASSERT_TRUE(j.contains("record")) << id;
    std::string outcome = j["outcome"];
    ++outcomes[outcome];
    if (outcome != "succeeded") {
      EXPECT_TRUE(outcome == "sandbox_error" && j["record"]["reason"] == "service restarted") << j.dump();
    }
    if (auto it = ledger.finished.find(id); it != ledger.finished.end()) {
      EXPECT_EQ(j["record"].dump(), it->second) << id;
    }
  }
  // No job twice: the tenant has exactly the accepted jobs.
  std::set<std::string> listed;
  for (std::string cursor;;) {
    auto page = http.request("GET", "/v1/jobs?limit=500" + (cursor.empty() ? "" : "&cursor=" + cursor), "",
                             svc.alpha.auth())
                    .json();
    for (const auto& j : page["jobs"]) listed.insert(j["id"].get<std::string>());
    if (page["next_cursor"].is_null()) break;
    cursor = page["next_cursor"];
  }
  EXPECT_EQ(static_cast<int>(listed.size()), jobs);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("fault kill: %d jobs in %.1f s: %d succeeded, %d ended by a restart\n", jobs, seconds,
              outcomes["succeeded"], outcomes["sandbox_error"]);
  EXPECT_GT(outcomes["succeeded"], 0);

  // Nothing left behind once the service stops.
  EXPECT_EQ(svc.stop(), 0);
  auto verify = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(std::to_string(jobs) + " records"), std::string::npos) << verify.out;
  // A job directory is made as ".new-<id>" and renamed "<id>" once locked,
  // and renamed ".gone-<id>" while it is removed. One whose airlock was killed
  // while it was being made, or after its lock file went, is swept only once
  // it is a minute old (jobs/state_dir.cc: a younger one may be a live
  // airlock's), so only such a remainder may be left.
  for (const auto& name : dir_entries(svc.state_dir() + "/jobs")) {
    std::string path = svc.state_dir() + "/jobs/" + name;
    struct stat st{};
    bool unlocked_removal = name.rfind(".gone-", 0) == 0 && ::stat((path + "/lock").c_str(), &st) != 0;
    bool unfinished_creation = name.rfind(".new-", 0) == 0;
    EXPECT_TRUE(unlocked_removal || unfinished_creation) << "job directory left: " << name;
  }
  for (const auto& id : killed_job_dirs) EXPECT_EQ(cgroups_named(id), std::vector<std::string>{}) << id;
  EXPECT_EQ(dir_entries(svc.data_dir() + "/spool"), std::vector<std::string>{});
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);)
    EXPECT_EQ(line.find(svc.state_dir()), std::string::npos) << line;
}

// An upload the service was still receiving when it was killed leaves a
// partial body in the spool; the next start removes it.
TEST(FaultKill, APartialUploadOfAKilledServiceIsRemovedAtTheNextStart) {
  ServiceProcess svc;
  std::string spool = svc.data_dir() + "/spool";
  {
    RawConnection raw(svc.port());
    ASSERT_TRUE(raw.send("POST /v1/files?name=big.txt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                         svc.alpha.secret + "\r\nContent-Length: 10000000\r\n\r\n" + std::string(200000, 'a')));
    for (int waited = 0; waited < 5000 && dir_entries(spool).empty(); waited += 20)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(dir_entries(spool).size(), 1u) << "the body is being spooled";
    svc.kill_hard();
  }
  svc.start();
  EXPECT_EQ(dir_entries(spool), std::vector<std::string>{});
  HttpClient http(svc.port());
  EXPECT_EQ(http.request("POST", "/v1/files?name=after.txt", "after\n", svc.alpha.auth()).status, 201);
}
