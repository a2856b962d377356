// The gate of a worker node's HTTP listener (issue 17): a worker serves the
// requests API nodes forward to it, and nobody else. Every request but
// /healthz and /metrics must carry X-Airlock-Node-Key with the cluster's
// key; anything else is 403 worker_node, whatever its path (so a worker does
// not even tell which paths exist). The client's own API key is checked
// after this, by the route, as on any node.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "http/server.h"

namespace airlock::cluster {

// Pure: nullopt lets the request through; otherwise the refusal to send.
std::optional<api::HttpResponse> worker_gate(const std::string& node_key, const api::HttpRequest& request);

// For ServerOptions::gate. `refused` (may be empty) is told of each refusal (metrics, logs).
std::function<std::optional<api::HttpResponse>(const api::HttpRequest&)> make_worker_gate(
    std::string node_key, std::function<void(const api::HttpRequest&)> refused = {});

}  // namespace airlock::cluster
