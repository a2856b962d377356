// The store fails under a running cluster (docs/store.md "When the store
// fails"): the PostgreSQL server stopped, killed, paused (SIGSTOP) or its
// connections cut, while an API node and workers (loopback, ClusterNodes)
// run jobs. After each fault the same invariant holds: every job ends exactly
// once with its record, no slot is held by a job that is not running, no
// healthy node is declared lost, nothing is left in the workers' work
// directories, and no answer given meanwhile carried SQL or the library's
// text (tests/support/http_client.h checks every answer).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "cluster_nodes.h"
#include "store/postgres.h"
#include "support/postgres_server.h"

using namespace airlock::testing;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A fault step that must itself work (the server stops, starts, ...), with its error.
#define ASSERT_OK(expr)                                                 \
  do {                                                                  \
    auto ok_ = (expr);                                                  \
    ASSERT_TRUE(ok_.has_value()) << #expr << ": " << ok_.error().message(); \
  } while (0)

// The cluster's rows, read over the server's unix socket.
class Rows {
 public:
  explicit Rows(const std::string& url) : url_(url) {}
  // The count, or -1 (and a failure of the test) when it cannot be read.
  int64_t count(const std::string& sql) {
    auto c = airlock::store::open_postgres(url_);
    if (!c) return failed(sql, c.error().message());
    auto s = (*c)->prepare(sql);
    if (!s) return failed(sql, s.error().message());
    auto row = s->step();
    if (!row) return failed(sql, row.error().message());
    if (!*row) return failed(sql, "no row");
    return s->int64(0);
  }

 private:
  static int64_t failed(const std::string& sql, const std::string& why) {
    ADD_FAILURE() << sql << ": " << why;
    return -1;
  }

 public:

 private:
  std::string url_;
};

// A server of the test's own (the fault tests stop and kill it), durable, as
// a real server is: a killed server keeps what it committed (the tests' usual
// fsync=off, synchronous_commit=off would lose the last commits to a SIGKILL
// of its WAL writer).
airlock::Result<std::unique_ptr<PostgresServer>> durable_server() {
  PostgresServer::Options options;
  options.durable = true;
  return PostgresServer::start(options);
}

// The skip of a test that needs a server when none is installed.
#define SKIP_WITHOUT_SERVER(pg)                                                                   \
  if (!(pg) && (pg).error().kind == airlock::ErrorKind::kNotFound) GTEST_SKIP() << (pg).error().message(); \
  ASSERT_TRUE(pg) << (pg).error().message()

// A dedicated server, a database on it,
// and a cluster of an API node and `workers` workers with `slots` each.
struct Faulty {
  std::unique_ptr<PostgresServer> pg;
  std::string url, local_url;
  std::unique_ptr<ClusterNodes> cluster;
  std::vector<std::string> workers;

  static std::unique_ptr<Faulty> make(int workers, size_t slots, uint64_t lease_ms, std::string* skip,
                                      uint64_t heartbeat_ms = 200) {
    auto pg = durable_server();
    if (!pg) {
      if (pg.error().kind == airlock::ErrorKind::kNotFound) {
        *skip = pg.error().message();
        return nullptr;
      }
      throw std::runtime_error(pg.error().message());
    }
    auto f = std::make_unique<Faulty>();
    f->pg = std::move(*pg);
    auto url = f->pg->create_database();
    if (!url) throw std::runtime_error(url.error().message());
    f->url = *url;
    f->local_url = f->pg->local_url(f->url.substr(f->url.rfind('/') + 1));
    ClusterOptions o;
    o.database_url = f->url;
    o.node_lease_ms = lease_ms;
    o.heartbeat_ms = heartbeat_ms;
    f->cluster = std::make_unique<ClusterNodes>(o);
    f->cluster->add("api", "api-1");
    for (int i = 1; i <= workers; ++i) {
      f->workers.push_back("w" + std::to_string(i));
      f->cluster->add("worker", f->workers.back(), slots);
    }
    return f;
  }

