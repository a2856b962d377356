// Many machines (issue 17), measured on one box in one run (docs/performance.md "Many machines").
//  1. cost per job: an API node and W workers (W = 1, then 3), each `airlock serve` in a network
//     namespace of its own (tests/support/cluster_net.h), their rows and queue in PostgreSQL on
//     the hub. JOBS jobs (/bin/true) submitted to the API node by C clients; the CPU time of
//     the node processes, their jobs and the PostgreSQL server (/proc/PID/stat: utime + stime,
//     and cutime + cstime of what they reaped) per job, and of the whole machine (/proc/stat)
//     per job. The machine has 2 cores: this is cost per job, not speed-up.
//  2. the store on one node: `airlock serve` (role all) on loopback with SQLite, and with a
//     PostgreSQL server on loopback (both durable), alternated ROUNDS times: request-to-end
//     latency of a /bin/true job (POST with wait_s, one at a time, N per round; p50, p90) and
//     jobs/s with C clients for SECONDS.
// Usage (root): cluster_bench AIRLOCK_BINARY [--jobs N] [--clients C] [--rounds R] [--runs N]
//                 [--seconds S] [--skip-cluster] [--skip-store]
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres.h"
#include "store/store.h"
#include "support/cluster_net.h"
#include "support/http_client.h"
#include "support/postgres_server.h"
#include "support/serve_launch.h"
#include "sys/remove_tree.h"

using Clock = std::chrono::steady_clock;
using airlock::testing::ClusterNet;
using airlock::testing::HttpClient;
using airlock::testing::NetnsHttpClient;
using nlohmann::json;

namespace {

struct Options {
  std::string airlock;
  int jobs = 300, clients = 8, rounds = 3, runs = 40, seconds = 8;
  bool cluster = true, store = true;
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

double ticks_s(unsigned long long t) { return static_cast<double>(t) / static_cast<double>(::sysconf(_SC_CLK_TCK)); }

// Busy CPU seconds of the whole machine so far (/proc/stat: all but idle and iowait).
double machine_busy_s() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  in >> cpu >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> v[6] >> v[7];
  return ticks_s(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);  // user nice system irq softirq steal
}

struct ProcTimes {
  pid_t ppid = 0;
  unsigned long long self = 0, reaped = 0;  // utime+stime, cutime+cstime (in ticks)
};

// /proc/PID/stat fields 4 (ppid) and 14-17; the command name may hold spaces, so parse after ')'.
bool proc_times(pid_t pid, ProcTimes& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream s(text.substr(close + 2));
  std::string state;
  long long f[15] = {};
  s >> state;
  for (auto& x : f) s >> x;  // fields 4..18
  out.ppid = static_cast<pid_t>(f[0]);
  out.self = static_cast<unsigned long long>(f[10] + f[11]);
  out.reaped = static_cast<unsigned long long>(f[12] + f[13]);
  return static_cast<bool>(s);
}

// CPU seconds of the processes under `roots` so far: each root's own and reaped time, and the
// own time of every live descendant (a live one's reaped time shows in it; its children's own
// time is counted when they are seen). A child that ends moves its time into its parent's
// reaped time, so the sum stays whole between two samples.
double tree_cpu_s(const std::vector<pid_t>& roots) {
  std::map<pid_t, ProcTimes> all;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
      ProcTimes t;
      if (pid > 0 && proc_times(pid, t)) all[pid] = t;
    }
    ::closedir(d);
  }
  std::set<pid_t> in(roots.begin(), roots.end());
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, t] : all)
      if (!in.count(pid) && in.count(t.ppid)) grew = in.insert(pid).second || grew;
  }
  unsigned long long sum = 0;
  for (pid_t pid : in)
    if (auto it = all.find(pid); it != all.end()) sum += it->second.self + it->second.reaped;
  return ticks_s(sum);
}

struct TenantKey {
  std::string tenant_id, auth;
};

TenantKey make_tenant(airlock::store::Store& s) {
  airlock::store::TenantLimits limits;
  limits.max_running = 64;
  limits.max_queued = 5000;
  auto t = s.create_tenant("bench", limits);
  if (!t) throw std::runtime_error("tenant: " + t.error().message());
  auto k = s.create_key(t->id, "bench", {"run", "read"});
  if (!k) throw std::runtime_error("key: " + k.error().message());
  return {t->id, "Bearer " + k->second};
}

