// Durability of what the service reported (docs/store.md "Durability"): a job
// whose response or whose event stream said it finished is found finished,
// with the same outcome and record, after a SIGKILL of the service right
// after and a restart on the same data; and a SIGKILL in the middle of a load
// of several tenants leaves every job terminal exactly once, the running ones
// ended as sandbox_error by the restart, every chain verified, and nothing of
// the killed service behind.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "process_tree.h"
#include "service_fixture.h"
#include "store/store.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

// Waits until every process that was below the killed service is gone.
void expect_tree_gone(const std::vector<TreeProc>& below) {
  std::vector<TreeProc> left;
  for (int waited = 0; waited <= 5000; waited += 20) {
    left.clear();
    for (const auto& p : below)
      if (still_running(p)) left.push_back(p);
    if (left.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& p : left) ADD_FAILURE() << "process " << p.pid << " outlived the killed service";
}

json get_job(HttpClient& http, const TestKey& key, const std::string& id) {
  auto r = http.request("GET", "/v1/jobs/" + id, "", key.auth());
  EXPECT_EQ(r.status, 200) << id << " " << r.body;
  return r.status == 200 ? r.json() : json::object();
}

}  // namespace

TEST(ServiceDurability, AJobTheWaitResponseSaidFinishedSurvivesASigkillRightAfter) {
  ServiceProcess svc;
  HttpClient http = svc.client();
  auto r = http.request("POST", "/v1/jobs", json{{"command", {"sh", "-c", "echo kept"}}, {"wait_s", 30}}.dump(),
                        svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  json said = r.json();
  ASSERT_EQ(said["state"], "finished") << said.dump();
  ASSERT_EQ(said["outcome"], "succeeded") << said.dump();
  svc.kill_hard();  // by its pid, at once: no time for a checkpoint or a clean stop

  svc.start();
  HttpClient again = svc.client();
  json found = get_job(again, svc.alpha, said["id"]);
  EXPECT_EQ(found["state"], "finished");
  EXPECT_EQ(found["outcome"], said["outcome"]);
  EXPECT_EQ(found["record"].dump(), said["record"].dump());
  EXPECT_EQ(found["record"]["stdout"], said["record"]["stdout"]);
}

TEST(ServiceDurability, AJobTheEventStreamSaidFinishedSurvivesASigkillRightAfter) {
  ServiceProcess svc;
  HttpClient http = svc.client();
  auto r = http.request("POST", "/v1/jobs", json{{"command", {"sh", "-c", "echo streamed; exit 3"}}}.dump(),
                        svc.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string id = r.json()["id"];
  json end;
  {
    auto events = http.open_events("/v1/jobs/" + id + "/events", svc.alpha.auth());
    ASSERT_EQ(events.status(), 200);
    while (auto e = events.next(30000)) {
      if (e->event == "end") {
        end = json::parse(e->data);
        break;
      }
    }
  }
  ASSERT_EQ(end["state"], "finished") << end.dump();
  ASSERT_EQ(end["outcome"], "failed") << end.dump();  // exit 3: a failure the stream reported
  svc.kill_hard();

  svc.start();
  HttpClient again = svc.client();
  json found = get_job(again, svc.alpha, id);
  EXPECT_EQ(found["state"], "finished");
  EXPECT_EQ(found["outcome"], end["outcome"]);
  ASSERT_TRUE(found.contains("record")) << found.dump();
  EXPECT_EQ(found["record"]["exit_code"], 3) << found["record"].dump();
}

// What the clients learnt, shared with the killer.
struct Load {
  std::mutex mu;
  std::condition_variable changed;
  uint16_t port = 0;
  int generation = 0;
  std::map<int, std::string> id_of;          // logical job -> id
  std::map<std::string, const TestKey*> key_of;  // id -> its tenant's key
  int accepted = 0;
  std::map<std::string, std::string> said_finished;  // id -> record (dump) a wait response showed
  std::vector<std::string> problems;
  bool abandon = false;
};

TEST(ServiceDurability, ASigkillMidLoadLeavesEveryJobTerminalOnceAndEveryChainIntact) {
  // The kill comes once 40 wait responses said finished (so that some
  // finished, some run and some are queued at that moment).
  const int jobs = 300, clients = 6, kill_after = 40;
  ServiceProcess svc({"--max-queued", "256"});
  const TestKey* keys[] = {&svc.alpha, &svc.beta, &svc.gamma};
  Load load;
  load.port = svc.port();

  std::vector<std::thread> threads;
  auto join = [&] {
    {
      std::lock_guard lock(load.mu);
      load.abandon = true;
      load.changed.notify_all();
    }
    for (auto& t : threads)
      if (t.joinable()) t.join();
  };
  struct Joiner {
    std::function<void()> f;
    ~Joiner() { f(); }
  } joiner{join};
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      for (int i = c; i < jobs; i += clients) {
        const TestKey& key = *keys[i % 3];
        const json body = {{"command", {"/bin/true"}}, {"wait_s", i % 2 ? 10 : 0}};
        // The same Idempotency-Key on a retry: a job the dead service accepted exists once.
        for (int attempt = 0; attempt < 20; ++attempt) {
          uint16_t port;
          int generation;
          {
            std::lock_guard lock(load.mu);
            if (load.abandon) return;
            port = load.port;
            generation = load.generation;
          }
          HttpClient http(port, 15000);
          auto h = key.auth();
          h["idempotency-key"] = "durable-" + std::to_string(i);
          auto r = http.request("POST", "/v1/jobs", body.dump(), h);
          std::unique_lock lock(load.mu);
          if (r.status == 201 || r.status == 200) {
            std::string id = r.json()["id"];
            auto [it, fresh] = load.id_of.emplace(i, id);
            if (fresh) {
              ++load.accepted;
              load.key_of[id] = &key;
            } else if (it->second != id) {
              load.problems.push_back("job " + std::to_string(i) + " got a second id " + id);
            }
            if (r.json()["state"] == "finished") load.said_finished[id] = r.json()["record"].dump();
            load.changed.notify_all();
            break;
          }
          if (r.status == 429) {  // the tenant's queue is full
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            --attempt;
            continue;
          }
          if (r.status != 0 && r.status != 503) {
            load.problems.push_back("job " + std::to_string(i) + ": " + std::to_string(r.status) + " " + r.body);
            break;
          }
          load.changed.wait_for(lock, std::chrono::seconds(10),
                                [&] { return load.generation != generation || load.abandon; });
        }
      }
    });

  {
    std::unique_lock lock(load.mu);
    ASSERT_TRUE(load.changed.wait_for(lock, std::chrono::minutes(2), [&] {
      return static_cast<int>(load.said_finished.size()) >= kill_after || !load.problems.empty();
    })) << load.said_finished.size() << " finished";
    ASSERT_TRUE(load.problems.empty()) << load.problems[0];
  }
  auto below = tree_below(svc.pid());
  auto job_dirs = dir_entries(svc.state_dir() + "/jobs");
  svc.kill_hard();
  expect_tree_gone(below);

  // What the dead service's store holds: finished records, and the jobs it left.
  std::map<std::string, std::string> finished_at_kill;  // id -> record json
  std::map<std::string, airlock::store::JobState> left_at_kill;
  {
    auto store = airlock::store::Store::open(svc.data_dir());
    ASSERT_TRUE(store) << store.error().message();
    auto left = (*store)->unfinished_jobs();
    ASSERT_TRUE(left);
    for (const auto& row : *left) left_at_kill[row.id] = row.state;
    for (const TestKey* key : keys) {
      auto tenant = (*store)->tenant_by_name(key->tenant);  // a TestKey names its tenant
      ASSERT_TRUE(tenant && *tenant) << key->tenant;
      airlock::store::JobFilter f;
      f.limit = 1000;
      f.state = airlock::store::JobState::kFinished;
      auto page = (*store)->jobs((*tenant)->id, f);
      ASSERT_TRUE(page);
      for (const auto& row : page->jobs) {
        auto rec = (*store)->record((*tenant)->id, row.id);
        ASSERT_TRUE(rec && *rec) << row.id << " finished without its record";
        finished_at_kill[row.id] = (*rec)->json;
      }
    }
  }
  int running_at_kill = 0;
  for (const auto& [id, state] : left_at_kill) running_at_kill += state == airlock::store::JobState::kRunning;
  std::map<std::string, std::string> said;
  {
    std::lock_guard lock(load.mu);
    said = load.said_finished;
  }
  // Every finish a response reported is in the dead service's store, as reported.
  for (const auto& [id, record] : said) {
    ASSERT_TRUE(finished_at_kill.contains(id))
        << id << " was reported finished and is not"
        << (left_at_kill.contains(id) ? (left_at_kill[id] == airlock::store::JobState::kRunning ? " (running)" : " (queued)")
                                      : " (missing)")
        << ": " << record;
    EXPECT_EQ(json::parse(finished_at_kill[id]).dump(), record) << id;
  }
  std::printf("durability: killed after %zu reported finished: %zu finished, %d running, %zu queued, %zu processes below\n",
              said.size(), finished_at_kill.size(), running_at_kill, left_at_kill.size() - running_at_kill,
              below.size());

  svc.start();
  {
    std::lock_guard lock(load.mu);
    load.port = svc.port();
    ++load.generation;
    load.changed.notify_all();
  }
  for (auto& t : threads) t.join();
  for (const auto& p : load.problems) ADD_FAILURE() << p;
  ASSERT_EQ(static_cast<int>(load.id_of.size()), jobs);

  HttpClient http = svc.client();
  std::map<std::string, int> outcomes;
  for (const auto& [i, id] : load.id_of) {
    const TestKey& key = *load.key_of[id];
    json j;
    for (int waited = 0; waited < 60000; waited += 20) {
      j = get_job(http, key, id);
      if (j["state"] == "finished") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(j["state"], "finished") << id;
    ASSERT_TRUE(j.contains("record")) << id;
    ++outcomes[j["outcome"]];
    if (auto f = finished_at_kill.find(id); f != finished_at_kill.end()) {
      // Finished before the kill: the same record, never run again.
      EXPECT_EQ(j["record"].dump(), json::parse(f->second).dump()) << id;
    } else if (auto l = left_at_kill.find(id); l != left_at_kill.end() && l->second == airlock::store::JobState::kRunning) {
      EXPECT_EQ(j["outcome"], "sandbox_error") << id;
      EXPECT_EQ(j["record"]["reason"], "service restarted") << j.dump();
    } else {
      // Queued at the kill (it ran after the restart), or submitted after it.
      EXPECT_EQ(j["outcome"], "succeeded") << j.dump();
    }
  }
  // Exactly once: each tenant lists exactly its accepted jobs.
  for (const TestKey* key : keys) {
    size_t expected = 0;
    for (const auto& [id, k] : load.key_of) expected += k == key;
    std::set<std::string> listed;
    for (std::string cursor;;) {
      auto r = http.request("GET", "/v1/jobs?limit=100" + (cursor.empty() ? "" : "&cursor=" + cursor), "", key->auth());
      ASSERT_EQ(r.status, 200) << r.body;
      json page = r.json();
      for (const auto& j : page["jobs"]) listed.insert(j["id"].get<std::string>());
      if (page["next_cursor"].is_null()) break;
      cursor = page["next_cursor"];
    }
    EXPECT_EQ(listed.size(), expected) << key->tenant;
  }
  std::printf("durability: %d jobs: %d succeeded, %d ended by the restart\n", jobs, outcomes["succeeded"],
              outcomes["sandbox_error"]);
  EXPECT_EQ(outcomes["succeeded"] + outcomes["sandbox_error"], jobs);
  EXPECT_EQ(outcomes["sandbox_error"], running_at_kill);

  // Every chain verifies, one record per job; nothing of the killed service is left.
  EXPECT_EQ(svc.stop(), 0);
  auto verify = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(std::to_string(jobs) + " records"), std::string::npos) << verify.out;
  for (const auto& name : dir_entries(svc.state_dir() + "/jobs")) {
    // As in FaultKill: only a directory an airlock was killed while making or
    // removing may wait for the next sweep (it is swept once a minute old).
    std::string path = svc.state_dir() + "/jobs/" + name;
    struct stat st{};
    bool unlocked_removal = name.rfind(".gone-", 0) == 0 && ::stat((path + "/lock").c_str(), &st) != 0;
    EXPECT_TRUE(unlocked_removal || name.rfind(".new-", 0) == 0) << "job directory left: " << name;
  }
  for (const auto& name : job_dirs) EXPECT_EQ(cgroups_named(name), std::vector<std::string>{}) << name;
  for (const auto& [id, state] : left_at_kill) EXPECT_EQ(cgroups_named(id), std::vector<std::string>{}) << id;
  EXPECT_EQ(dir_entries(svc.data_dir() + "/spool"), std::vector<std::string>{});
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);)
    EXPECT_EQ(line.find(svc.state_dir()), std::string::npos) << line;
}