  // As an SDK does: a 503 with Retry-After (the store away for a moment) is
  // sent again; nothing was admitted.
  std::string submit(const std::string& command) {
    auto api = cluster->client("api-1");
    airlock::api::Response r;
    for (int attempt = 0; attempt < 20; ++attempt) {
      r = api.request("POST", "/v1/jobs", json{{"command", {"sh", "-c", command}}}.dump(), cluster->alpha.auth());
      if (r.status != 503 || !r.headers.count("retry-after")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["id"].get<std::string>() : "";
  }

  // A worker's work directory.
  std::string work_dir(const std::string& node) const {
    return default_work_dir(cluster->data_dir() + "/nodes/" + node);
  }

  // The invariant after a fault: `ids` finished, each once, with a record and
  // `outcome`; nothing unfinished or claimed; no node lost; no work left.
  void expect_settled(const std::vector<std::string>& ids, const std::string& outcome = "succeeded") {
    auto api = cluster->client("api-1");
    for (const auto& id : ids) {
      json j = wait_for_job(api, cluster->alpha, id, "finished", 60000);
      EXPECT_EQ(j["state"], "finished") << id << ": " << j.dump();
      EXPECT_EQ(j["outcome"], outcome) << id << ": " << j.dump();
      EXPECT_TRUE(j.contains("record") && j["record"].is_object()) << id << ": " << j.dump();
    }
    Rows rows(local_url);
    EXPECT_EQ(rows.count("SELECT count(*) FROM jobs WHERE state <> 'finished'"), 0);
    EXPECT_EQ(rows.count("SELECT count(*) FROM jobs WHERE state = 'finished' AND "
                         "(SELECT count(*) FROM records r WHERE r.job_id = jobs.id) <> 1"),
              0)
        << "a finished job without exactly one record";
    EXPECT_EQ(rows.count("SELECT count(*) FROM nodes WHERE state = 'lost'"), 0);
    EXPECT_TRUE(cluster->events("node_lost").empty()) << "a healthy node was declared lost";
    std::map<std::string, int> started;
    for (const auto& e : cluster->events("job_started")) ++started[e["job_id"].get<std::string>()];
    for (const auto& id : ids) EXPECT_EQ(started[id], 1) << "job " << id << " started " << started[id] << " times";
    for (const auto& w : workers) {
      // Each job's directory goes right after its record is stored.
      auto deadline = Clock::now() + std::chrono::seconds(10);
      size_t left = 0;
      do {
        std::error_code ec;
        left = 0;
        for (auto it = std::filesystem::directory_iterator(work_dir(w), ec); !ec && it != std::filesystem::end(it);
             it.increment(ec))
          ++left;
        if (left == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      } while (Clock::now() < deadline);
      EXPECT_EQ(left, 0u) << "left in " << work_dir(w);
    }
  }

  // The next job of the tenant runs: no slot is held by a ghost.
  void expect_a_new_job_runs() {
    auto api = cluster->client("api-1");
    auto r = api.request("POST", "/v1/jobs", json{{"command", {"/bin/echo", "after"}}, {"wait_s", 60}}.dump(),
                         cluster->alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(r.json()["outcome"], "succeeded") << r.body;
  }
};

void wait_running(ClusterNodes& cluster, const std::vector<std::string>& ids) {
  auto api = cluster.client("api-1");
  for (const auto& id : ids) {
    json j = wait_for_job(api, cluster.alpha, id, "running", 30000);
    ASSERT_EQ(j["state"], "running") << j.dump();
  }
}

TEST(StoreFaults, JobsThatEndWhileTheServerIsStoppedKeepTheirRecordsAndFreeTheirSlots) {
  std::string skip;
  auto f = Faulty::make(1, 2, 10000, &skip);
  if (!f) GTEST_SKIP() << skip;
  std::vector<std::string> ids = {f->submit("sleep 1"), f->submit("sleep 1")};
  wait_running(*f->cluster, ids);
  ASSERT_OK(f->pg->stop());
  auto down_at = Clock::now();

  // Meanwhile: 503 store_unavailable with Retry-After, and nothing of SQL or libpq.
  auto api = f->cluster->client("api-1");
  auto r = api.request("GET", "/v1/jobs/" + ids[0], "", f->cluster->alpha.auth());
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.json()["error"]["code"], "store_unavailable") << r.body;
  EXPECT_TRUE(r.headers.count("retry-after")) << r.body;
  auto health = api.request("GET", "/healthz");
  EXPECT_EQ(health.status, 503) << health.body;
  EXPECT_EQ(health.body.find("sql"), std::string::npos) << health.body;
  EXPECT_EQ(health.body.find("connection"), std::string::npos) << health.body;

  std::this_thread::sleep_until(down_at + std::chrono::seconds(2));  // the jobs end meanwhile
  ASSERT_OK(f->pg->start_again());
  f->expect_settled(ids);
  f->expect_a_new_job_runs();
  // The worker kept each ending and stored it once the server was back.
  EXPECT_GE(f->cluster->events("record_not_stored").size(), 1u);
  for (const auto& e : f->cluster->events("record_not_stored")) EXPECT_EQ(e["kept"], true) << e.dump();
  // The detail went to the log, under the reference the client was given.
  EXPECT_FALSE(f->cluster->events("api_error").empty());
}

TEST(StoreFaults, AnOutageLongerThanTheLeaseDeclaresNoHealthyNodeLost) {
  std::string skip;
  // Heartbeats as seldom as the sweeps (each second, as by default): after
  // the outage a sweep often comes before the others' first heartbeat.
  auto f = Faulty::make(2, 1, 2500, &skip, 1000);
  if (!f) GTEST_SKIP() << skip;
  std::vector<std::string> all;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> ids = {f->submit("sleep 1"), f->submit("sleep 1")};
    wait_running(*f->cluster, ids);
    ASSERT_OK(f->pg->stop());
    std::this_thread::sleep_for(std::chrono::milliseconds(4000));  // > the lease; the jobs end meanwhile
    ASSERT_OK(f->pg->start_again());
    f->expect_settled(ids);
    all.insert(all.end(), ids.begin(), ids.end());
  }
  f->expect_settled(all);
  f->expect_a_new_job_runs();
}

TEST(StoreFaults, AKilledServerLosesNoJob) {
  std::string skip;
  auto f = Faulty::make(1, 2, 10000, &skip);
  if (!f) GTEST_SKIP() << skip;
  std::vector<std::string> ids = {f->submit("sleep 1"), f->submit("sleep 1")};
  wait_running(*f->cluster, ids);
  ASSERT_OK(f->pg->kill_hard());  // a crash: the server recovers from its WAL at the next start
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_OK(f->pg->start_again());
  f->expect_settled(ids);
  if (HasFailure()) ADD_FAILURE() << "the server's log:\n" << read_text(f->pg->dir() + "/log");
  f->expect_a_new_job_runs();
}

TEST(StoreFaults, APausedServerAndCutConnectionsAtEveryPhaseLoseNoJob) {
  std::string skip;
  auto f = Faulty::make(2, 2, 3000, &skip);
  if (!f) GTEST_SKIP() << skip;
  // Jobs arrive while the faults come: some are being admitted, claimed,
  // started, finished or recorded when their connection goes.
  std::vector<std::string> ids;
  auto faults_until = Clock::now() + std::chrono::seconds(8);
  int round = 0;
  while (Clock::now() < faults_until) {
    ids.push_back(f->submit(round % 2 ? "echo x" : "sleep 0.3"));
    if (round % 3 == 0) {
      ASSERT_OK(f->pg->cut_connections());
    }
    if (round % 7 == 3) {
      ASSERT_OK(f->pg->pause());
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // < the lease: nobody is lost
      ASSERT_OK(f->pg->resume());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ++round;
  }
  ids.erase(std::remove(ids.begin(), ids.end(), std::string()), ids.end());
  ASSERT_GE(ids.size(), 10u);
  f->expect_settled(ids);
  f->expect_a_new_job_runs();
}

}  // namespace

namespace {

// Reads on a connection that saw the server go, after it came back.
TEST(StoreFaults, AConnectionThatOnlyReadsReconnectsAfterTheServerRestarts) {
  auto pg = durable_server();
  SKIP_WITHOUT_SERVER(pg);
  auto db = airlock::store::open_postgres((*pg)->local_url("postgres"));
  ASSERT_TRUE(db) << db.error().message();
  auto read = [&]() -> airlock::Result<int64_t> {
    auto s = (*db)->prepare("SELECT 41 + 1");
    if (!s) return std::unexpected(s.error());
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    return s->int64(0);
  };
  ASSERT_EQ(read().value_or(-1), 42);
  ASSERT_OK((*pg)->kill_hard());
  // Tried while it is down, as a node does: each try fails, and a failed
  // reconnect must not keep the next ones from working.
  for (int i = 0; i < 3; ++i) {
    auto down = read();
    ASSERT_FALSE(down);
    EXPECT_EQ(down.error().kind, airlock::ErrorKind::kUnavailable) << down.error().message();
  }
  ASSERT_OK((*pg)->start_again());
  airlock::Result<int64_t> up = read();
  for (int attempt = 0; attempt < 3 && !up; ++attempt) up = read();
  ASSERT_TRUE(up) << up.error().message();
  EXPECT_EQ(*up, 42);
}

}  // namespace

namespace {

// One node (role all) on PostgreSQL: the same faults, the same invariant.
TEST(StoreFaults, OnOneNodeJobsRunningAndQueuedThroughAStoppedServerEndOnceWithTheirRecords) {
  auto pg = durable_server();
  SKIP_WITHOUT_SERVER(pg);
  auto url = (*pg)->create_database();
  ASSERT_TRUE(url) << url.error().message();
  ServiceProcess svc({"--database-url", *url, "--max-running", "2"});
  ASSERT_NE(svc.port(), 0) << svc.log();
  HttpClient http(svc.port());
  // Two run, one waits in the queue for a slot that frees while the server is away.
  std::vector<std::string> ids;
  for (const char* command : {"sleep 1", "sleep 1", "echo queued"}) {
    auto r = http.request("POST", "/v1/jobs", json{{"command", {"sh", "-c", command}}}.dump(), svc.alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body;
    ids.push_back(r.json()["id"]);
  }
  for (int i = 0; i < 2; ++i) {
    json j = wait_for_job(http, svc.alpha, ids[i], "running", 30000);
    ASSERT_EQ(j["state"], "running") << j.dump();
  }
  ASSERT_OK((*pg)->stop());
  auto r = http.request("GET", "/v1/jobs/" + ids[0], "", svc.alpha.auth());
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.json()["error"]["code"], "store_unavailable") << r.body;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_OK((*pg)->start_again());
  for (const auto& id : ids) {
    json j = wait_for_job(http, svc.alpha, id, "finished", 60000);
    EXPECT_EQ(j["outcome"], "succeeded") << j.dump();
    EXPECT_TRUE(j.contains("record")) << j.dump();
  }
  json next = run_job(http, svc.alpha, {{"command", {"/bin/echo", "after"}}});
  EXPECT_EQ(next["outcome"], "succeeded") << next.dump();
  // Each job started once and has one record.
  std::string log = svc.log();
  for (const auto& id : ids) {
    size_t starts = 0;
    for (size_t at = log.find("\"job_started\""); at != std::string::npos; at = log.find("\"job_started\"", at + 1)) {
      auto line_end = log.find('\n', at);
      if (log.substr(at, line_end - at).find(id) != std::string::npos) ++starts;
    }
    EXPECT_EQ(starts, 1u) << id;
  }
  auto db = airlock::store::open_postgres((*pg)->local_url(url->substr(url->rfind('/') + 1)));
  ASSERT_TRUE(db) << db.error().message();
  auto s = (*db)->prepare("SELECT count(*) FROM records WHERE job_id <> ''");
  ASSERT_TRUE(s);
  auto row = s->step();
  ASSERT_TRUE(row && *row);
  EXPECT_EQ(s->int64(0), 4);
}

}  // namespace

namespace {

int64_t count_rows(PostgresServer& pg, const std::string& url, const std::string& sql) {
  auto db = airlock::store::open_postgres(pg.local_url(url.substr(url.rfind('/') + 1)));
  if (!db) return ADD_FAILURE() << db.error().message(), -1;
  auto s = (*db)->prepare(sql);
  if (!s) return ADD_FAILURE() << s.error().message(), -1;
  auto row = s->step();
  if (!row || !*row) return ADD_FAILURE() << sql << ": no row", -1;
  return s->int64(0);
}

// A session's call that ends while the server is stopped is stored once it is
// back, and the session's close is stored too (its slot freed).
TEST(StoreFaults, ASessionCallThatEndsWhileTheServerIsStoppedIsStoredWhenItIsBack) {
  auto pg = durable_server();
  SKIP_WITHOUT_SERVER(pg);
  auto url = (*pg)->create_database();
  ASSERT_TRUE(url) << url.error().message();
  ServiceProcess svc({"--database-url", *url});
  ASSERT_NE(svc.port(), 0) << svc.log();
  HttpClient http(svc.port());
  auto created = http.request("POST", "/v1/sessions", "{}", svc.alpha.auth());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string sid = created.json()["id"];
  auto call = http.request("POST", "/v1/sessions/" + sid + "/execs",
                           json{{"code", "import time\ntime.sleep(1.5)\nx = 41"}}.dump(), svc.alpha.auth());
  ASSERT_EQ(call.status, 201) << call.body;
  std::string xid = call.json()["id"];
  ASSERT_OK((*pg)->stop());
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the call ends meanwhile
  ASSERT_OK((*pg)->start_again());
  json ended;
  for (int i = 0; i < 100; ++i) {
    auto r = http.request("GET", "/v1/sessions/" + sid + "/execs/" + xid + "?wait_s=5", "", svc.alpha.auth());
    if (r.status == 200 && r.json().value("state", "") == "finished") {
      ended = r.json();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(ended.value("state", ""), "finished") << ended.dump();
  auto next = http.request("POST", "/v1/sessions/" + sid + "/execs", json{{"code", "x + 1"}, {"wait_s", 60}}.dump(),
                           svc.alpha.auth());
  ASSERT_EQ(next.status, 201) << next.body;
  EXPECT_NE(next.body.find("42"), std::string::npos) << next.body;  // the state went on
  EXPECT_EQ(count_rows(**pg, *url, "SELECT count(*) FROM session_calls WHERE session_id = '" + sid + "'"), 2);
  ASSERT_EQ(http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth()).status, 200);
  int64_t open = -1;
  for (int i = 0; i < 100 && open != 0; ++i) {
    open = count_rows(**pg, *url, "SELECT count(*) FROM sessions WHERE state = 'open'");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(open, 0);
}

}  // namespace
