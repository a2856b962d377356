// Which worker keeps a new session (issue 17). Pure: the caller reads the
// nodes from the store (their heartbeats carry the counts) and forwards the
// create to the node chosen here.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace airlock::cluster {

// What placement needs of a node (from store::NodeRow).
struct NodeLoad {
  std::string id, role, state;  // role: api, worker; state: up, draining, lost, left
  int session_slots = 0;        // sessions it may keep
  int sessions = 0;             // sessions it keeps, as of its last heartbeat
  std::string address;          // where it listens (not used for the choice)
};

// A worker that is up (not draining, lost or left), with sessions below
// session_slots and not in `exclude` (nodes that just failed to answer); of
// those, the one with the most free slots, ties to the smallest id so that
// the choice is the same on every API node. nullopt when none fits.
std::optional<std::string> place_session(const std::vector<NodeLoad>& nodes,
                                         const std::set<std::string>& exclude = {});

}  // namespace airlock::cluster
