#include "service/egress_caps.h"

#include <algorithm>

namespace airlock::service {
namespace {

// Empty: why `cap` does not cover `want`, else "".
std::string why_not(const egress::Rule& want, const egress::Rule& cap) {
  if (cap.port != want.port || !(cap.host == want.host || egress::host_matches(cap.host, want.host)))
    return "not in the tenant's allowed destinations";
  if (want.allow_private && !cap.allow_private) return "allow_private is not allowed for this tenant";
  if (!want.secret.empty() && want.secret != cap.secret)
    return "the secret '" + want.secret + "' is not allowed for this tenant and destination";
  if (cap.tls && !want.tls) return "the tenant's rule requires tls";
  if (!cap.methods.empty()) {
    bool inside = !want.methods.empty() && std::all_of(want.methods.begin(), want.methods.end(), [&](const auto& m) {
      return std::find(cap.methods.begin(), cap.methods.end(), m) != cap.methods.end();
    });
    if (!inside) return "methods wider than the tenant's";
  }
  if (!cap.path_prefixes.empty()) {
    bool inside = !want.path_prefixes.empty() &&
                  std::all_of(want.path_prefixes.begin(), want.path_prefixes.end(), [&](const auto& p) {
                    return std::any_of(cap.path_prefixes.begin(), cap.path_prefixes.end(),
                                       [&](const auto& c) { return p.rfind(c, 0) == 0; });
                  });
    if (!inside) return "paths wider than the tenant's";
  }
  return "";
}

}  // namespace

Status check_egress_caps(const std::vector<egress::Rule>& wanted, const std::vector<egress::Rule>& caps) {
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& w = wanted[i];
    std::string reason = "not in the tenant's allowed destinations";
    bool covered = false;
    for (const auto& cap : caps) {
      std::string why = why_not(w, cap);
      if (why.empty()) {
        covered = true;
        break;
      }
      if (why != "not in the tenant's allowed destinations") reason = why;
    }
    if (!covered)
      return fail("policy.allow[" + std::to_string(i) + "]: " + w.host + ":" + std::to_string(w.port) + ": " + reason);
  }
  return {};
}

}  // namespace airlock::service
