#include <cstdio>
#include <string>
#include <vector>

#include "cmd/airlock/common.h"
#include "jobs/state_dir.h"

std::unique_ptr<airlock::sandbox::CgroupBackend> open_cgroups() {
  auto backend = airlock::sandbox::detect_cgroup_backend();
  if (!backend) {
    std::fprintf(stderr, "airlock: cannot use cgroups: %s\n", backend.error().message().c_str());
    return nullptr;
  }
  return std::move(*backend);
}

void sweep_leftovers(const std::string& state_dir, airlock::sandbox::CgroupBackend& cgroups,
                     bool verbose) {
  auto report = airlock::jobs::sweep(state_dir, cgroups);
  if (verbose || !report.swept.empty())
    std::fprintf(stderr, "airlock: removed what %zu earlier job(s) left behind\n", report.swept.size());
  for (const auto& f : report.failed) std::fprintf(stderr, "airlock: could not sweep %s\n", f.c_str());
}

int sweep_command(const std::vector<std::string>& args) {
  std::string state_dir = airlock::jobs::default_state_dir();
  if (args.size() == 2 && args[0] == "--state-dir") {
    state_dir = args[1];
  } else if (!args.empty()) {
    std::fprintf(stderr, "airlock: usage: airlock sweep [--state-dir DIR]\n");
    return 125;
  }
  auto cgroups = open_cgroups();
  if (!cgroups) return 125;
  sweep_leftovers(state_dir, *cgroups, true);
  return 0;
}
