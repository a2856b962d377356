#include "service/tenant_param.h"

namespace airlock::service {

ApiResult<std::string> parse_tenant_param(const std::string& v, const TenantParamCaller& who) {
  // Shown back in errors and looked up: printable and short.
  bool plain = !v.empty() && v.size() <= 128;
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7f) plain = false;
  if (!plain) return api_error(400, "bad_request", "tenant: a tenant id or name, or *");
  if (v == who.tenant_id || v == who.tenant_name) return std::string();  // its own: the default
  if (!who.admin) return api_error(403, "forbidden", "tenant: only a key with the 'admin' scope sees another tenant");
  return v;
}

ApiResult<std::string> parse_tenant_only_query(const std::map<std::string, std::string>& q,
                                               const TenantParamCaller& who) {
  std::string tenant;
  for (const auto& [k, v] : q) {
    if (k != "tenant") return api_error(400, "bad_request", "unknown query parameter " + k);
    auto t = parse_tenant_param(v, who);
    if (!t) return std::unexpected(t.error());
    tenant = *t;
  }
  return tenant;
}

}  // namespace airlock::service
