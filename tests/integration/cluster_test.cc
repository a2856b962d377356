// Many machines (issue 17) on one box: one API node and three workers, each
// `airlock serve` in a network namespace of its own (tests/support/cluster_net.h),
// the rows and the queue in a real PostgreSQL on the hub, one content
// directory shared by every node. The client talks only to the API node.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "process_tree.h"
#include "run_helpers.h"
#include "store/postgres.h"
#include "store/store.h"
#include "support/cluster_net.h"

using namespace airlock::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Rows read straight from the cluster's database (over the server's unix socket).
class Sql {
 public:
  explicit Sql(const std::string& url) {
    auto c = airlock::store::open_postgres(url);
    if (!c) throw std::runtime_error(c.error().message());
    db_ = std::move(*c);
  }
  // The rows; a server away for a moment (the kill test restarts it) is waited for, 30 s at most.
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::string why;
    for (int attempt = 0; attempt < 300; ++attempt) {
      if (auto out = try_rows(sql, &why)) return *out;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error(sql + ": " + why);
  }
  std::optional<std::vector<std::vector<std::string>>> try_rows(const std::string& sql, std::string* why) {
    std::vector<std::vector<std::string>> out;
    auto s = db_->prepare(sql);
    if (!s) return *why = s.error().message(), std::nullopt;
    while (true) {
      auto more = s->step();
      if (!more) return *why = more.error().message(), std::nullopt;
      if (!*more) break;
      std::vector<std::string> row;
      for (int i = 0; i < columns_of(sql); ++i) row.push_back(s->text(i));
      out.push_back(std::move(row));
    }
    return out;
  }
  int64_t number(const std::string& sql) { return std::stoll(rows(sql).at(0).at(0)); }

 private:
  // Columns between SELECT and FROM, counted by top-level commas (the test's own constant SQL).
  static int columns_of(const std::string& sql) {
    auto from = sql.find(" FROM ");
    int depth = 0, n = 1;
    for (size_t i = 0; i < from && i < sql.size(); ++i) {
      if (sql[i] == '(') ++depth;
      else if (sql[i] == ')') --depth;
      else if (sql[i] == ',' && depth == 0) ++n;
    }
    return n;
  }
  std::unique_ptr<airlock::store::Connection> db_;
};

struct Key {
  std::string tenant_id, secret;
  std::map<std::string, std::string> auth() const { return {{"authorization", "Bearer " + secret}}; }
};

bool forwarding();  // below

// One API node (node 0, "api0") and workers w1..w3 (nodes 1..3) on one database.
class Cluster {
 public:
  static constexpr int kWorkers = 3;
  static constexpr const char* kNodeKey = "cluster-test-node-key-0123456789abcdef";

  explicit Cluster(ClusterNet& net) : net_(net) {
    auto db = net.create_database();
    if (!db) throw std::runtime_error(db.error().message());
    db_ = *db;
    content_ = tmp_.sub("content");
    ::mkdir(content_.c_str(), 0711);
    config_ = tmp_.sub("airlock.toml");
    // A short lease so that a lost worker is noticed within seconds.
    std::string key_line = forwarding() ? std::string("node_key = \"") + kNodeKey + "\"\n" : "";
    write_text(config_, key_line + "node_lease_ms = 3000\nheartbeat_ms = 250\n");
    ::chmod(config_.c_str(), 0600);  // it holds the node key
    auto s = airlock::store::Store::open(data_dir(0), {.database_url = db_.local_url});
    if (!s) throw std::runtime_error("open store: " + s.error().message());
    airlock::store::TenantLimits limits;
    limits.max_running = 16;
    limits.max_queued = 2000;
    for (const char* name : {"alpha", "beta"}) {
      auto t = (*s)->create_tenant(name, limits);
      if (!t) throw std::runtime_error("create tenant: " + t.error().message());
      auto k = (*s)->create_key(t->id, "test", {"run", "read"});
      if (!k) throw std::runtime_error("create key: " + k.error().message());
      keys.push_back({t->id, k->second});
    }
  }

