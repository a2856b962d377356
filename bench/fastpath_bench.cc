// Issue 14 through the API, before and after, in one run: `POST /v1/jobs` on daemons of two
// builds of airlock, interleaved, with bwrap's /bin/true as the baseline of the same run.
// Daemons (each its own data and state directory, loopback, a fresh tenant):
//   base       BASE_BINARY serve --warm W --preloaded P      (the build before a change)
//   new        AIRLOCK_BINARY serve --warm W --preloaded P   (the build after it)
//   new cold   AIRLOCK_BINARY serve without a pool           (the pool must never be worse)
//  1. latency: per round, bwrap /bin/true (fork, exec, wait), then {"command":["/bin/true"],
//     "wait_s":60} on each daemon, PAUSE ms after each (the pools refill); p50, p90, p99, the
//     p50's ratio to bwrap's, and how each job started (checked: warm on the pools, cold on cold).
//  2. throughput: C clients submit and wait for SECONDS per window; per round one window on each
//     daemon (the order rotates each round), for `/bin/true` and `python3 -c "print(1)"`; median
//     jobs/s over the rounds, the ratio to "new cold", and the machine's busy CPU per job.
// Usage (root): fastpath_bench AIRLOCK_BINARY BASE_BINARY [--runs N] [--pause-ms MS] [--rounds R]
//                 [--seconds S] [--clients C] [--warm W] [--preloaded P] [--skip-latency]
//                 [--skip-throughput]
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "support/http_client.h"
#include "support/serve_launch.h"
#include "sys/remove_tree.h"
#include "service_load.h"

using namespace airlock::bench;

