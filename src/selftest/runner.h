// The selftest's run against one service (docs/selftest.md): each property
// of the boundary tried through the HTTP API as an application would, and
// judged (judge.h) into one report item.
#pragma once

#include <cstdint>
#include <string>

#include "selftest/report.h"

namespace airlock::selftest {

struct Target {
  std::string host = "127.0.0.1";  // an IP address literal
  uint16_t port = 0;
  std::string description;  // for the report
  std::string key;          // a key of the tenant under test (scopes run and read)
  std::string other_key;    // a key of another tenant; "" skips that item
  // The service runs on this machine: its jobs' processes, mounts and
  // cgroups can be looked for here, and its paths probed from a job.
  bool same_machine = false;
  std::string data_dir, state_dir;  // "" when not known
  std::string canary_prefix = "airlock-selftest-canary-";
  uint16_t probe_port = 0;  // the loopback listener's port; 0 picks one
};

Report run_selftest(const Target& target);

}  // namespace airlock::selftest
