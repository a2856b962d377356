// startup_bench: how long does it take to start and finish a trivial command?
//
//   startup_bench [--runs N] [--warmup W] [--pause-ms MS] [--ratio-to NAME]...
//                 --case NAME CMD [ARG...] [--case NAME CMD [ARG...]]...
//
// Each case is fork+exec'd N times (after W untimed warm-up runs), rounds interleaved across
// cases so that drift on the machine affects all of them alike. stdin, stdout and stderr of the
// command are /dev/null. --pause-ms sleeps that long after every run (untimed), e.g. so that a
// warm pool has refilled before the next run takes from it. Prints a Markdown table: median, p90, p99 in milliseconds, failures
// (non-zero exit), and the median's ratio to each --ratio-to case.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

struct Case {
  std::string name;
  std::vector<std::string> argv;
  std::vector<double> ms;
  int failures = 0;
};

struct Options {
  int runs = 200;
  int warmup = 5;
  int pause_ms = 0;
  std::vector<std::string> ratio_to;
  std::vector<Case> cases;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "startup_bench: %s\n"
               "usage: startup_bench [--runs N] [--warmup W] [--pause-ms MS] [--ratio-to NAME]... "
               "--case NAME CMD [ARG...] [--case ...]\n",
               msg);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (!opt.cases.empty() && a != "--case") {
      opt.cases.back().argv.emplace_back(a);
    } else if (a == "--runs") {
      opt.runs = std::atoi(next().c_str());
    } else if (a == "--warmup") {
      opt.warmup = std::atoi(next().c_str());
    } else if (a == "--pause-ms") {
      opt.pause_ms = std::atoi(next().c_str());
    } else if (a == "--ratio-to") {
      opt.ratio_to.push_back(next());
    } else if (a == "--case") {
      opt.cases.push_back(Case{.name = next()});
    } else {
      usage("unknown option");
    }
  }
  if (opt.runs <= 0 || opt.warmup < 0 || opt.pause_ms < 0) usage("bad --runs, --warmup or --pause-ms");
  if (opt.cases.empty()) usage("no --case");
  for (const Case& c : opt.cases) {
    if (c.argv.empty()) usage("a --case has no command");
  }
  return opt;
}

// Runs the command once; returns wall milliseconds from before fork to after reaping,
// or a negative number if the command did not exit with status 0.
double run_once(const std::vector<std::string>& args) {
  std::vector<char*> cargv;
  for (const std::string& s : args) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);

  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("waitpid");
      std::exit(1);
    }
  }
  auto end = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(end - start).count();
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok ? ms : -ms;
}

void pause(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::ranges::sort(v);
  // Nearest-rank percentile.
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

std::string command_line(const Case& c) {
  std::string s;
  for (const std::string& a : c.argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);

  for (int round = 0; round < opt.warmup; ++round) {
    for (Case& c : opt.cases) {
      run_once(c.argv);
      pause(opt.pause_ms);
    }
  }
  for (int round = 0; round < opt.runs; ++round) {
    for (Case& c : opt.cases) {
      double ms = run_once(c.argv);
      if (ms < 0) {
        ++c.failures;
      } else {
        c.ms.push_back(ms);
      }
      pause(opt.pause_ms);
    }
  }

  std::vector<double> baselines;
  for (const std::string& name : opt.ratio_to) {
    auto it = std::ranges::find(opt.cases, name, &Case::name);
    if (it == opt.cases.end()) usage("--ratio-to names no case");
    baselines.push_back(it->ms.empty() ? 0 : percentile(it->ms, 50));
  }

  std::printf("%d runs per case (after %d warm-up runs), rounds interleaved", opt.runs, opt.warmup);
  if (opt.pause_ms > 0) std::printf(", %d ms pause after each run", opt.pause_ms);
  std::printf("; times in ms.\n\n");
  std::printf("| case | median | p90 | p99 | failed |");
  for (const std::string& name : opt.ratio_to) std::printf(" median / %s |", name.c_str());
  std::printf("\n|---|---:|---:|---:|---:|");
  for (size_t i = 0; i < opt.ratio_to.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const Case& c : opt.cases) {
    if (c.ms.empty()) {
      std::printf("| %s | - | - | - | %d |", c.name.c_str(), c.failures);
      for (size_t i = 0; i < baselines.size(); ++i) std::printf(" - |");
      std::printf("\n");
      continue;
    }
    double median = percentile(c.ms, 50);
    std::printf("| %s | %.2f | %.2f | %.2f | %d |", c.name.c_str(), median,
                percentile(c.ms, 90), percentile(c.ms, 99), c.failures);
    for (double b : baselines) {
      if (b > 0) {
        std::printf(" %.2fx |", median / b);
      } else {
        std::printf(" - |");
      }
    }
    std::printf("\n");
  }
  std::printf("\nCommands:\n\n");
  for (const Case& c : opt.cases) std::printf("- %s: `%s`\n", c.name.c_str(), command_line(c).c_str());
  bool any_failed = std::ranges::any_of(opt.cases, [](const Case& c) { return c.failures > 0; });
  return any_failed ? 1 : 0;
}
