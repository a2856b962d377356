// Group commit in the store, measured in one run: two `airlock serve` daemons,
// one with AIRLOCK_STORE_MAX_BATCH=1 (every write its own transaction and
// fsync) and one with the default (group commit), both synchronous = FULL.
//  1. latency: one client, POST /v1/jobs {"command":["/bin/true"],"wait_s":60}
//     alternating between the two, N times each; p50 and p99 of both.
//  2. throughput: 16 clients for SECONDS on one daemon, then on the other,
//     ROUNDS times interleaved; jobs/s, p50, and the fsync + fdatasync calls
//     of the daemon process counted by perf (syscall tracepoints) per job.
//  3. the store alone (what it allows, without sandboxes): 16 threads each
//     create, start and finish jobs on a Store with max_batch 1 and one with
//     64, SECONDS each, ROUNDS times interleaved; jobs/s and fsyncs per job
//     (perf on this process, and the store's own count of commits).
// Usage (root): group_commit_bench AIRLOCK_BINARY [N] [SECONDS] [ROUNDS]
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
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "support/http_client.h"
#include "sys/remove_tree.h"
#include "timing.h"

using airlock::bench::Clock;
using airlock::bench::ms_since;
using airlock::bench::pct;

namespace {

struct Daemon {
  pid_t pid = -1;
  uint16_t port = 0;
  std::string auth;
};

Daemon start(const std::string& airlock, const std::string& dir, const char* max_batch) {
  Daemon d;
  std::string data = dir + "/data", state = dir + "/state";
  ::mkdir(dir.c_str(), 0711);
  ::mkdir(state.c_str(), 0711);
  {
    auto store = airlock::store::Store::open(data);
    if (!store) return d;
    airlock::store::TenantLimits limits;
    limits.max_running = 64;
    limits.max_queued = 1000;
    auto tenant = (*store)->create_tenant("bench", limits);
    auto key = (*store)->create_key(tenant->id, "bench", {"run", "read"});
    d.auth = "Bearer " + key->second;
  }
  int out[2];
  if (::pipe(out) < 0) return d;
  d.pid = ::fork();
  if (d.pid == 0) {
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 2);
    if (max_batch) ::setenv("AIRLOCK_STORE_MAX_BATCH", max_batch, 1);
    ::execl(airlock.c_str(), airlock.c_str(), "serve", "--listen", "127.0.0.1:0", "--data-dir", data.c_str(),
            "--state-dir", state.c_str(), "--max-queued", "1000", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  if (auto at = line.find("127.0.0.1:"); at != std::string::npos)
    d.port = static_cast<uint16_t>(std::stoi(line.substr(at + 10)));
  return d;
}

// perf counting the fsync and fdatasync calls of `pid` (all its threads) until stop().
class SyncCounter {
 public:
  SyncCounter(pid_t pid, const std::string& file) : file_(file) {
    perf_ = ::fork();
    if (perf_ == 0) {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::string p = std::to_string(pid);
      ::execlp("perf", "perf", "stat", "-x,", "-o", file.c_str(), "-e",
               "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync", "-p", p.c_str(), nullptr);
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // attached
  }
  // The count, or -1 when perf could not count.
  long stop() {
    ::kill(perf_, SIGINT);
    ::waitpid(perf_, nullptr, 0);
    std::ifstream in(file_);
    long total = 0;
    int seen = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("sys_enter_f") == std::string::npos) continue;
      total += std::atol(line.c_str());
      ++seen;
    }
    ::unlink(file_.c_str());
    return seen == 2 ? total : -1;
  }

 private:
  pid_t perf_ = -1;
  std::string file_;
};

struct Round {
  int jobs = 0;
  double seconds = 0;
  long syncs = 0;
  std::vector<double> latencies;
};

const std::string kBody = R"({"command":["/bin/true"],"wait_s":60})";

Round load(const Daemon& d, int seconds, const std::string& perf_file) {
  Round r;
  SyncCounter counter(d.pid, perf_file);
  std::mutex mu;
  std::vector<std::unique_ptr<airlock::testing::HttpClient>> clients;
  for (int t = 0; t < 16; ++t) clients.push_back(std::make_unique<airlock::testing::HttpClient>(d.port));
  r.seconds = airlock::bench::run_for(16, seconds, [&](int t) {
    auto t0 = Clock::now();
    auto resp = clients[t]->request("POST", "/v1/jobs", kBody, {{"authorization", d.auth}});
    double ms = ms_since(t0);
    std::lock_guard lock(mu);
    if (resp.status == 201 && resp.json()["outcome"] == "succeeded") {
      ++r.jobs;
      r.latencies.push_back(ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  r.syncs = counter.stop();
  return r;
}

Round store_load(const std::string& data, size_t max_batch, int seconds, const std::string& perf_file,
                 uint64_t& commits) {
  Round r;
  auto store = airlock::store::Store::open(data, airlock::store::StoreOptions{.max_batch = max_batch});
  if (!store) return r;
  auto tenant = (*store)->create_tenant("bench-" + std::to_string(::getpid()) + "-" + std::to_string(Clock::now().time_since_epoch().count()), {});
  if (!tenant) return r;
  SyncCounter counter(::getpid(), perf_file);
  auto before = (*store)->commit_stats();
  std::atomic<int> jobs{0};
  r.seconds = airlock::bench::run_for(16, seconds, [&](int) {
    airlock::store::JobRow row;
    row.tenant_id = tenant->id;
    row.request_json = kBody;
    auto created = (*store)->create_job(row);
    if (!created) return;
    if (!(*store)->mark_running(created->first.id, 1, "")) return;
    if ((*store)->finish_job(created->first.id, "succeeded", "", R"({"outcome":"succeeded"})", {})) ++jobs;
  });
  r.syncs = counter.stop();
  r.jobs = jobs;
  commits = (*store)->commit_stats().batches - before.batches;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: group_commit_bench AIRLOCK_BINARY [N] [SECONDS] [ROUNDS]\n");
    return 2;
  }
  std::string airlock = argv[1];
  int n = argc > 2 ? std::atoi(argv[2]) : 100;
  int seconds = argc > 3 ? std::atoi(argv[3]) : 10;
  int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
  char tmpl[] = "/var/tmp/airlock-commit-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  ::chmod(dir.c_str(), 0711);
  Daemon alone = start(airlock, dir + "/alone", "1");
  Daemon grouped = start(airlock, dir + "/grouped", nullptr);
  if (!alone.port || !grouped.port) return std::fprintf(stderr, "serve did not start\n"), 1;
  const Daemon* daemons[2] = {&alone, &grouped};
  const char* names[2] = {"every write alone (max_batch 1)", "group commit (max_batch 64)"};

  // 1. One client, alternating request by request.
  std::vector<double> serial[2];
  int failures = 0;
  for (int i = 0; i < n + 5; ++i)
    for (int k = 0; k < 2; ++k) {
      airlock::testing::HttpClient http(daemons[k]->port);
      auto t = Clock::now();
      auto r = http.request("POST", "/v1/jobs", kBody, {{"authorization", daemons[k]->auth}});
      double ms = ms_since(t);
      if (r.status != 201 || r.json()["outcome"] != "succeeded") ++failures;
      if (i >= 5) serial[k].push_back(ms);  // the first 5 warm up
    }

  // 2. 16 clients, one daemon at a time, interleaved.
  Round total[2];
  for (int round = 0; round < rounds; ++round)
    for (int k = 0; k < 2; ++k) {
      Round r = load(*daemons[k], seconds, dir + "/perf.txt");
      std::printf("round %d, %s: %d jobs in %.1f s (%.1f jobs/s), p50 %.1f ms, %ld fsyncs\n", round, names[k], r.jobs,
                  r.seconds, r.jobs / r.seconds, pct(r.latencies, 0.5), r.syncs);
      std::fflush(stdout);
      total[k].jobs += r.jobs;
      total[k].seconds += r.seconds;
      total[k].syncs = (r.syncs < 0 || total[k].syncs < 0) ? -1 : total[k].syncs + r.syncs;
      total[k].latencies.insert(total[k].latencies.end(), r.latencies.begin(), r.latencies.end());
    }

  for (const Daemon* d : daemons) {
    ::kill(d->pid, SIGTERM);
    ::waitpid(d->pid, nullptr, 0);
  }

  // 3. The store alone.
  Round store_total[2];
  uint64_t store_commits[2] = {0, 0};
  const size_t batches[2] = {1, 64};
  for (int round = 0; round < rounds; ++round)
    for (int k = 0; k < 2; ++k) {
      uint64_t commits = 0;
      Round r = store_load(dir + "/store-" + std::to_string(k), batches[k], seconds, dir + "/perf.txt", commits);
      std::printf("store round %d, max_batch %zu: %d jobs in %.1f s (%.0f jobs/s), %ld fsyncs, %llu commits\n", round,
                  batches[k], r.jobs, r.seconds, r.jobs / r.seconds, r.syncs, static_cast<unsigned long long>(commits));
      std::fflush(stdout);
      store_total[k].jobs += r.jobs;
      store_total[k].seconds += r.seconds;
      store_total[k].syncs = (r.syncs < 0 || store_total[k].syncs < 0) ? -1 : store_total[k].syncs + r.syncs;
      store_commits[k] += commits;
    }
  (void)airlock::sys::remove_tree(dir);

  std::printf("\n| store | 1 client p50 ms | p99 ms | 16 clients jobs/s | p50 ms | fsyncs per job |\n"
              "|---|---:|---:|---:|---:|---:|\n");
  for (int k = 0; k < 2; ++k)
    std::printf("| %s | %.2f | %.2f | %.1f | %.1f | %.2f |\n", names[k], pct(serial[k], 0.5), pct(serial[k], 0.99),
                total[k].jobs / total[k].seconds, pct(total[k].latencies, 0.5),
                total[k].syncs < 0 ? -1.0 : static_cast<double>(total[k].syncs) / total[k].jobs);
  std::printf("\n| store alone, 16 threads | jobs/s | fsyncs per job | commits per job |\n|---|---:|---:|---:|\n");
  for (int k = 0; k < 2; ++k)
    std::printf("| max_batch %zu | %.0f | %.2f | %.2f |\n", batches[k], store_total[k].jobs / store_total[k].seconds,
                store_total[k].syncs < 0 ? -1.0 : static_cast<double>(store_total[k].syncs) / store_total[k].jobs,
                static_cast<double>(store_commits[k]) / store_total[k].jobs);
  std::printf("store alone: group commit / alone throughput %.2fx\n",
              (store_total[1].jobs / store_total[1].seconds) / (store_total[0].jobs / store_total[0].seconds));
  std::printf("\ngroup commit / alone: throughput %.2fx, 16-client p50 %.2fx, 1-client p50 %.2fx (%d failed)\n",
              (total[1].jobs / total[1].seconds) / (total[0].jobs / total[0].seconds),
              pct(total[1].latencies, 0.5) / pct(total[0].latencies, 0.5), pct(serial[1], 0.5) / pct(serial[0], 0.5),
              failures);
  return failures ? 1 : 0;
}
