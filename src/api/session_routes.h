// The session and snapshot routes of the HTTP API, beside install_routes()'s job routes.
#pragma once

#include "api/cluster_routing.h"
#include "http/server.h"
#include "service/job_service.h"
#include "sessions/session_service.h"

namespace airlock::service {

// `cluster` set (an API node, docs/sessions.md "Many machines"): sessions live on workers, so
// a new one goes to the worker placement picks, and every route that names
// an open session is forwarded to its node; a closed or unknown one is
// answered here from the store, as on one machine.
void install_session_routes(api::HttpServer& server, JobService& jobs, SessionService& sessions,
                            const ClusterRouting* cluster = nullptr);

}  // namespace airlock::service
