// The operators' dashboard on `airlock serve` (docs/dashboard.md): GET /ui/
// and its files, from memory. Static files, not part of the JSON API (so not
// in docs/openapi.json). The pages hold no data: they call the API with the
// key the operator signs in with, so they see what that key may see.
#pragma once

#include "http/server.h"

namespace airlock::service {

void install_ui_routes(api::HttpServer& server);

}  // namespace airlock::service
