#include "jobs/policy.h"

namespace airlock::jobs {

std::vector<std::pair<std::string, std::string>> base_environment() {
  return {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
          {"HOME", "/workspace"},
          {"TMPDIR", "/tmp"},
          {"LANG", "C.UTF-8"},
          {"USER", "sandbox"},
          {"MPLBACKEND", "Agg"},
          {"MPLCONFIGDIR", "/tmp/matplotlib"}};
}

std::vector<std::string> job_environment(const JobPolicy& policy) {
  auto vars = base_environment();
  for (const auto& [name, value] : policy.env) {
    bool replaced = false;
    for (auto& v : vars) {
      if (v.first == name) {
        v.second = value;
        replaced = true;
      }
    }
    if (!replaced) vars.emplace_back(name, value);
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

}  // namespace airlock::jobs
