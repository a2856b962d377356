// airlock run: parse options, run one job, report it.
#include <pwd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/terminal_text.h"
#include "base/unique_fd.h"
#include "cmd/airlock/common.h"
#include "cmd/airlock/terminal_out.h"
#include "jobs/outputs.h"
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

// The record's path inside --output-dir, which no output may take: a job
// that writes /output/record.json/x would make the record unwritable.
Status reserve_record_path(jobs::RunRequest& request) {
  if (request.record_path.empty() || request.output_dir.empty()) return {};
  std::error_code ec;
  auto record = std::filesystem::weakly_canonical(request.record_path, ec);
  auto outputs = ec ? record : std::filesystem::weakly_canonical(request.output_dir, ec);
  if (ec) return fail("cannot resolve --record or --output-dir: " + ec.message());
  auto plain = [](const std::filesystem::path& p) {
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.ends_with('/')) s.pop_back();
    return s;
  };
  auto inside = jobs::path_inside(plain(outputs), plain(record));
  if (!inside) return std::unexpected(inside.error());
  if (*inside) request.policy.outputs.reserved.push_back(**inside);
  return {};
}

// One line on stderr; what the job chose in it is shown inert.
void say(const std::string& line) {
  std::fprintf(stderr, "airlock: %s\n", quoted_text(line).c_str());
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(jobs::kRunUsage, stdout);
    return 0;
  }
  auto request = jobs::parse_run_args(args);
  if (request) {
    if (auto st = reserve_record_path(*request); !st) request = std::unexpected(st.error());
  }
  if (!request) {
    say(request.error().message());
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
  jobs::FinishedJob finished = jobs::run_job(*request, env);
  const jobs::JobRecord& record = finished.record;
  std::string text = jobs::record_text(record);

  // airlock never ends well without the record it was asked for.
  bool recorded = record.stored;
  if (!record.stored) say("cannot store the record in " + state_dir);
  if (!request->record_path.empty()) {
    std::string parent = request->record_path.substr(0, request->record_path.rfind('/') + 1);
    Status st = parent.empty() ? Status{} : sys::make_dirs(parent);
    if (st) st = sys::write_file_atomic(request->record_path, text, 0644);
    if (!st) say("cannot write the record to " + request->record_path + ": " + st.error().message());
    recorded = recorded && st;
  }
  if (request->json) {
    (void)sys::write_all(STDOUT_FILENO, cli::json_shown(STDOUT_FILENO, jobs::to_json(record)) + "\n");
  } else if (!request->quiet) {
    say("job " + record.id + " " + std::string(jobs::outcome_name(record.outcome)) + " (" +
        record.reason + ") in " + std::to_string(record.usage.wall_ms) + " ms; record: " +
        (request->record_path.empty() ? jobs::record_path(state_dir, record.id)
                                      : request->record_path));
    // What the job asks for, one line each (shown inert, like all it chose).
    if (record.data_requests) {
      for (const auto& r : record.data_requests->requests) say("  asks " + r.id + " " + r.name + ": " + r.why);
      for (const auto& f : record.data_requests->refused) say("  refused request: " + f.reason);
    }
  }
  // The removals after the record (its cleanup.after_record) are said here,
  // not in it; the next run's sweep removes what they left.
  for (const auto& failed : finished.teardown_failed)
    say("after the record, cannot remove the sandbox's " + failed + " (airlock sweep removes it)");
  if (!recorded) return 125;
  jobs::RunFacts facts;
  facts.exit_code = record.exit_code;
  facts.signal = record.signal;
  return jobs::cli_exit_status(record.outcome, facts);
}
