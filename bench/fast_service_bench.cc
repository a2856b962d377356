// Issue 4 through the API: the warm pool and the preloaded interpreter against cold starts,
// measured in one run. Two `airlock serve` daemons on loopback, each with its own data and
// state directory: "pool" with --warm W --preloaded P, "cold" without a pool (its jobs find
// no pool.sock and start cold; a pool's class is only image, interpreter and network, so a
// job on the pool's daemon cannot be made to start cold by its limits).
//  1. latency: POST /v1/jobs {"command":["/bin/true"],"wait_s":60} from request to response,
//     alternating between the two daemons N times each, PAUSE ms after each request (so the
//     pool has refilled before the next warm job); p50 and p99 of both. Every response's
//     record.sandbox.start is checked (warm on "pool", cold on "cold").
//  2. throughput: C clients submit and wait for `python3 -c "print(1)"` for SECONDS on the
//     cold daemon, then for SECONDS on the pool daemon (one at a time); then the same with
//     /bin/true; jobs per second and how the jobs started (a Python job on the pool daemon
//     starts preloaded, or warm/cold when the pool has none ready), and the machine's busy
//     CPU time per job during the window. Before each job's two windows, the same clients
//     run bench/startup.sh's bwrap command line with the job's command, one after another,
//     for SECONDS ("bwrap alone": the sandbox without a service, a record or a store); every
//     row is also a ratio of that baseline.
// --external-pool: the "pool" daemon runs without a pool of its own and a separate
// `airlock pool --warm W --preloaded P` serves its state directory instead (its `airlock run`
// processes find that pool's socket), to tell the pool's cost from where it runs.
// Usage (root): fast_service_bench AIRLOCK_BINARY [--runs N] [--seconds S] [--clients C]
//                 [--pause-ms MS] [--max-running R] [--warm W] [--preloaded P]
//                 [--skip-latency] [--skip-throughput] [--external-pool]
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
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
  std::string airlock;
  int runs = 200, seconds = 10, clients = 32, pause_ms = 20, max_running = 0, warm = 4, preloaded = 4;
  bool latency = true, throughput = true;
  bool external_pool = false;  // the pool as its own `airlock pool` process on the daemon's state dir
};

struct Daemon {
  std::string name, dir;
  pid_t pid = -1;
  pid_t pool_pid = -1;  // --external-pool
  uint16_t port = 0;
  std::string auth;
};

