// On an API node (role api, docs/sessions.md "Many machines"): what the routes need to send a
// request to the worker that holds what it names.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/route_helpers.h"
#include "cluster/forward.h"
#include "cluster/placement.h"

namespace airlock::service {

// Where a job's live output is, for a caller who may read the job.
struct JobPlace {
  enum class Where {
    kHere,   // finished, or unknown to the caller: this node answers from the store
    kNode,   // claimed or running on node_id
    kLater,  // queued, not claimed yet: ask again
  } where = Where::kHere;
  std::string node_id;
};

struct ClusterRouting {
  cluster::Forwarder* forwarder = nullptr;
  // The cluster's nodes as the store has them now (addresses, loads, states).
  std::function<Result<std::vector<cluster::NodeLoad>>()> nodes;
  std::function<JobPlace(const Caller&, const std::string& job_id)> job_place;
};

// Forwards the exchange to node `node_id`: 502 node_unreachable when the
// store does not know it or has it lost or left (its sessions are being
// closed "node lost"), else Forwarder::send.
void forward_to_node(JobService& jobs, const ClusterRouting& cluster, const ExchangePtr& ex,
                     const std::string& node_id, cluster::ForwardKind kind);

// A job's event stream on an API node: forwarded to the node that claimed
// it while it runs (waiting while it is queued), else `here` (the store's
// replay of a finished job's output). A lost node's job waits until the
// sweep has finished it, then is served here.
void forward_job_events(const ClusterRouting& cluster, const ExchangePtr& ex, const Caller& c, const std::string& job_id,
                        std::function<void()> here);

}  // namespace airlock::service
