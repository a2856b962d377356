#include "api/cluster_routing.h"

namespace airlock::service {

void forward_to_node(JobService& jobs, const ClusterRouting& cluster, const ExchangePtr& ex,
                     const std::string& node_id, cluster::ForwardKind kind) {
  auto nodes = cluster.nodes();
  if (!nodes) return answer(jobs, ex, from_error(store_failure(nodes.error()).error()));
  for (const auto& n : *nodes) {
    if (n.id != node_id) continue;
    if (n.state == "lost" || n.state == "left") break;
    return cluster.forwarder->send(ex, {n.id, n.address}, kind);
  }
  answer(jobs, ex, api::HttpResponse::error(502, "node_unreachable", "node " + node_id + " is unreachable"));
}

void forward_job_events(const ClusterRouting& cluster, const ExchangePtr& ex, const Caller& c, const std::string& job_id,
                        std::function<void()> here) {
  using Decision = cluster::Forwarder::Decision;
  auto decide = [&cluster, c, job_id]() -> Decision {
    JobPlace place = cluster.job_place(c, job_id);
    if (place.where == JobPlace::Where::kHere) return {};
    if (place.where == JobPlace::Where::kLater) return {Decision::Kind::kLater, {}};
    auto nodes = cluster.nodes();
    if (nodes)
      for (const auto& n : *nodes)
        if (n.id == place.node_id && n.state != "lost" && n.state != "left")
          return {Decision::Kind::kNode, {n.id, n.address}};
    return {Decision::Kind::kLater, {}};  // its node is lost: the sweep finishes the job
  };
  cluster.forwarder->send_when(ex, decide, std::move(here), cluster::ForwardKind::kEvents);
}

}  // namespace airlock::service
