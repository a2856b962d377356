// The query of GET /v1/jobs, parsed without side effects: the store filter and
// whose jobs are asked for (the tenant as service/tenant_param.h reads it).
#pragma once

#include <map>
#include <string>

#include "service/api_error.h"
#include "service/tenant_param.h"
#include "store/types.h"

namespace airlock::service {

using JobQueryCaller = TenantParamCaller;

struct JobQuery {
  store::JobFilter filter;
  // Whose jobs: "" = the caller's tenant; "*" = every tenant; else a tenant
  // id or name still to be looked up (only ever set for an admin caller).
  std::string tenant;
};

ApiResult<JobQuery> parse_job_query(const std::map<std::string, std::string>& q, const JobQueryCaller& who);

}  // namespace airlock::service
