// The HTTP side of a node in cluster mode (docs/sessions.md "Many
// machines"): a worker's listener gets the node gate; an API node gets a
// forwarder and the routing its session and job routes use. Role all: none.
#pragma once

#include <memory>
#include <string>

#include "api/cluster_routing.h"
#include "base/result.h"
#include "cluster/forward.h"
#include "http/server.h"
#include "service/config.h"
#include "service/job_service.h"
#include "store/store.h"

namespace airlock::service {

class NodeHttp {
 public:
  // Resolves the node key (node_key or node_key_file; required in cluster
  // mode), and sets `options.gate` on a worker.
  static Result<std::unique_ptr<NodeHttp>> make(const ServiceConfig& config, store::Store& store, JobService& jobs,
                                                api::ServerOptions& options,
                                                std::function<void(const nlohmann::json&)> log);
  ~NodeHttp();  // stop()

  // For install_routes / install_session_routes: set on an API node, null otherwise.
  const ClusterRouting* routing() const { return forwarder_ ? &routing_ : nullptr; }
  // After the HTTP server stopped: ends the forwarded requests.
  void stop();

 private:
  NodeHttp() = default;
  std::unique_ptr<cluster::Forwarder> forwarder_;
  ClusterRouting routing_;
};

}  // namespace airlock::service
