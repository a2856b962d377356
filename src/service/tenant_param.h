// The `tenant` query parameter of the list and read routes (jobs, sessions,
// snapshots), parsed without side effects. Only an admin key may name another
// tenant (or "*"); any other key naming a tenant not its own is refused with
// 403, whether that tenant exists or not, so the answer tells nothing about
// other tenants.
#pragma once

#include <map>
#include <string>

#include "service/api_error.h"

namespace airlock::service {

// The caller as the query sees it.
struct TenantParamCaller {
  bool admin = false;
  std::string tenant_id, tenant_name;
};

// "" = the caller's own tenant (also when it names itself); "*" = every
// tenant; else a tenant id or name still to be looked up (admin callers only).
ApiResult<std::string> parse_tenant_param(const std::string& value, const TenantParamCaller& who);

// A query whose only parameter is `tenant` (GET /v1/sessions, /v1/snapshots,
// /v1/snapshots/{digest}); any other parameter is refused with 400.
ApiResult<std::string> parse_tenant_only_query(const std::map<std::string, std::string>& q,
                                               const TenantParamCaller& who);

}  // namespace airlock::service
