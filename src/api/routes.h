// The HTTP API of `airlock serve` (docs/openapi.json): each route
// authenticates, calls the JobService, and turns its answer or ApiError into
// an HTTP response.
#pragma once

#include "http/server.h"
#include "service/job_service.h"

namespace airlock::service {

struct ClusterRouting;  // api/cluster_routing.h
// `cluster` set (an API node): a running job's live output is forwarded to its worker.
void install_routes(api::HttpServer& server, JobService& service, const ClusterRouting* cluster = nullptr);

// The OpenAPI 3.1 document served at /openapi.json.
const std::string& openapi_document();

}  // namespace airlock::service
