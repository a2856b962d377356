// The cluster keys of the configuration (role, node_*, heartbeat_ms,
// content_dir): their names, defaults and the checks made once the file and
// the flags are both read.
#include <string>

#include "service/config.h"

#include "cluster/node_key.h"

namespace airlock::service {
namespace {

constexpr uint64_t kMinHeartbeatMs = 10, kMaxHeartbeatMs = 60'000;
constexpr uint64_t kMaxLeaseMs = 3'600'000;
constexpr size_t kMaxNodeIdBytes = 63;

// A node id goes into paths (data_dir/nodes/ID), logs and metric labels.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxNodeIdBytes || s[0] == '.' || s[0] == '-') return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
              ch == '-' || ch == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string_view role_name(Role r) {
  switch (r) {
    case Role::kAll: return "all";
    case Role::kApi: return "api";
    case Role::kWorker: return "worker";
  }
  return "all";
}

std::optional<Role> parse_role(std::string_view text) {
  if (text == "all") return Role::kAll;
  if (text == "api") return Role::kApi;
  if (text == "worker") return Role::kWorker;
  return std::nullopt;
}

bool cluster_mode(const ServiceConfig& c) { return c.role != Role::kAll; }

std::string content_dir(const ServiceConfig& c) { return c.content_dir.empty() ? c.data_dir : c.content_dir; }

std::string node_dir(const ServiceConfig& c) {
  return cluster_mode(c) ? c.data_dir + "/nodes/" + c.node_id : c.data_dir;
}

Status finish_cluster_config(ServiceConfig& c, const std::string& hostname) {
  if (c.node_id.empty()) c.node_id = hostname;
  if (!plain_name(c.node_id))
    return fail("node_id '" + c.node_id + "': 1 to 63 letters, digits, '.', '-' or '_', not starting with '.' or '-'" +
                (c.node_id == hostname ? " (it defaults to the host name; set node_id or --node-id)" : ""));
  if (c.heartbeat_ms < kMinHeartbeatMs || c.heartbeat_ms > kMaxHeartbeatMs)
    return fail("heartbeat_ms is from 10 to 60000");
  if (c.node_lease_ms > kMaxLeaseMs) return fail("node_lease_ms is at most 3600000");
  // One late heartbeat must not make a node lost.
  if (c.node_lease_ms < 2 * c.heartbeat_ms)
    return fail("node_lease_ms (" + std::to_string(c.node_lease_ms) + ") must be at least twice heartbeat_ms (" +
                std::to_string(c.heartbeat_ms) + ")");
  if (c.node_address.empty()) {
    if (cluster_mode(c) && c.listen_port == 0)
      return fail("with --listen on port 0, other nodes cannot know this node's port: set node_address (--node-address HOST:PORT)");
    // 0.0.0.0 names no machine for the others to reach.
    if (cluster_mode(c) && (c.listen_address == "0.0.0.0" || c.listen_address == "::"))
      c.node_address = hostname + ":" + std::to_string(c.listen_port);
    else
      c.node_address = c.listen_address + ":" + std::to_string(c.listen_port);
  } else {
    auto colon = c.node_address.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == c.node_address.size() ||
        c.node_address.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
        c.node_address.size() - colon - 1 > 5 || std::stoul(c.node_address.substr(colon + 1)) > 65535)
      return fail("node_address '" + c.node_address + "' must be HOST:PORT");
  }
  if (cluster_mode(c)) return check_node_key(c);
  return {};
}

// What the configuration alone tells of the node key (cluster/node_key.h):
// not both node_key and node_key_file, and an inline key that is usable.
// That cluster mode has one (and node_key_file's content) is checked when
// `airlock serve` starts (cluster::resolve_node_key), before it listens.
Status check_node_key(const ServiceConfig& c) {
  if (!c.node_key.empty() && !c.node_key_file.empty())
    return fail("configuration: node_key and node_key_file both set; use one");
  if (!c.node_key.empty()) return cluster::check_node_key(c.node_key);
  return {};
}

}  // namespace airlock::service
