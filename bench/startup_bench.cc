// startup_bench: how long does it take to start and finish a trivial command?
//
//   startup_bench [--runs N] [--warmup W] [--pause-ms MS] [--ratio-to NAME]...
//                 [--cpu] [--charge-pid PID]...
//                 --case NAME CMD [ARG...] [--case NAME CMD [ARG...]]...
//
// Each case is fork+exec'd N times (after W untimed warm-up runs), rounds interleaved across
// cases so that drift on the machine affects all of them alike. stdin, stdout and stderr of the
// command are /dev/null. --pause-ms sleeps that long after every run (untimed), e.g. so that a
// warm pool has refilled before the next run takes from it. Prints a Markdown table: median, p90, p99 in milliseconds, failures
// (non-zero exit), and the median's ratio to each --ratio-to case.
// --cpu adds CPU per job, averaged over each case's runs, each run's window
// being from before its fork to the end of its pause (so work a run leaves
// behind, e.g. a pool's refill, is counted with it): "tree" is the command's
// own CPU with its reaped descendants (wait4's rusage) plus the CPU that each
// --charge-pid process (e.g. the warm pool) and its reaped children used in
// the window (/proc/PID/stat); "machine" is all non-idle CPU of the machine
// in the window (/proc/stat), which also sees kernel threads (namespace and
// mount teardown) and anything else running on the machine.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
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
  double tree_cpu_ms = 0, machine_cpu_ms = 0;  // sums over the timed runs
};

struct Options {
  int runs = 200;
  int warmup = 5;
  int pause_ms = 0;
  bool cpu = false;
  std::vector<int> charge_pids;
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
    } else if (a == "--cpu") {
      opt.cpu = true;
    } else if (a == "--charge-pid") {
      opt.charge_pids.push_back(std::atoi(next().c_str()));
      opt.cpu = true;
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

const double kTickMs = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));

// Non-idle CPU of the whole machine so far, in ms (/proc/stat's first line).
double machine_busy_ms() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> sys >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + sys + irq + softirq + steal) * kTickMs;
}

// utime+stime+cutime+cstime of `pid` in ms (0 if it is gone).
double process_tree_ms(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string f;
  double sum = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i >= 14 && i <= 17) sum += std::strtod(f.c_str(), nullptr);
    if (i == 17) break;
  }
  return sum * kTickMs;
}

double charged_ms(const std::vector<int>& pids) {
  double sum = 0;
  for (int pid : pids) sum += process_tree_ms(pid);
  return sum;
}

double rusage_ms(const rusage& ru) {
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1000 + tv.tv_usec / 1000.0; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

// Runs the command once; returns wall milliseconds from before fork to after reaping,
// or a negative number if the command did not exit with status 0. *cpu_ms: the
// command's CPU with its reaped descendants.
double run_once(const std::vector<std::string>& args, double* cpu_ms = nullptr) {
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
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      std::perror("wait4");
      std::exit(1);
    }
  }
  auto end = std::chrono::steady_clock::now();
  if (cpu_ms) *cpu_ms = rusage_ms(ru);
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
      double machine0 = opt.cpu ? machine_busy_ms() : 0;
      double charged0 = opt.cpu ? charged_ms(opt.charge_pids) : 0;
      double own = 0;
      double ms = run_once(c.argv, &own);
      if (ms < 0) {
        ++c.failures;
      } else {
        c.ms.push_back(ms);
      }
      pause(opt.pause_ms);
      if (opt.cpu) {
        c.tree_cpu_ms += own + charged_ms(opt.charge_pids) - charged0;
        c.machine_cpu_ms += machine_busy_ms() - machine0;
      }
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
  if (opt.cpu) std::printf(" CPU ms/job, tree | CPU ms/job, machine |");
  std::printf("\n|---|---:|---:|---:|---:|");
  for (size_t i = 0; i < opt.ratio_to.size() + (opt.cpu ? 2 : 0); ++i) std::printf("---:|");
  std::printf("\n");
  for (const Case& c : opt.cases) {
    if (c.ms.empty()) {
      std::printf("| %s | - | - | - | %d |", c.name.c_str(), c.failures);
      for (size_t i = 0; i < baselines.size() + (opt.cpu ? 2 : 0); ++i) std::printf(" - |");
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
    if (opt.cpu) {
      double n = static_cast<double>(opt.runs);
      std::printf(" %.2f | %.2f |", c.tree_cpu_ms / n, c.machine_cpu_ms / n);
    }
    std::printf("\n");
  }
  std::printf("\nCommands:\n\n");
  for (const Case& c : opt.cases) std::printf("- %s: `%s`\n", c.name.c_str(), command_line(c).c_str());
  bool any_failed = std::ranges::any_of(opt.cases, [](const Case& c) { return c.failures > 0; });
  return any_failed ? 1 : 0;
}
