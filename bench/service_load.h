// What the benchmarks that load an `airlock serve` through its API share:
// how a job started (from its response), the closed-loop throughput window
// with the machine's busy CPU over it, and their text.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/http_client.h"
#include "timing.h"

namespace airlock::bench {

inline void sleep_ms(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// "cold", "warm", "preloaded" for a job that succeeded; else what went wrong.
inline std::string start_of(const airlock::testing::Response& r) {
  if (r.status != 201) return "http " + std::to_string(r.status);
  try {
    auto j = r.json();
    if (j.value("outcome", "") != "succeeded") return "outcome " + j.value("outcome", "?");
    return j["record"]["sandbox"].value("start", "?");
  } catch (...) {
    return "bad json";
  }
}

inline std::string starts_text(const std::map<std::string, int>& m) {
  std::string s;
  for (auto& [k, v] : m) s += (s.empty() ? "" : ", ") + std::to_string(v) + " " + k;
  return s;
}

// Busy CPU seconds of the whole machine so far (/proc/stat: all but idle and iowait).
inline double machine_busy_s() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return 0;
  unsigned long long v[10] = {};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                      &v[5], &v[6], &v[7], &v[8], &v[9]);
  std::fclose(f);
  if (n < 8) return 0;
  unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];  // user nice system irq softirq steal
  return static_cast<double>(busy) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

struct Throughput {
  int done = 0;
  double seconds = 0;
  double cpu_s = 0;  // busy CPU time of the whole machine during the window
  std::map<std::string, int> starts;
};

// What one try of a closed loop came to: `what` is tallied in starts (when
// counted), and done counts the ones that did the job.
struct Attempt {
  std::string what;
  bool done = false;
  bool counted = true;  // false: not a try (a 429, waited out)
};

// `clients` threads, each with the try `make_client()` gives it, try one
// after another for `seconds`; with the machine's busy CPU over the window.
inline Throughput closed_loop(int clients, int seconds, const std::function<std::function<Attempt()>()>& make_client) {
  std::mutex mu;
  Throughput t;
  double busy0 = machine_busy_s();
  auto started = Clock::now();
  auto until = started + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&] {
      std::function<Attempt()> attempt = make_client();
      while (Clock::now() < until) {
        Attempt a = attempt();
        if (!a.counted) continue;
        std::lock_guard lock(mu);
        ++t.starts[a.what];
        if (a.done) ++t.done;
      }
    });
  }
  for (auto& th : threads) th.join();
  t.seconds = ms_since(started) / 1000;
  t.cpu_s = machine_busy_s() - busy0;
  return t;
}

// `clients` connections each POST `body` to /v1/jobs one after another for
// `seconds` (a 429 waits 20 ms and is not counted); done counts jobs that succeeded.
inline Throughput throughput(uint16_t port, const std::string& auth, const std::string& body, int clients,
                             int seconds) {
  return closed_loop(clients, seconds, [&]() -> std::function<Attempt()> {
    auto h = std::make_shared<airlock::testing::HttpClient>(port, 120'000);
    return [h, &auth, &body] {
      auto r = h->request("POST", "/v1/jobs", body, {{"authorization", auth}});
      if (r.status == 429) {
        sleep_ms(20);
        return Attempt{"", false, false};
      }
      std::string s = start_of(r);
      return Attempt{s, s == "cold" || s == "warm" || s == "preloaded"};
    };
  });
}

// The same closed loop without any service: `clients` threads each start
// `argv` (posix_spawn, stdio to /dev/null) and wait for it, one after another,
// for `seconds`; done counts exits with status 0. With bwrap's command line
// this is the machine's own ceiling for a sandboxed job, the baseline the
// service's jobs/s is a ratio of, measured in the same run.
inline Throughput spawn_throughput(const std::vector<std::string>& argv, int clients, int seconds) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return closed_loop(clients, seconds, [&]() -> std::function<Attempt()> {
    auto actions = std::shared_ptr<posix_spawn_file_actions_t>(new posix_spawn_file_actions_t,
                                                                [](posix_spawn_file_actions_t* a) {
                                                                  posix_spawn_file_actions_destroy(a);
                                                                  delete a;
                                                                });
    posix_spawn_file_actions_init(actions.get());
    for (int fd : {0, 1, 2}) posix_spawn_file_actions_addopen(actions.get(), fd, "/dev/null", O_RDWR, 0);
    return [actions, &args] {
      static char path[] = "PATH=/usr/bin:/bin";
      char* env[] = {path, nullptr};
      pid_t pid = -1;
      if (::posix_spawn(&pid, args[0], actions.get(), nullptr, args.data(), env) != 0) return Attempt{"spawn failed"};
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      return Attempt{ok ? "exit 0" : "failed", ok};
    };
  });
}

}  // namespace airlock::bench
