// Helpers for integration tests that drive the airlock binary.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::testing {

struct Ran {
  int status = -1;  // exit status, or 128+signal
  std::string out, err;
  nlohmann::json record() const;  // stdout parsed as the job record (--json)
};

// Runs `airlock ARGS...` to completion, capturing stdout and stderr.
Ran run_airlock(const std::vector<std::string>& args);

struct OnTerminal {
  int status = -1;   // exit status, or 128+signal
  std::string seen;  // everything that reached the terminal, byte for byte (no output processing)
};

// Runs ARGV (argv[0] a path) with stdout and stderr on a pseudo-terminal, as
// an operator would, with `env` as its environment (empty: this process's),
// and reads all that reaches the terminal.
OnTerminal run_on_terminal(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

// `airlock ARGS...` started in the background with stdout/stderr to files
// under `dir`. If the test ends before wait() (an assertion failed), the
// destructor kills it and sweeps `state_dir`, so nothing outlives the test.
class Spawned {
 public:
  Spawned(const std::vector<std::string>& args, const std::string& dir, std::string state_dir);
  ~Spawned();
  pid_t pid() const { return pid_; }
  int wait();  // exit status, or 128+signal
  void forget() { waited_ = true; }  // the caller reaped it

 private:
  pid_t pid_;
  std::string state_dir_;
  bool waited_ = false;
};

// A fresh state directory (mode 0711) inside a temp dir; removed by the destructor.
// The work directory `airlock serve` makes for a node whose directory is
// `node_dir` (its data_dir, or data_dir/nodes/NODE in a cluster) when the
// configuration names none: under /run, outside the test's own directories,
// so a fixture removes it after a node it killed.
std::string default_work_dir(const std::string& node_dir);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string state() const { return path_ + "/state"; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The host uid the job of a spawned airlock runs as (its sandbox init is
// airlock's child), waiting up to `timeout_ms` for the job to start; 0 if not.
uid_t job_uid_of(pid_t airlock, int timeout_ms = 5000);
// Pids of live processes (zombies left out) whose real uid is `uid`.
std::vector<pid_t> processes_of_uid(uid_t uid);
// True when no live process of `uid` is left within `timeout_ms`.
bool no_processes_of_uid(uid_t uid, int timeout_ms);
// The host uid of a sandboxed process (uid >= 3000000) whose /proc cmdline
// starts with `cmdline` (NUL-separated words); 0 if none.
uid_t uid_of_sandboxed_command(const std::string& cmdline);
// Cgroup directories named `name` under any hierarchy's airlock parent.
std::vector<std::string> cgroups_named(const std::string& name);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& content);

}  // namespace airlock::testing
