// airlock run: parse options, run one job, report it.
#include <pwd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "cmd/airlock/common.h"
#include "jobs/run_job.h"
#include "jobs/state_dir.h"
#include "sys/file_io.h"

using namespace airlock;

namespace {

std::string current_owner() {
  if (const char* sudo = std::getenv("SUDO_USER"); sudo && *sudo) return sudo;
  if (passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return "uid:" + std::to_string(::getuid());
}

// SIGINT, SIGTERM and SIGHUP cancel the job instead of killing airlock.
UniqueFd cancel_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(jobs::kRunUsage, stdout);
    return 0;
  }
  auto request = jobs::parse_run_args(args);
  if (!request) {
    std::fprintf(stderr, "airlock: %s\n", request.error().message().c_str());
    return 125;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "airlock: run needs root (it creates namespaces and cgroups)\n");
    return 125;
  }
  std::string state_dir = request->state_dir.empty() ? jobs::default_state_dir() : request->state_dir;
  auto cgroups = open_cgroups();
  if (!cgroups) return 125;
  sweep_leftovers(state_dir, *cgroups, false);

  UniqueFd cancel = cancel_signals();
  jobs::RunEnvironment env{state_dir, cgroups.get(), current_owner(),
                           request->json ? -1 : STDOUT_FILENO, request->json ? -1 : STDERR_FILENO,
                           cancel.get()};
  jobs::JobRecord record = jobs::run_job(*request, env);
  std::string text = jobs::record_text(record);

  if (!request->record_path.empty()) {
    std::string parent = request->record_path.substr(0, request->record_path.rfind('/') + 1);
    Status st = parent.empty() ? Status{} : sys::make_dirs(parent);
    if (st) st = sys::write_file_atomic(request->record_path, text, 0644);
    if (!st)
      std::fprintf(stderr, "airlock: cannot write the record: %s\n", st.error().message().c_str());
  }
  if (request->json) {
    (void)sys::write_all(STDOUT_FILENO, text);
  } else if (!request->quiet) {
    std::fprintf(stderr, "airlock: job %s %s (%s) in %llu ms; record: %s\n", record.id.c_str(),
                 std::string(jobs::outcome_name(record.outcome)).c_str(), record.reason.c_str(),
                 static_cast<unsigned long long>(record.usage.wall_ms),
                 (request->record_path.empty() ? jobs::record_path(state_dir, record.id)
                                               : request->record_path)
                     .c_str());
  }
  jobs::RunFacts facts;
  facts.exit_code = record.exit_code;
  facts.signal = record.signal;
  return jobs::cli_exit_status(record.outcome, facts);
}