void run_sweep(const Options& opt, const std::string& state) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(opt.airlock.c_str(), opt.airlock.c_str(), "sweep", "--state-dir", state.c_str(), nullptr);
    ::_exit(127);
  }
  if (pid > 0) ::waitpid(pid, nullptr, 0);
}

// ---- 1. cost per job with one and with three workers ------------------------------------

// Whether this airlock has the node key (forwarding between nodes): it is required in cluster
// mode where it exists, an unknown key where it does not. `probe` is written and left for reuse.
bool knows_node_key(const Options& opt, const std::string& probe) {
  std::ofstream(probe) << "node_key = \"probe-probe-probe-probe-probe-probe-0\"\n";
  ::chmod(probe.c_str(), 0600);
  std::string out;
  std::string cmd = opt.airlock + " serve --config " + probe + " --role no-such-role 2>&1";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  return out.find("unknown key 'node_key'") == std::string::npos;
}

struct CostResult {
  int workers = 0, jobs = 0, succeeded = 0;
  double seconds = 0, nodes_cpu_s = 0, pg_cpu_s = 0, machine_cpu_s = 0;
};

CostResult cluster_run(const Options& opt, ClusterNet& net, int workers) {
  CostResult out;
  out.workers = workers;
  auto db = net.create_database();
  if (!db) throw std::runtime_error(db.error().message());
  char tmpl[] = "/tmp/airlock-cluster-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  std::string dir = tmpl;
  // Removed however the run ends (a node that does not start throws).
  struct Remove {
    std::string path;
    ~Remove() { (void)airlock::sys::remove_tree(path); }
  } remove{dir};
  ::chmod(dir.c_str(), 0711);
  std::string content = dir + "/content", config = dir + "/airlock.toml";
  ::mkdir(content.c_str(), 0711);
  if (knows_node_key(opt, config)) std::ofstream(config) << "node_key = \"cluster-bench-node-key-0123456789abcdef\"\n";
  else std::ofstream(config) << "";
  TenantKey key;
  {
    auto s = airlock::store::Store::open(dir + "/data-0", {.database_url = db->local_url});
    if (!s) throw std::runtime_error("store: " + s.error().message());
    key = make_tenant(**s);
  }
  for (int i = 0; i <= workers; ++i) {
    std::string id = i == 0 ? "api0" : "w" + std::to_string(i), state = dir + "/state-" + id;
    ::mkdir(state.c_str(), 0711);
    std::vector<std::string> argv = {opt.airlock, "serve", "--config", config, "--role", i == 0 ? "api" : "worker",
                                     "--node-id", id, "--listen", net.node_listen(i), "--data-dir",
                                     dir + "/data-" + std::to_string(i), "--content-dir", content, "--state-dir",
                                     state, "--database-url", db->url, "--max-queued", "5000"};
    if (auto st = net.start(i, {argv, state}); !st) throw std::runtime_error(st.error().message());
  }
  auto api = net.client(0);
  for (int waited = 0; waited < 30000; waited += 100) {  // until every worker is up
    auto r = api->request("GET", "/healthz");
    int up = 0;
    if (r.status == 200)
      for (const auto& n : r.json().value("nodes", json::array())) up += n.value("role", "") == "worker" && n.value("state", "") == "up";
    if (up == workers) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // past the start's sweeps and warm-up
  auto pg = airlock::store::open_postgres(db->local_url);
  if (!pg) throw std::runtime_error(pg.error().message());
  auto finished = [&] {
    auto s = (*pg)->prepare("SELECT count(*) FROM jobs WHERE state = 'finished'");
    return s && s->step().value_or(false) ? s->int64(0) : -1;
  };
  std::vector<pid_t> node_pids;
  for (int i = 0; i <= workers; ++i) node_pids.push_back(net.pid(i));
  pid_t pg_pid = net.postgres()->pid();

  double nodes0 = tree_cpu_s(node_pids), pg0 = tree_cpu_s({pg_pid}), machine0 = machine_busy_s();
  auto started = Clock::now();
  std::atomic<int> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < opt.clients; ++c)
    clients.emplace_back([&] {
      auto http = net.client(0);
      for (int i; (i = next++) < opt.jobs;) {
        for (int attempt = 0; attempt < 1000; ++attempt) {
          auto r = http->request("POST", "/v1/jobs", R"({"command":["true"]})", {{"authorization", key.auth}});
          if (r.status != 429) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
    });
  for (auto& t : clients) t.join();
  while (finished() < opt.jobs && ms_since(started) < 600'000) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  out.seconds = ms_since(started) / 1000;
  out.nodes_cpu_s = tree_cpu_s(node_pids) - nodes0;
  out.pg_cpu_s = tree_cpu_s({pg_pid}) - pg0;
  out.machine_cpu_s = machine_busy_s() - machine0;
  out.jobs = static_cast<int>(finished());
  if (auto s = (*pg)->prepare("SELECT count(*) FROM jobs WHERE outcome = 'succeeded'"); s && s->step().value_or(false))
    out.succeeded = static_cast<int>(s->int64(0));
  pg->reset();
  for (int i = workers; i >= 0; --i) net.stop(i);
  for (int i = 0; i <= workers; ++i) run_sweep(opt, dir + "/state-" + (i == 0 ? std::string("api0") : "w" + std::to_string(i)));
  return out;
}

// ---- 2. SQLite against PostgreSQL through the service, one node -------------------------

struct Daemon {
  std::string name, dir;
  pid_t pid = -1;
  uint16_t port = 0;
  std::string auth;
};

Daemon start_daemon(const Options& opt, const std::string& name, const std::string& dir, const std::string& url) {
  Daemon d{name, dir};
  std::string data = dir + "/data", state = dir + "/state";
  ::mkdir(dir.c_str(), 0711);
  ::mkdir(state.c_str(), 0711);
  {
    auto s = airlock::store::Store::open(data, {.database_url = url});
    if (!s) throw std::runtime_error("store: " + s.error().message());
    d.auth = make_tenant(**s).auth;
  }
  std::vector<std::string> argv = {opt.airlock, "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
                                   "--state-dir", state, "--max-queued", "5000"};
  if (!url.empty()) argv.insert(argv.end(), {"--database-url", url});
  auto serve = airlock::testing::launch_serve(argv, dir + "/serve.log", O_TRUNC, 0600);
  d.pid = serve.pid;
  if (serve.port == 0) throw std::runtime_error(name + " did not start: " + serve.first_line + " (see " + dir + "/serve.log)");
  d.port = serve.port;
  return d;
}

void stop_daemon(const Options& opt, Daemon& d) {
  if (d.pid <= 0) return;
  ::kill(d.pid, SIGTERM);
  ::waitpid(d.pid, nullptr, 0);
  d.pid = -1;
  run_sweep(opt, d.dir + "/state");
}

bool succeeded(const airlock::testing::Response& r) {
  if (r.status != 201 && r.status != 200) return false;
  try {
    return r.json().value("outcome", "") == "succeeded";
  } catch (...) {
    return false;
  }
}

const char* kWaitedTrue = R"({"command":["true"],"wait_s":60})";

std::vector<double> latencies(const Daemon& d, int runs) {
  std::vector<double> out;
  HttpClient h(d.port, 120'000);
  for (int i = 0; i < runs; ++i) {
    auto t = Clock::now();
    auto r = h.request("POST", "/v1/jobs", kWaitedTrue, {{"authorization", d.auth}});
    if (succeeded(r)) out.push_back(ms_since(t));
    else std::fprintf(stderr, "%s: job failed: %d %s\n", d.name.c_str(), r.status, r.body.substr(0, 200).c_str());
  }
  return out;
}

double jobs_per_s(const Daemon& d, int clients, int seconds) {
  std::atomic<int> done{0};
  auto started = Clock::now();
  auto until = started + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      HttpClient h(d.port, 120'000);
      while (Clock::now() < until) {
        auto r = h.request("POST", "/v1/jobs", kWaitedTrue, {{"authorization", d.auth}});
        if (r.status == 429) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        else if (succeeded(r)) ++done;
      }
    });
  for (auto& t : threads) t.join();
  return done / (ms_since(started) / 1000);
}

void store_bench(const Options& opt) {
  auto pg = airlock::testing::PostgresServer::start({.durable = true});
  if (!pg) throw std::runtime_error("postgres: " + pg.error().message());
  auto url = (*pg)->create_database();
  if (!url) throw std::runtime_error(url.error().message());
  char tmpl[] = "/tmp/airlock-store-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  std::string dir = tmpl;
  ::chmod(dir.c_str(), 0711);
  std::vector<Daemon> daemons = {start_daemon(opt, "sqlite", dir + "/sqlite", ""),
                                 start_daemon(opt, "postgres", dir + "/postgres", *url)};
  std::map<std::string, std::vector<double>> lat;
  std::map<std::string, std::vector<double>> rate;
  for (auto& d : daemons) latencies(d, 5);  // warm-up: first connections, page cache
  for (int round = 0; round < opt.rounds; ++round)
    for (int k = 0; k < 2; ++k) {
      auto& d = daemons[(round + k) % 2];  // alternate which goes first
      auto l = latencies(d, opt.runs);
      lat[d.name].insert(lat[d.name].end(), l.begin(), l.end());
      rate[d.name].push_back(jobs_per_s(d, opt.clients, opt.seconds));
    }
  std::printf("\n## the store on one node (role all, durable), %d rounds alternated\n", opt.rounds);
  std::printf("%-9s %6s %9s %9s %12s %s\n", "store", "n", "p50 ms", "p90 ms", "jobs/s med", "(per round)");
  for (auto& d : daemons) {
    std::string rounds;
    for (double r : rate[d.name]) rounds += (rounds.empty() ? "" : " ") + std::to_string(static_cast<int>(r + 0.5));
    std::printf("%-9s %6zu %9.1f %9.1f %12.1f (%s)\n", d.name.c_str(), lat[d.name].size(), pct(lat[d.name], 0.5),
                pct(lat[d.name], 0.9), pct(rate[d.name], 0.5), rounds.c_str());
  }
  std::printf("postgres/sqlite: p50 latency %.2fx, jobs/s %.2fx\n", pct(lat["postgres"], 0.5) / pct(lat["sqlite"], 0.5),
              pct(rate["postgres"], 0.5) / pct(rate["sqlite"], 0.5));
  for (auto& d : daemons) stop_daemon(opt, d);
  (void)airlock::sys::remove_tree(dir);
}

void cluster_bench(const Options& opt) {
  auto net = ClusterNet::create({.nodes = 4});
  if (!net) throw std::runtime_error("cluster: " + net.error().message());
  std::vector<CostResult> results;
  for (int workers : {1, 3, 1, 3}) {  // twice each, interleaved
    results.push_back(cluster_run(opt, **net, workers));
    const auto& r = results.back();
    std::fprintf(stderr, "workers %d: %d/%d jobs in %.1f s\n", r.workers, r.succeeded, opt.jobs, r.seconds);
  }
  std::printf("\n## cost per job, API node + W workers in network namespaces, PostgreSQL on the hub\n");
  std::printf("%d /bin/true jobs per run, %d clients, 2 runs per W interleaved\n", opt.jobs, opt.clients);
  std::printf("%-3s %5s %7s %8s %14s %12s %15s\n", "W", "ok", "s", "jobs/s", "nodes+jobs ms", "postgres ms",
              "machine ms/job");
  for (const auto& r : results) {
    double n = std::max(1, r.jobs);
    std::printf("%-3d %5d %7.1f %8.1f %14.2f %12.2f %15.2f\n", r.workers, r.succeeded, r.seconds, r.jobs / r.seconds,
                1000 * r.nodes_cpu_s / n, 1000 * r.pg_cpu_s / n, 1000 * r.machine_cpu_s / n);
  }
  auto per_job = [&](int w) {
    std::vector<double> v;
    for (const auto& r : results)
      if (r.workers == w) v.push_back(1000 * (r.nodes_cpu_s + r.pg_cpu_s) / std::max(1, r.jobs));
    return pct(v, 0.5);
  };
  std::printf("CPU per job (nodes + jobs + postgres), 3 workers / 1 worker: %.2fx\n", per_job(3) / per_job(1));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cluster_bench AIRLOCK_BINARY [--jobs N] [--clients C] [--rounds R] [--runs N] "
                         "[--seconds S] [--skip-cluster] [--skip-store]\n");
    return 2;
  }
  Options opt;
  opt.airlock = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--jobs") opt.jobs = value();
    else if (a == "--clients") opt.clients = value();
    else if (a == "--rounds") opt.rounds = value();
    else if (a == "--runs") opt.runs = value();
    else if (a == "--seconds") opt.seconds = value();
    else if (a == "--skip-cluster") opt.cluster = false;
    else if (a == "--skip-store") opt.store = false;
    else return std::fprintf(stderr, "unknown option %s\n", a.c_str()), 2;
  }
  std::printf("cluster_bench: %ld cores, load %s", ::sysconf(_SC_NPROCESSORS_ONLN), [] {
    std::ifstream in("/proc/loadavg");
    static std::string s;
    std::getline(in, s);
    s += "\n";
    return s.c_str();
  }());
  try {
    if (opt.cluster) cluster_bench(opt);
    if (opt.store) store_bench(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cluster_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