  std::string node_id(int i) const { return i == 0 ? "api0" : "w" + std::to_string(i); }
  std::string data_dir(int i) const { return tmp_.sub("data-" + node_id(i)); }
  std::string state_dir(int i) const { return tmp_.sub("state-" + node_id(i)); }
  const ClusterNet::Database& db() const { return db_; }

  void start(int i, int slots = 3) {
    ::mkdir(state_dir(i).c_str(), 0711);
    std::vector<std::string> argv = {AIRLOCK_BINARY, "serve", "--config", config_, "--role", i == 0 ? "api" : "worker",
                                     "--node-id", node_id(i), "--listen", net_.node_listen(i),
                                     "--data-dir", data_dir(i), "--content-dir", content_, "--state-dir",
                                     state_dir(i), "--database-url", db_.url, "--max-running", std::to_string(slots),
                                     "--max-queued", "5000"};
    auto st = net_.start(i, {argv, state_dir(i)});
    if (!st) throw std::runtime_error(st.error().message());
  }

  // Until the API node's /healthz lists `up` nodes in state up (or the deadline).
  json wait_nodes_up(NetnsHttpClient& api, int up, int timeout_ms = 30000) {
    json h;
    for (auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms); Clock::now() < deadline;) {
      auto r = api.request("GET", "/healthz");
      if (r.status == 200) {
        h = r.json();
        int n = 0;
        for (const auto& node : h.value("nodes", json::array())) n += node.value("state", "") == "up";
        if (n >= up) return h;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return h;
  }

  // `airlock verify` of the chains and of the artifacts they name (in the shared content dir).
  Ran verify() const {
    return run_airlock({"verify", "--data-dir", data_dir(0), "--content-dir", content_, "--database-url", db_.local_url});
  }

  std::vector<Key> keys;

 private:
  ClusterNet& net_;
  TempDir tmp_;
  ClusterNet::Database db_;
  std::string content_, config_;
};

// Whether this airlock forwards between nodes (branch forward: it knows the node key).
bool forwarding() {
  static const bool known = [] {
    TempDir probe;
    write_text(probe.sub("probe.toml"), "node_key = \"probe-probe-probe-probe-probe-probe-0\"\n");
    ::chmod(probe.sub("probe.toml").c_str(), 0600);
    auto r = run_airlock({"serve", "--config", probe.sub("probe.toml"), "--role", "no-such-role"});
    return r.err.find("unknown key 'node_key'") == std::string::npos;
  }();
  return known;
}

// Whether this airlock knows the cluster roles at all (branch roles, issue 17).
bool has_roles() {
  auto r = run_airlock({"serve", "--role", "no-such-role"});
  return r.err.find("must be api, worker or all") != std::string::npos;
}

// The store's time format (RFC 3339 UTC with ms), `ms` ago.
std::string rfc3339_ms_ago(int ms) {
  auto t = std::chrono::system_clock::now() - std::chrono::milliseconds(ms);
  auto ms_total = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms_total / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms_total % 1000));
  return buf;
}

std::unique_ptr<ClusterNet> make_net(std::string* skip, bool durable_postgres = false) {
  if (::geteuid() != 0) {
    *skip = "needs root (network namespaces)";
    return nullptr;
  }
  if (!has_roles()) {
    *skip = "this airlock has no `serve --role` (cluster mode, issue 17) yet";
    return nullptr;
  }
  auto net = ClusterNet::create({.nodes = 1 + Cluster::kWorkers, .durable_postgres = durable_postgres});
  if (!net) {
    if (net.error().kind == airlock::ErrorKind::kNotFound) *skip = net.error().message();
    else ADD_FAILURE() << net.error().message();
    return nullptr;
  }
  return std::move(*net);
}

// What a job is: most do nothing (/bin/true), every 25th writes an output
// the test downloads later, every 40th sleeps so that the killed worker
// surely has started jobs at the moment it dies.
json job_body(int i) {
  if (i % 25 == 0) return {{"command", {"sh", "-c", "echo job-" + std::to_string(i) + " > /output/out.txt"}}};
  if (i % 40 == 7) return {{"command", {"sleep", "2"}}};
  return {{"command", {"true"}}};
}

}  // namespace

