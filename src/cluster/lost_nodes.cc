#include "cluster/lost_nodes.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "jobs/record.h"
#include "sessions/session_service.h"

namespace airlock::cluster {

std::string lost_reason(const std::string& node_id) { return "node lost: " + node_id; }

size_t end_left_work(store::Store& store, const store::LostNode& left, const EndJob& end_job) {
  const std::string reason = lost_reason(left.node.id);
  size_t ended = 0;
  for (const auto& row : left.started_jobs) {
    end_job(row, reason, left.node.id);
    ++ended;
  }
  for (const auto& row : left.open_sessions) {
    // Its sandbox is gone with the node; the record keeps the calls it made.
    auto calls = store.session_calls(row.id);
    auto list = nlohmann::json::array();
    if (calls)
      for (const auto& c : *calls) list.push_back(parse_json_or_discarded(c.call_json, kMaxStoredJsonDepth));
    std::string at = jobs::now_rfc3339();
    auto events = nlohmann::json::array({{{"event", "lost"}, {"at", at}, {"why", reason}}});
    auto record = service::session_record(row, at, reason, list, events);
    record["node"] = left.node.id;
    if (store.close_session(row.id, reason, at, record.dump())) ++ended;
  }
  return ended;
}

Result<std::vector<store::LostNode>> sweep_lost_nodes(store::Store& store, int64_t lease_ms, const EndJob& end_job) {
  auto lost = store.declare_lost_nodes(jobs::now_rfc3339(), lease_ms);
  if (!lost) return std::unexpected(lost.error());
  for (const auto& node : *lost) end_left_work(store, node, end_job);
  return lost;
}

}  // namespace airlock::cluster