namespace {

struct Options {
  std::string airlock, base;
  int runs = 100, pause_ms = 30, rounds = 3, seconds = 5, clients = 16, warm = 4, preloaded = 4;
  bool latency = true, throughput = true;
};

struct Daemon {
  std::string name, binary, dir;
  bool pool = false;
  pid_t pid = -1;
  uint16_t port = 0;
  std::string auth;
};

bool start_daemon(const Options& opt, Daemon& d) {
  std::string data = d.dir + "/data", state = d.dir + "/state";
  ::mkdir(d.dir.c_str(), 0711);
  ::mkdir(state.c_str(), 0711);
  {
    auto store = airlock::store::Store::open(data);
    if (!store) return std::fprintf(stderr, "store: %s\n", store.error().message().c_str()), false;
    airlock::store::TenantLimits limits;
    limits.max_running = 64;
    limits.max_queued = 1000;
    auto tenant = (*store)->create_tenant("bench", limits);
    if (!tenant) return std::fprintf(stderr, "tenant: %s\n", tenant.error().message().c_str()), false;
    auto key = (*store)->create_key(tenant->id, "bench", {"run", "read"});
    if (!key) return std::fprintf(stderr, "key: %s\n", key.error().message().c_str()), false;
    d.auth = "Bearer " + key->second;
  }
  std::vector<std::string> args = {d.binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
                                   "--state-dir", state, "--max-queued", "1000"};
  if (d.pool) args.insert(args.end(), {"--warm", std::to_string(opt.warm), "--preloaded", std::to_string(opt.preloaded)});
  airlock::testing::LaunchedServe serve = airlock::testing::launch_serve(args, d.dir + "/serve.log", O_TRUNC, 0600);
  d.pid = serve.pid;
  if (serve.port == 0) {
    std::fprintf(stderr, "serve (%s) did not start: %s (see %s/serve.log)\n", d.name.c_str(),
                 serve.first_line.c_str(), d.dir.c_str());
    return false;
  }
  d.port = serve.port;
  return true;
}

void stop_daemon(Daemon& d) {
  if (d.pid <= 0) return;
  ::kill(d.pid, SIGTERM);
  ::waitpid(d.pid, nullptr, 0);  // its pool removes the unused sandboxes before it exits
  d.pid = -1;
}

// The record's own split of the job's time: "timing" (the engine) and
// "service_timing" (the service's share), each phase's ms by name.
void add_phases(const airlock::testing::Response& r, std::map<std::string, std::vector<double>>& into) {
  if (r.status != 201) return;
  try {
    auto rec = r.json()["record"];
    for (const char* part : {"timing", "service_timing"})
      if (rec.contains(part))
        for (auto& [name, v] : rec[part].items())
          if (v.is_number()) into[std::string(part) + "." + name].push_back(v.get<double>());
  } catch (...) {
  }
}

// bwrap's /bin/true, the command line of bench/startup.sh; fork to waitpid, stdio on /dev/null.
double bwrap_once() {
  static const char* argv[] = {"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
                               "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                               "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
                               "--tmpfs", "/tmp", "--", "/bin/true", nullptr};
  auto t = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    ::execvp(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  double ms = ms_since(t);
  return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? ms : -1;
}

double load_average() {
  double l = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = 0;
    std::fclose(f);
  }
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: fastpath_bench AIRLOCK_BINARY BASE_BINARY [--runs N] [--pause-ms MS] [--rounds R]\n"
                 "         [--seconds S] [--clients C] [--warm W] [--preloaded P] [--skip-latency] [--skip-throughput]\n");
    return 2;
  }
  opt.airlock = argv[1];
  opt.base = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    auto num = [&](int& out) {
      if (i + 1 >= argc) std::exit(2);
      out = std::atoi(argv[++i]);
    };
    if (a == "--runs") num(opt.runs);
    else if (a == "--pause-ms") num(opt.pause_ms);
    else if (a == "--rounds") num(opt.rounds);
    else if (a == "--seconds") num(opt.seconds);
    else if (a == "--clients") num(opt.clients);
    else if (a == "--warm") num(opt.warm);
    else if (a == "--preloaded") num(opt.preloaded);
    else if (a == "--skip-latency") opt.latency = false;
    else if (a == "--skip-throughput") opt.throughput = false;
    else return std::fprintf(stderr, "fastpath_bench: unknown option %s\n", a.c_str()), 2;
  }

  char tmpl[] = "/var/tmp/airlock-fastpath-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  ::chmod(dir.c_str(), 0711);
  std::vector<Daemon> daemons = {{.name = "new cold", .binary = opt.airlock, .dir = dir + "/new-cold"},
                                 {.name = "new", .binary = opt.airlock, .dir = dir + "/new", .pool = true},
                                 {.name = "base", .binary = opt.base, .dir = dir + "/base", .pool = true}};
  auto finish = [&] {
    for (auto& d : daemons) stop_daemon(d);
    (void)airlock::sys::remove_tree(dir);
  };
  for (auto& d : daemons)
    if (!start_daemon(opt, d)) return finish(), 1;
  int status = 0;
  std::printf("## Before and after through the API (`airlock serve`), bwrap as the baseline\n\n");
  std::printf("new: %s; base: %s; pools `--warm %d --preloaded %d`; load average at the start %.2f.\n\n",
              opt.airlock.c_str(), opt.base.c_str(), opt.warm, opt.preloaded, load_average());

  if (opt.latency) {
    const std::string body = R"({"command":["/bin/true"],"wait_s":60})";
    std::vector<std::unique_ptr<airlock::testing::HttpClient>> clients;
    for (auto& d : daemons) clients.push_back(std::make_unique<airlock::testing::HttpClient>(d.port));
    for (int i = 0; i < 5; ++i)  // warm-up
      for (size_t k = 0; k < daemons.size(); ++k) {
        clients[k]->request("POST", "/v1/jobs", body, {{"authorization", daemons[k].auth}});
        sleep_ms(opt.pause_ms);
      }
    std::vector<double> bwrap_ms;
    std::vector<std::vector<double>> ms(daemons.size());
    std::vector<std::map<std::string, int>> starts(daemons.size());
    std::vector<std::map<std::string, std::vector<double>>> phases(daemons.size());
    int bwrap_failed = 0;
    for (int i = 0; i < opt.runs; ++i) {
      double b = bwrap_once();
      if (b < 0) ++bwrap_failed;
      else bwrap_ms.push_back(b);
      sleep_ms(opt.pause_ms);
      for (size_t k = 0; k < daemons.size(); ++k) {
        auto t = Clock::now();
        auto r = clients[k]->request("POST", "/v1/jobs", body, {{"authorization", daemons[k].auth}});
        ms[k].push_back(ms_since(t));
        ++starts[k][start_of(r)];
        add_phases(r, phases[k]);
        sleep_ms(opt.pause_ms);
      }
    }
    double b50 = pct(bwrap_ms, 0.5);
    std::printf("### Latency: /bin/true, request to response (bwrap: fork to waitpid)\n\n");
    std::printf("%d rounds, interleaved, %d ms pause after each run; load average after %.2f.\n\n", opt.runs,
                opt.pause_ms, load_average());
    std::printf("| case | p50 ms | p90 ms | p99 ms | p50 / bwrap | started as |\n|---|---:|---:|---:|---:|---|\n");
    std::printf("| bwrap | %.2f | %.2f | %.2f | 1.00x | %d failed |\n", b50, pct(bwrap_ms, 0.9), pct(bwrap_ms, 0.99),
                bwrap_failed);
    for (size_t k = 0; k < daemons.size(); ++k) {
      std::printf("| %s | %.2f | %.2f | %.2f | %.2fx | %s |\n", daemons[k].name.c_str(), pct(ms[k], 0.5),
                  pct(ms[k], 0.9), pct(ms[k], 0.99), b50 > 0 ? pct(ms[k], 0.5) / b50 : 0.0,
                  starts_text(starts[k]).c_str());
      if (starts[k][daemons[k].pool ? "warm" : "cold"] != opt.runs) status = 1;
    }
    std::printf("\nWhere the time goes, medians of the records' phases (ms):\n\n| phase |");
    std::map<std::string, int> names;
    for (size_t k = 0; k < daemons.size(); ++k) {
      std::printf(" %s |", daemons[k].name.c_str());
      for (auto& [name, v] : phases[k]) names[name] = 1;
    }
    std::printf("\n|---|");
    for (size_t k = 0; k < daemons.size(); ++k) std::printf("---:|");
    std::printf("\n");
    for (auto& [name, unused] : names) {
      std::printf("| %s |", name.c_str());
      for (size_t k = 0; k < daemons.size(); ++k) {
        auto it = phases[k].find(name);
        if (it == phases[k].end()) std::printf(" - |");
        else std::printf(" %.2f |", pct(it->second, 0.5));
      }
      std::printf("\n");
    }
    std::printf("\n");
  }

  if (opt.throughput) {
    struct Load {
      const char* what;
      std::string body;
    };
    const Load loads[] = {
        {"`/bin/true`", R"j({"command":["/bin/true"],"wait_s":120})j"},
        {"`python3 -c \"print(1)\"`", R"j({"command":["python3","-c","print(1)"],"wait_s":120})j"},
    };
    std::printf("### Throughput: %d clients submit and wait, %d s windows, %d rounds (order rotating)\n\n",
                opt.clients, opt.seconds, opt.rounds);
    std::printf("| job | daemon | jobs/s (median) | rounds | / new cold | CPU ms per job | started as |\n"
                "|---|---|---:|---|---:|---:|---|\n");
    for (const Load& load : loads) {
      std::vector<std::vector<double>> rates(daemons.size()), cpu(daemons.size());
      std::vector<std::map<std::string, int>> starts(daemons.size());
      for (int r = 0; r < opt.rounds; ++r)
        for (size_t j = 0; j < daemons.size(); ++j) {
          size_t k = (j + static_cast<size_t>(r)) % daemons.size();
          Throughput w = throughput(daemons[k].port, daemons[k].auth, load.body, opt.clients, opt.seconds);
          rates[k].push_back(w.done / w.seconds);
          cpu[k].push_back(w.done ? w.cpu_s * 1000 / w.done : 0);
          for (auto& [s, n] : w.starts) starts[k][s] += n;
          sleep_ms(500);  // the pool refills between windows
        }
      double cold = pct(rates[0], 0.5);
      for (size_t k = 0; k < daemons.size(); ++k) {
        std::string each;
        for (double v : rates[k]) each += (each.empty() ? "" : " / ") + std::to_string(static_cast<int>(v + 0.5));
        std::printf("| %s | %s | %.1f | %s | %.2fx | %.1f | %s |\n", load.what, daemons[k].name.c_str(),
                    pct(rates[k], 0.5), each.c_str(), cold > 0 ? pct(rates[k], 0.5) / cold : 0.0, pct(cpu[k], 0.5),
                    starts_text(starts[k]).c_str());
      }
    }
    std::printf("\nLoad average after: %.2f. CPU ms per job: busy CPU of the whole machine (/proc/stat) in the\n"
                "window per job, median over the rounds (anything else running is counted too).\n",
                load_average());
  }
  finish();
  return status;
}
