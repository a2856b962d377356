// The query of GET /v1/jobs, parsed without side effects: the store filter and
// whose jobs are asked for. Only an admin key may name another tenant (or "*");
// any other key naming a tenant not its own is refused with 403, whether that
// tenant exists or not, so the answer tells nothing about other tenants.
#pragma once

#include <map>
#include <string>

#include "service/api_error.h"
#include "store/types.h"

namespace airlock::service {

// The caller as the query sees it.
struct JobQueryCaller {
  bool admin = false;
  std::string tenant_id, tenant_name;
};

struct JobQuery {
  store::JobFilter filter;
  // Whose jobs: "" = the caller's tenant; "*" = every tenant; else a tenant
  // id or name still to be looked up (only ever set for an admin caller).
  std::string tenant;
};

ApiResult<JobQuery> parse_job_query(const std::map<std::string, std::string>& q, const JobQueryCaller& who);

}  // namespace airlock::service
