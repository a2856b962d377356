#include "api/cluster_setup.h"

#include "cluster/node_gate.h"
#include "cluster/node_key.h"

namespace airlock::service {

NodeHttp::~NodeHttp() { stop(); }

void NodeHttp::stop() {
  if (forwarder_) forwarder_->stop();
}

Result<std::unique_ptr<NodeHttp>> NodeHttp::make(const ServiceConfig& config, store::Store& store, JobService& jobs,
                                                 api::ServerOptions& options,
                                                 std::function<void(const nlohmann::json&)> log) {
  std::unique_ptr<NodeHttp> node(new NodeHttp());
  if (!cluster_mode(config)) return node;
  auto key = cluster::resolve_node_key(config.node_key, config.node_key_file, true);
  if (!key) return std::unexpected(key.error());
  if (config.role == Role::kWorker) {
    options.gate = cluster::make_worker_gate(*key, [&jobs](const api::HttpRequest&) { jobs.metrics().request(403); });
    return node;
  }
  cluster::ForwarderOptions f;
  f.node_key = *key;
  f.self_node_id = config.node_id;
  // Four of the workers' keep-alive intervals without a byte: the link is dead.
  f.event_silence_ms = static_cast<int>(std::max<uint64_t>(4 * config.event_keepalive_ms, 1000));
  f.answered = [&jobs](int status) { jobs.metrics().request(status); };
  f.log = std::move(log);
  node->forwarder_ = std::make_unique<cluster::Forwarder>(std::move(f));
  node->routing_.forwarder = node->forwarder_.get();
  node->routing_.nodes = [&store]() -> Result<std::vector<cluster::NodeLoad>> {
    auto rows = store.nodes();
    if (!rows) return std::unexpected(rows.error());
    std::vector<cluster::NodeLoad> out;
    for (const auto& r : *rows) out.push_back({r.id, r.role, r.state, r.session_slots, r.sessions, r.address});
    return out;
  };
  node->routing_.job_place = [&store](const Caller& c, const std::string& id) {
    auto row = c.can("admin") ? store.job_of_any_tenant(id) : store.job(c.tenant.id, id);
    JobPlace place;
    if (!row || !*row || (*row)->state == store::JobState::kFinished) return place;  // answered here
    if ((*row)->node_id.empty()) {
      place.where = JobPlace::Where::kLater;
      return place;
    }
    place.where = JobPlace::Where::kNode;
    place.node_id = (*row)->node_id;
    return place;
  };
  return node;
}

}  // namespace airlock::service
