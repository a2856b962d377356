#include "cluster/node_health.h"

#include <map>

#include "usage/ledger.h"

namespace airlock::cluster {

nlohmann::json nodes_json(const std::vector<store::NodeRow>& nodes, const std::string& now) {
  auto out = nlohmann::json::array();
  auto now_ms = usage::parse_time_ms(now);
  for (const auto& n : nodes) {
    auto beat = usage::parse_time_ms(n.heartbeat_at);
    nlohmann::json age = nullptr;
    if (now_ms && beat) age = *now_ms > *beat ? *now_ms - *beat : 0;
    out.push_back({{"id", n.id},
                   {"role", n.role},
                   {"state", n.state},
                   {"heartbeat_age_ms", age},
                   {"running", n.running},
                   {"slots", n.slots},
                   {"sessions", n.sessions}});
  }
  return out;
}

std::string nodes_metrics(const std::vector<store::NodeRow>& nodes) {
  std::map<std::string, int> by_state{{"up", 0}, {"draining", 0}, {"lost", 0}, {"left", 0}};
  for (const auto& n : nodes) ++by_state[n.state];
  std::string out = "# HELP airlock_nodes Nodes of the cluster by state.\n# TYPE airlock_nodes gauge\n";
  for (const auto& [state, count] : by_state)
    out += "airlock_nodes{state=\"" + state + "\"} " + std::to_string(count) + "\n";
  out += "# HELP airlock_node_running_jobs Jobs running on each live node (its last heartbeat).\n"
         "# TYPE airlock_node_running_jobs gauge\n";
  // Node ids are plain names (service/config.h checks them), safe in a label.
  for (const auto& n : nodes)
    if (n.state == "up" || n.state == "draining")
      out += "airlock_node_running_jobs{node=\"" + n.id + "\"} " + std::to_string(n.running) + "\n";
  return out;
}

}  // namespace airlock::cluster
