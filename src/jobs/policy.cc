#include "jobs/policy.h"

#include "requests/request_helper.h"

namespace airlock::jobs {

std::vector<std::pair<std::string, std::string>> base_environment() {
  return {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
          {"HOME", "/workspace"},
          {"TMPDIR", "/tmp"},
          {"LANG", "C.UTF-8"},
          {"USER", "sandbox"},
          {"MPLBACKEND", "Agg"},
          {"MPLCONFIGDIR", "/tmp/matplotlib"},
          {"PYTHONPATH", requests::kHelperDir}};  // import airlock_request
}

std::vector<std::pair<std::string, std::string>> proxy_environment() {
  std::string url = "http://127.0.0.1:" + std::to_string(kGatewayPort);
  return {{"HTTP_PROXY", url}, {"HTTPS_PROXY", url}, {"http_proxy", url},
          {"https_proxy", url}, {"NO_PROXY", ""}, {"no_proxy", ""}};
}

std::vector<std::string> job_environment(const JobPolicy& policy) {
  auto vars = base_environment();
  if (!policy.allow.empty())
    for (auto& v : proxy_environment()) vars.push_back(std::move(v));
  for (const auto& [name, value] : policy.env) {
    bool replaced = false;
    for (auto& v : vars) {
      if (v.first == name) {
        // The job's own PYTHONPATH comes first; the helper stays importable.
        v.second = name == "PYTHONPATH" ? value + ":" + requests::kHelperDir : value;
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
