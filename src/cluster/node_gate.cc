#include "cluster/node_gate.h"

#include "cluster/node_key.h"

namespace airlock::cluster {

std::optional<api::HttpResponse> worker_gate(const std::string& node_key, const api::HttpRequest& request) {
  // Probes of the node itself, open as on every node (no tenant data there).
  if (request.path == "/healthz" || request.path == "/metrics") return std::nullopt;
  // A repeated header arrives joined with ", " (HttpRequest::headers), so
  // two copies of the right key are not the key: refused like a wrong one.
  auto it = request.headers.find("x-airlock-node-key");
  if (it != request.headers.end() && node_key_matches(node_key, it->second)) return std::nullopt;
  return api::HttpResponse::error(403, "worker_node", "this is a worker node; send requests to an API node");
}

std::function<std::optional<api::HttpResponse>(const api::HttpRequest&)> make_worker_gate(
    std::string node_key, std::function<void(const api::HttpRequest&)> refused) {
  return [key = std::move(node_key), refused = std::move(refused)](const api::HttpRequest& r) {
    auto answer = worker_gate(key, r);
    if (answer && refused) refused(r);
    return answer;
  };
}

}  // namespace airlock::cluster
