// What /healthz and /metrics say about a cluster's nodes (pure: the rows
// and the time in, JSON and text out).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/types.h"

namespace airlock::cluster {

// [{id, role, state, heartbeat_age_ms, running, slots, sessions}] by id;
// heartbeat_age_ms is null when a stamp does not parse.
nlohmann::json nodes_json(const std::vector<store::NodeRow>& nodes, const std::string& now);
// airlock_nodes{state="..."} for every state (0 included), then
// airlock_node_running_jobs{node="..."} for each node up or draining.
std::string nodes_metrics(const std::vector<store::NodeRow>& nodes);

}  // namespace airlock::cluster