// A tenant and key in a fresh store under `dir`, then `airlock serve` on a free port.
bool start_daemon(const Options& opt, Daemon& d, bool pool) {
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
    auto key = (*store)->create_key(tenant->id, "bench", {"run", "read"});
    d.auth = "Bearer " + key->second;
  }
  std::vector<std::string> args = {opt.airlock, "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
                                   "--state-dir", state, "--max-queued", "1000"};
  if (opt.max_running > 0) args.insert(args.end(), {"--max-running", std::to_string(opt.max_running)});
  if (pool && !opt.external_pool) {
    args.insert(args.end(), {"--warm", std::to_string(opt.warm), "--preloaded", std::to_string(opt.preloaded)});
  }
  airlock::testing::LaunchedServe serve =
      airlock::testing::launch_serve(args, d.dir + "/serve.log", O_TRUNC, 0600);
  d.pid = serve.pid;
  if (serve.port == 0) {
    std::fprintf(stderr, "serve (%s) did not start: %s (see %s/serve.log)\n", d.name.c_str(),
                 serve.first_line.c_str(), d.dir.c_str());
    return false;
  }
  d.port = serve.port;
  if (pool && opt.external_pool) {  // after the serve, whose start sweeps its state directory
    std::string log = d.dir + "/pool.log";
    d.pool_pid = ::fork();
    if (d.pool_pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 2);
      std::string w = std::to_string(opt.warm), p = std::to_string(opt.preloaded);
      ::execl(opt.airlock.c_str(), opt.airlock.c_str(), "pool", "--state-dir", state.c_str(), "--warm", w.c_str(),
              "--preloaded", p.c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 600; ++i) {  // until it says it serves (it is full then)
      std::string text;
      if (FILE* f = std::fopen(log.c_str(), "r")) {
        char buf[4096];
        size_t n = std::fread(buf, 1, sizeof(buf), f);
        text.assign(buf, n);
        std::fclose(f);
      }
      if (text.find("airlock pool: serving") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return true;
}

void stop_daemon(Daemon& d) {
  for (pid_t* p : {&d.pid, &d.pool_pid}) {
    if (*p <= 0) continue;
    ::kill(*p, SIGTERM);
    ::waitpid(*p, nullptr, 0);  // a pool removes its unused sandboxes before it exits
    *p = -1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: fast_service_bench AIRLOCK_BINARY [--runs N] [--seconds S] [--clients C] [--pause-ms MS]\n"
                 "         [--max-running R] [--warm W] [--preloaded P] [--skip-latency] [--skip-throughput]\n"
                 "         [--external-pool]\n");
    return 2;
  }
  opt.airlock = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto num = [&](int& out) {
      if (i + 1 >= argc) std::exit(2);
      out = std::atoi(argv[++i]);
    };
    if (a == "--runs") num(opt.runs);
    else if (a == "--seconds") num(opt.seconds);
    else if (a == "--clients") num(opt.clients);
    else if (a == "--pause-ms") num(opt.pause_ms);
    else if (a == "--max-running") num(opt.max_running);
    else if (a == "--warm") num(opt.warm);
    else if (a == "--preloaded") num(opt.preloaded);
    else if (a == "--skip-latency") opt.latency = false;
    else if (a == "--skip-throughput") opt.throughput = false;
    else if (a == "--external-pool") opt.external_pool = true;
    else return std::fprintf(stderr, "fast_service_bench: unknown option %s\n", a.c_str()), 2;
  }

  char tmpl[] = "/var/tmp/airlock-fast-service-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  ::chmod(dir.c_str(), 0711);
  Daemon pool{.name = "pool", .dir = dir + "/pool"}, cold{.name = "cold", .dir = dir + "/cold"};
  int status = 0;
  auto finish = [&] {
    stop_daemon(pool);
    stop_daemon(cold);
    (void)airlock::sys::remove_tree(dir);
  };
  if (!start_daemon(opt, pool, true) || !start_daemon(opt, cold, false)) {
    finish();
    return 1;
  }

  std::printf("## Fast start, API (`airlock serve`): warm pool vs cold\n\n");
  std::printf("Daemons: \"pool\" with %s `--warm %d --preloaded %d`, \"cold\" without a pool; max_running %s.\n\n",
              opt.external_pool ? "a separate `airlock pool` process on its state directory," : "its own pool,",
              opt.warm, opt.preloaded, opt.max_running > 0 ? std::to_string(opt.max_running).c_str() : "default (cores)");

  if (opt.latency) {
    const std::string body = R"({"command":["/bin/true"],"wait_s":60})";
    airlock::testing::HttpClient hp(pool.port), hc(cold.port);
    for (int i = 0; i < 5; ++i) {  // warm-up
      hp.request("POST", "/v1/jobs", body, {{"authorization", pool.auth}});
      sleep_ms(opt.pause_ms);
      hc.request("POST", "/v1/jobs", body, {{"authorization", cold.auth}});
      sleep_ms(opt.pause_ms);
    }
    std::vector<double> warm_ms, cold_ms;
    std::map<std::string, int> warm_starts, cold_starts;
    for (int i = 0; i < opt.runs; ++i) {
      auto t = Clock::now();
      auto r = hp.request("POST", "/v1/jobs", body, {{"authorization", pool.auth}});
      warm_ms.push_back(ms_since(t));
      ++warm_starts[start_of(r)];
      sleep_ms(opt.pause_ms);
      t = Clock::now();
      r = hc.request("POST", "/v1/jobs", body, {{"authorization", cold.auth}});
      cold_ms.push_back(ms_since(t));
      ++cold_starts[start_of(r)];
      sleep_ms(opt.pause_ms);
    }
    std::printf("### Latency: `POST /v1/jobs` /bin/true with wait, request to response\n\n");
    std::printf("%d runs each, alternating, %d ms pause after each request.\n\n", opt.runs, opt.pause_ms);
    std::printf("| case | p50 ms | p99 ms | p50 / cold | started as |\n|---|---:|---:|---:|---|\n");
    std::printf("| cold (daemon without pool) | %.2f | %.2f | 1.00x | %s |\n", pct(cold_ms, 0.5), pct(cold_ms, 0.99),
                starts_text(cold_starts).c_str());
    std::printf("| warm (daemon with pool) | %.2f | %.2f | %.2fx | %s |\n\n", pct(warm_ms, 0.5), pct(warm_ms, 0.99),
                pct(warm_ms, 0.5) / pct(cold_ms, 0.5), starts_text(warm_starts).c_str());
    if (warm_starts["warm"] != opt.runs || cold_starts["cold"] != opt.runs) status = 1;
  }

  if (opt.throughput) {
    struct Load {
      const char* what;
      std::string body;
      std::vector<std::string> command;
    };
    const Load loads[] = {
        {"`python3 -c \"print(1)\"`", R"j({"command":["python3","-c","print(1)"],"wait_s":120})j",
         {"/usr/bin/python3", "-c", "print(1)"}},
        {"`/bin/true`", R"j({"command":["/bin/true"],"wait_s":120})j", {"/bin/true"}},
    };
    // bench/startup.sh's bwrap command line: the sandbox alone, no service, no record.
    const std::vector<std::string> bwrap = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--ro-bind",
                                            "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink",
                                            "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc",
                                            "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--"};
    const bool have_bwrap = ::access(bwrap[0].c_str(), X_OK) == 0;
    std::printf("### Throughput: %d clients submit and wait, %d s per daemon, one daemon at a time\n\n", opt.clients,
                opt.seconds);
    std::printf("| job | daemon | jobs | seconds | jobs/s | / cold | / bwrap | CPU ms per job | started as |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Load& load : loads) {
      Throughput tb;
      if (have_bwrap) {
        std::vector<std::string> argv = bwrap;
        argv.insert(argv.end(), load.command.begin(), load.command.end());
        tb = spawn_throughput(argv, opt.clients, opt.seconds);
        sleep_ms(500);
      }
      Throughput tc = throughput(cold.port, cold.auth, load.body, opt.clients, opt.seconds);
      sleep_ms(500);
      Throughput tp = throughput(pool.port, pool.auth, load.body, opt.clients, opt.seconds);
      sleep_ms(500);
      double rb = tb.seconds > 0 ? tb.done / tb.seconds : 0.0, rc = tc.done / tc.seconds, rp = tp.done / tp.seconds;
      auto cpu_ms = [](const Throughput& t) { return t.done ? t.cpu_s * 1000 / t.done : 0.0; };
      auto of = [](double a, double b) {
        char text[32] = "-";
        if (b > 0) std::snprintf(text, sizeof(text), "%.2fx", a / b);
        return std::string(text);
      };
      if (have_bwrap)
        std::printf("| %s | none: bwrap alone | %d | %.1f | %.1f | - | 1.00x | %.1f | %s |\n", load.what, tb.done,
                    tb.seconds, rb, cpu_ms(tb), starts_text(tb.starts).c_str());
      std::printf("| %s | cold (without pool) | %d | %.1f | %.1f | 1.00x | %s | %.1f | %s |\n", load.what, tc.done,
                  tc.seconds, rc, of(rc, rb).c_str(), cpu_ms(tc), starts_text(tc.starts).c_str());
      std::printf("| %s | pool | %d | %.1f | %.1f | %.2fx | %s | %.1f | %s |\n", load.what, tp.done, tp.seconds, rp,
                  rc > 0 ? rp / rc : 0.0, of(rp, rb).c_str(), cpu_ms(tp), starts_text(tp.starts).c_str());
    }
    std::printf("\nbwrap alone: the same clients each start bench/startup.sh's bwrap command line with the job's "
                "command and wait for it, one after another: the sandbox without a service, a record or a "
                "store, the ceiling the service's rows are a ratio of.%s\n",
                have_bwrap ? "" : " (not measured: no /usr/bin/bwrap)");
    std::printf("CPU ms per job: busy CPU time of the whole machine (/proc/stat) during the window, per job "
                "(anything else running on the machine is counted too).\n\n");
  }

  finish();
  return status;
}