TEST(Cluster, ThousandJobsAcrossThreeWorkersEndExactlyOnceWhenOneWorkerIsKilled) {
  std::string skip;
  // Durable: the server is killed too, and must keep what it committed.
  auto net = make_net(&skip, /*durable_postgres=*/true);
  if (!net) {
    if (!skip.empty()) GTEST_SKIP() << skip;
    return;
  }
  Cluster cluster(*net);
  Sql sql(cluster.db().local_url);
  for (int i = 0; i <= Cluster::kWorkers; ++i) ASSERT_NO_THROW(cluster.start(i)) << net->log(i);
  auto api = net->client(0);
  json health = cluster.wait_nodes_up(*api, 1 + Cluster::kWorkers);
  ASSERT_EQ(health.value("role", ""), "api") << health.dump();
  ASSERT_EQ(health["nodes"].size(), 4u) << health.dump();

  // 1,000 jobs, two tenants, four submitting clients on the API node.
  constexpr int kJobs = 1000, kSubmitters = 4;
  const auto started = Clock::now();
  std::vector<std::string> id_of(kJobs);
  std::atomic<int> submitted{0};
  std::mutex problems_mu;
  std::vector<std::string> problems;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kSubmitters; ++t)
    submitters.emplace_back([&, t] {
      auto http = net->client(0);
      for (int i = t; i < kJobs; i += kSubmitters) {
        const Key& key = cluster.keys[i % 2];
        // An Idempotency-Key, as a client that sends again must: an answer
        // lost with a killed API node or server may have been a 201.
        auto headers = key.auth();
        headers["idempotency-key"] = "thousand-" + std::to_string(i);
        for (int attempt = 0;; ++attempt) {
          auto r = http->request("POST", "/v1/jobs", job_body(i).dump(), headers);
          if (r.status == 201 || r.status == 200) {
            id_of[i] = r.json()["id"];
            ++submitted;
            break;
          }
          // The tenant's queue is full (429), the store is away (503
          // store_unavailable), or the API node is being restarted (no answer): back off.
          bool again = r.status == 429 || (r.status == 503 && r.headers.count("retry-after")) || r.status == 0;
          if (again && attempt < 1200) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
          }
          std::lock_guard lock(problems_mu);
          problems.push_back("job " + std::to_string(i) + ": " + std::to_string(r.status) + " " + r.error + r.body);
          break;
        }
      }
    });

  // SIGKILL the API node and the PostgreSQL server too, each once at a random
  // moment (a count of finished jobs), both started again: the same invariant holds.
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  const int64_t api_kill_at = 100 + static_cast<int64_t>(rng() % 500);
  const int64_t pg_kill_at = 100 + static_cast<int64_t>(rng() % 500);
  std::fprintf(stderr, "cluster: seed %u: the API node is killed at %lld finished jobs, PostgreSQL at %lld\n", seed,
               static_cast<long long>(api_kill_at), static_cast<long long>(pg_kill_at));
  std::atomic<bool> chaos_stop{false}, chaos_done{false};
  std::string chaos_problem;
  std::thread chaos([&] {
    bool api_killed = false, pg_killed = false;
    Sql watch(cluster.db().local_url);
    for (auto deadline = Clock::now() + std::chrono::seconds(300);
         Clock::now() < deadline && !(api_killed && pg_killed) && !chaos_stop;) {
      std::string why;
      auto n = watch.try_rows("SELECT count(*) FROM jobs WHERE state = 'finished'", &why);
      int64_t finished = n ? std::stoll(n->at(0).at(0)) : -1;
      if (!api_killed && finished >= api_kill_at) {
        net->kill_hard(0);
        api_killed = true;
        if (auto st = net->restart(0); !st) chaos_problem += "restart the API node: " + st.error().message() + "\n";
      }
      if (!pg_killed && finished >= pg_kill_at) {
        pg_killed = true;
        if (auto st = net->postgres()->kill_hard(); !st) chaos_problem += st.error().message() + "\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        if (auto st = net->postgres()->start_again(); !st) chaos_problem += st.error().message() + "\n";
        std::fprintf(stderr, "cluster: PostgreSQL killed and started again%s\n", chaos_problem.c_str());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!api_killed || !pg_killed) chaos_problem += "the kills never came (too few jobs finished)\n";
    chaos_done = true;
    // The restarted server dies with the thread that forked it (its
    // parent-death signal follows the thread): this one stays to the end.
    while (!chaos_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  // Joined on every way out of the test (a failed assertion, an exception).
  struct JoinAll {
    std::vector<std::thread*> threads;
    std::atomic<bool>* stop;
    ~JoinAll() {
      *stop = true;
      for (auto* t : threads)
        if (t->joinable()) t->join();
    }
  } join_all{{&chaos}, &chaos_stop};
  for (auto& t : submitters) join_all.threads.push_back(&t);

  // SIGKILL worker w2 in the middle: once 400 jobs have finished and it has started jobs running.
  const int victim = 2;
  const std::string victim_id = cluster.node_id(victim);
  bool reached = false;
  for (auto deadline = Clock::now() + std::chrono::seconds(90); Clock::now() < deadline;) {
    int64_t finished = sql.number("SELECT count(*) FROM jobs WHERE state = 'finished'");
    // A sleeper that has run for a moment: its sandbox (cgroups, job directory) surely exists.
    int64_t running = sql.number("SELECT count(*) FROM jobs WHERE state = 'running' AND node_id = '" + victim_id +
                                 "' AND request_json LIKE '%sleep%' AND started_at < '" + rfc3339_ms_ago(300) + "'");
    if (finished >= 400 && running > 0) {
      reached = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto victim_job_dirs = dir_entries(cluster.state_dir(victim) + "/jobs");
  // Its work directory (service/job_service.cc's default for a node): the running jobs' scratch.
  const std::string victim_work = default_work_dir(cluster.data_dir(victim) + "/nodes/" + victim_id);
  auto victim_work_before = dir_entries(victim_work);
  net->kill_hard(victim);
  const auto killed_at = Clock::now();
  for (auto& t : submitters) t.join();
  while (!chaos_done) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(chaos_problem, "");
  ASSERT_TRUE(reached) << "w2 never had a running job after 400 finished";
  for (const auto& p : problems) ADD_FAILURE() << p;
  ASSERT_EQ(submitted.load(), kJobs);

  // What the dead worker held, as the store says the moment it died.
  std::set<std::string> started_on_victim, claimed_by_victim;
  for (const auto& r : sql.rows("SELECT id, state FROM jobs WHERE node_id = '" + victim_id + "' AND state <> 'finished'"))
    (r[1] == "running" ? started_on_victim : claimed_by_victim).insert(r[0]);
  EXPECT_FALSE(started_on_victim.empty());

  // Every job ends.
  int64_t unfinished = -1;
  for (auto deadline = Clock::now() + std::chrono::seconds(120); Clock::now() < deadline;) {
    unfinished = sql.number("SELECT count(*) FROM jobs WHERE state <> 'finished'");
    if (unfinished == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(unfinished, 0) << "jobs still unfinished 120 s after the kill";
  double all_s = std::chrono::duration<double>(Clock::now() - started).count();
  double after_kill_s = std::chrono::duration<double>(Clock::now() - killed_at).count();

  // Exactly once: one row per job submitted, one record per job in the chains, no other job records.
  EXPECT_EQ(sql.number("SELECT count(*) FROM jobs"), kJobs);
  std::map<std::string, int> records_of;
  for (const auto& r : sql.rows("SELECT job_id, count(*) FROM records WHERE job_id <> '' GROUP BY job_id"))
    records_of[r[0]] = std::stoi(r[1]);
  EXPECT_EQ(records_of.size(), static_cast<size_t>(kJobs));
  std::map<std::string, json> record_of;
  std::map<std::string, std::string> outcome_of;
  for (const auto& r : sql.rows("SELECT j.id, j.outcome, r.json FROM jobs j JOIN records r ON r.job_id = j.id")) {
    outcome_of[r[0]] = r[1];
    record_of[r[0]] = json::parse(r[2]);
  }
  std::map<std::string, int> ran_on, lost_on;
  std::map<std::string, int> output_job_on;  // a worker -> one of its jobs with an output
  for (int i = 0; i < kJobs; ++i) {
    const std::string& id = id_of[i];
    ASSERT_EQ(records_of[id], 1) << "job " << i << " " << id;
    const json& rec = record_of[id];
    std::string node = rec.value("node", "");  // top-level (CLUSTER-CONTRACT.md, deviation of roles)
    if (started_on_victim.count(id)) {
      EXPECT_EQ(outcome_of[id], "sandbox_error") << rec.dump();
      EXPECT_EQ(rec.value("reason", ""), "node lost: " + victim_id) << rec.dump();
      EXPECT_EQ(node, victim_id) << rec.dump();
      ++lost_on[node];
      continue;
    }
    EXPECT_EQ(outcome_of[id], "succeeded") << "job " << i << ": " << rec.dump();
    EXPECT_TRUE(node == "w1" || node == "w2" || node == "w3") << rec.dump();
    // A claim the dead worker never started ran on another worker.
    if (claimed_by_victim.count(id)) {
      EXPECT_NE(node, victim_id) << rec.dump();
    }
    ++ran_on[node];
    if (i % 25 == 0 && !output_job_on.count(node)) output_job_on[node] = i;
  }
  for (int w = 1; w <= Cluster::kWorkers; ++w) EXPECT_GT(ran_on[cluster.node_id(w)], 0) << cluster.node_id(w);

  // Downloads from the API node, of outputs each worker made (the shared content dir).
  for (const auto& [node, i] : output_job_on) {
    auto r = api->request("GET", "/v1/jobs/" + id_of[i] + "/outputs/out.txt", "", cluster.keys[i % 2].auth());
    EXPECT_EQ(r.status, 200) << node << " " << r.body;
    EXPECT_EQ(r.body, "job-" + std::to_string(i) + "\n") << node;
  }
  EXPECT_EQ(output_job_on.size(), 3u);
  // And a job's view from the API node names the node that lost it.
  if (!started_on_victim.empty()) {
    const std::string& lost = *started_on_victim.begin();
    std::string tenant_id = sql.rows("SELECT tenant_id FROM jobs WHERE id = '" + lost + "'").at(0).at(0);
    const Key& key = tenant_id == cluster.keys[0].tenant_id ? cluster.keys[0] : cluster.keys[1];
    auto view = api->request("GET", "/v1/jobs/" + lost, "", key.auth());
    ASSERT_EQ(view.status, 200) << view.body;
    EXPECT_EQ(view.json()["outcome"], "sandbox_error");
    EXPECT_EQ(view.json()["record"]["reason"], "node lost: " + victim_id);
  }

  // The chains verify, with many writers appending.
  auto verify = cluster.verify();
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(std::to_string(kJobs) + " records"), std::string::npos) << verify.out;

  // The killed worker, started again with its id, sweeps what its previous life left.
  EXPECT_FALSE(victim_job_dirs.empty());
  ASSERT_TRUE(net->restart(victim)) << net->log(victim);
  cluster.wait_nodes_up(*api, 1 + Cluster::kWorkers);
  for (int waited = 0; waited < 10000; waited += 100) {
    bool clean = true;
    for (const auto& name : dir_entries(cluster.state_dir(victim) + "/jobs"))
      clean = clean && name.rfind(".new-", 0) == 0;  // one being made at the kill waits a minute (jobs/state_dir.cc)
    if (clean) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const auto& name : dir_entries(cluster.state_dir(victim) + "/jobs"))
    EXPECT_EQ(name.rfind(".new-", 0), 0u) << "job directory left: " << name;
  // Its work directory too: the jobs it held were ended by another node's
  // sweep, and it empties the directory when it starts.
  EXPECT_FALSE(victim_work_before.empty()) << victim_work;
  EXPECT_EQ(dir_entries(victim_work), std::vector<std::string>{}) << victim_work;
  for (const auto& id : victim_job_dirs) EXPECT_EQ(cgroups_named(id), std::vector<std::string>{}) << id;
  auto node_row = sql.rows("SELECT state FROM nodes WHERE id = '" + victim_id + "'");
  ASSERT_EQ(node_row.size(), 1u);
  EXPECT_EQ(node_row[0][0], "up");

  std::printf("cluster: %d jobs in %.1f s (%.1f s after the kill); ran on w1 %d, w2 %d, w3 %d; lost on w2 %d; "
              "w2 had claimed %zu unstarted\n",
              kJobs, all_s, after_kill_s, ran_on["w1"], ran_on["w2"], ran_on["w3"], lost_on["w2"],
              claimed_by_victim.size());
  for (int i = Cluster::kWorkers; i >= 0; --i) EXPECT_EQ(net->stop(i), 0) << net->log(i);
}

// A session made on the API node lives on a worker (the API node forwards its
// calls); when that worker dies, the sweep closes it as "node lost".
TEST(Cluster, ASessionIsForwardedToAWorkerAndClosesAsNodeLostWhenTheWorkerIsKilled) {
  std::string skip;
  auto net = make_net(&skip);
  if (!net) {
    if (!skip.empty()) GTEST_SKIP() << skip;
    return;
  }
  if (!forwarding()) GTEST_SKIP() << "this airlock does not forward sessions between nodes yet (no node_key)";
  Cluster cluster(*net);
  Sql sql(cluster.db().local_url);
  for (int i = 0; i <= 2; ++i) ASSERT_NO_THROW(cluster.start(i)) << net->log(i);
  auto api = net->client(0);
  cluster.wait_nodes_up(*api, 3);
  const Key& key = cluster.keys[0];

  auto made = api->request("POST", "/v1/sessions", "{}", key.auth());
  ASSERT_EQ(made.status, 201) << made.error << made.body;
  std::string sid = made.json()["id"];
  auto row = sql.rows("SELECT node_id FROM sessions WHERE id = '" + sid + "'");
  ASSERT_EQ(row.size(), 1u);
  std::string node = row[0][0];
  ASSERT_TRUE(node == "w1" || node == "w2") << "session kept by '" << node << "'";
  int victim = node == "w1" ? 1 : 2;

  // Calls through the API node reach the session's state on its worker.
  auto first = api->request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"x = 20 + 1","wait_s":60})", key.auth());
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.json()["status"], "ok") << first.body;
  auto second = api->request("POST", "/v1/sessions/" + sid + "/execs", R"j({"code":"print(x * 2)","wait_s":60})j", key.auth());
  ASSERT_EQ(second.status, 201) << second.body;
  EXPECT_EQ(second.json()["status"], "ok") << second.body;
  EXPECT_NE(second.body.find("42"), std::string::npos) << second.body;
  // The worker itself refuses a client that is not a node (no node key).
  auto direct = net->client(victim)->request("GET", "/v1/sessions/" + sid, "", key.auth());
  EXPECT_EQ(direct.status, 403) << direct.body;

  net->kill_hard(victim);
  json view;
  for (auto deadline = Clock::now() + std::chrono::seconds(30); Clock::now() < deadline;) {
    auto r = api->request("GET", "/v1/sessions/" + sid, "", key.auth());
    if (r.status == 200 && r.json().value("state", "") == "closed") {
      view = r.json();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(view.value("state", ""), "closed") << "the session of a dead worker stayed open";
  EXPECT_EQ(view.value("close_reason", ""), "node lost: " + node) << view.dump();
  auto late = api->request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"1"})", key.auth());
  EXPECT_TRUE(late.status == 404 || late.status == 410 || late.status == 409) << late.status << " " << late.body;
  auto verify = cluster.verify();
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  ASSERT_TRUE(net->restart(victim)) << net->log(victim);
  for (int i = 2; i >= 0; --i) EXPECT_EQ(net->stop(i), 0) << net->log(i);
}
