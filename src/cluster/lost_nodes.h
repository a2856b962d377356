// What a lost node left (CLUSTER-CONTRACT.md "Service"): its started jobs end
// as sandbox_error "node lost: NODE" (never run twice: a job that had started
// may have done part of its work), its open sessions close with the same
// reason. Its claimed, unstarted jobs the store has put back in the queue.
// Every node in cluster mode sweeps each second; the store declares each
// lost node exactly once, so one node ends what it left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"
#include "store/store.h"

namespace airlock::cluster {

std::string lost_reason(const std::string& node_id);  // "node lost: NODE"

// How a job left by a lost node is ended (the job service's record path):
// outcome sandbox_error, `reason`, the record's node = `node`.
using EndJob = std::function<void(const store::JobRow& row, const std::string& reason, const std::string& node)>;

// Ends the started jobs and closes the open sessions of `left`. Returns how
// many jobs and sessions it ended.
size_t end_left_work(store::Store& store, const store::LostNode& left, const EndJob& end_job);

// declare_lost_nodes(now, lease_ms), then end_left_work for each. Returns the
// nodes declared lost by this call.
Result<std::vector<store::LostNode>> sweep_lost_nodes(store::Store& store, int64_t lease_ms, const EndJob& end_job);

}  // namespace airlock::cluster
