// The job service's overhead and throughput, measured in one run:
//  1. latency: POST /v1/jobs {"command":["/bin/true"],"wait_s":60} from
//     request to response (the job has ended), against `airlock run -- /bin/true`
//     forked and waited for, alternating, N times each; p50 and p99 of both.
//  2. throughput: 32 clients submit and wait for /bin/true jobs for a fixed
//     time; jobs per second.
// Usage (root): service_bench AIRLOCK_BINARY [N] [SECONDS]
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
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

double time_cli(const std::string& airlock, const std::string& state) {
  auto t = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(airlock.c_str(), airlock.c_str(), "run", "--state-dir", state.c_str(), "--", "/bin/true", nullptr);
    ::_exit(127);
  }
  int status;
  ::waitpid(pid, &status, 0);
  return ms_since(t);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: service_bench AIRLOCK_BINARY [N] [SECONDS]\n");
    return 2;
  }
  std::string airlock = argv[1];
  int n = argc > 2 ? std::atoi(argv[2]) : 200;
  int seconds = argc > 3 ? std::atoi(argv[3]) : 10;
  char tmpl[] = "/var/tmp/airlock-service-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  ::chmod(dir.c_str(), 0711);
  std::string data = dir + "/data", state = dir + "/state";
  ::mkdir(state.c_str(), 0711);

  auto store = airlock::store::Store::open(data);
  if (!store) return std::fprintf(stderr, "store: %s\n", store.error().message().c_str()), 1;
  airlock::store::TenantLimits limits;
  limits.max_running = 64;
  limits.max_queued = 1000;
  auto tenant = (*store)->create_tenant("bench", limits);
  auto key = (*store)->create_key(tenant->id, "bench", {"run", "read"});
  std::string auth = "Bearer " + key->second;
  store->reset();

  int out[2];
  ::pipe(out);
  pid_t daemon = ::fork();
  if (daemon == 0) {
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 2);
    ::execl(airlock.c_str(), airlock.c_str(), "serve", "--listen", "127.0.0.1:0", "--data-dir", data.c_str(),
            "--state-dir", state.c_str(), "--max-queued", "1000", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  auto at = line.find("127.0.0.1:");
  if (at == std::string::npos) return std::fprintf(stderr, "serve did not start: %s\n", line.c_str()), 1;
  uint16_t port = static_cast<uint16_t>(std::stoi(line.substr(at + 10)));

  airlock::testing::HttpClient http(port);
  const std::string body = R"({"command":["/bin/true"],"wait_s":60})";
  std::vector<double> cli, api;
  for (int i = 0; i < 5; ++i) {  // warm-up
    time_cli(airlock, state);
    http.request("POST", "/v1/jobs", body, {{"authorization", auth}});
  }
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    cli.push_back(time_cli(airlock, state));
    auto t = Clock::now();
    auto r = http.request("POST", "/v1/jobs", body, {{"authorization", auth}});
    api.push_back(ms_since(t));
    if (r.status != 201 || r.json()["outcome"] != "succeeded") ++failures;
  }

  std::atomic<int> done{0};
  std::vector<std::unique_ptr<airlock::testing::HttpClient>> clients;
  for (int t = 0; t < 32; ++t) clients.push_back(std::make_unique<airlock::testing::HttpClient>(port));
  double elapsed = airlock::bench::run_for(32, seconds, [&](int t) {
    auto r = clients[t]->request("POST", "/v1/jobs", body, {{"authorization", auth}});
    if (r.status == 201) ++done;
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });

  ::kill(daemon, SIGTERM);
  ::waitpid(daemon, nullptr, 0);
  (void)airlock::sys::remove_tree(dir);

  std::printf("| case | p50 ms | p99 ms |\n|---|---:|---:|\n");
  std::printf("| `airlock run -- /bin/true` (fork, exec, wait) | %.2f | %.2f |\n", pct(cli, 0.5), pct(cli, 0.99));
  std::printf("| `POST /v1/jobs` with wait, until the response | %.2f | %.2f |\n", pct(api, 0.5), pct(api, 0.99));
  std::printf("\nservice adds %.2f ms at p50 (%d runs each, %d failed API jobs)\n", pct(api, 0.5) - pct(cli, 0.5), n,
              failures);
  std::printf("throughput: %d jobs in %.1f s with 32 clients: %.1f jobs/s\n", done.load(), elapsed, done / elapsed);
  return failures ? 1 : 0;
}
