// The HTTP API of `airlock serve` (docs/openapi.json): each route
// authenticates, calls the JobService, and turns its answer or ApiError into
// an HTTP response.
#pragma once

#include "http/server.h"
#include "service/job_service.h"

namespace airlock::service {

void install_routes(api::HttpServer& server, JobService& service);

// The OpenAPI 3.1 document served at /openapi.json.
const std::string& openapi_document();

}  // namespace airlock::service
