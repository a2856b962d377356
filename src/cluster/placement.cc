#include "cluster/placement.h"

namespace airlock::cluster {

std::optional<std::string> place_session(const std::vector<NodeLoad>& nodes, const std::set<std::string>& exclude) {
  const NodeLoad* best = nullptr;
  for (const auto& n : nodes) {
    if (n.role != "worker" || n.state != "up" || exclude.count(n.id)) continue;
    if (n.sessions >= n.session_slots) continue;
    int free = n.session_slots - n.sessions;
    int best_free = best ? best->session_slots - best->sessions : -1;
    if (free > best_free || (free == best_free && n.id < best->id)) best = &n;
  }
  if (!best) return std::nullopt;
  return best->id;
}

}  // namespace airlock::cluster
