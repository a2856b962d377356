// The session and snapshot routes of the HTTP API, beside install_routes()'s job routes.
#pragma once

#include "http/server.h"
#include "service/job_service.h"
#include "sessions/session_service.h"

namespace airlock::service {

void install_session_routes(api::HttpServer& server, JobService& jobs, SessionService& sessions);

}  // namespace airlock::service
