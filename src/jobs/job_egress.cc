#include "jobs/job_egress.h"

#include "egress/resolver.h"
#include "egress/secrets.h"
#include "sys/netns.h"

namespace airlock::jobs {

Result<EgressPlan> prepare_egress(const std::vector<egress::Rule>& rules, const EgressFiles& files) {
  EgressPlan plan;
  plan.config.policy.rules = rules;
  plan.config.ca_file = files.ca;
  if (!files.hosts.empty()) {
    auto hosts = egress::load_host_overrides(files.hosts);
    if (!hosts) return std::unexpected(hosts.error());
    plan.config.hosts = std::move(*hosts);
  }
  bool wants_secret = false;
  for (const auto& r : rules) wants_secret = wants_secret || !r.secret.empty();
  if (!wants_secret) return plan;
  egress::Secrets all;
  if (!files.secrets.empty()) {
    auto loaded = egress::load_secrets(files.secrets);
    if (!loaded) return std::unexpected(loaded.error());
    all = std::move(*loaded);
  }
  // Only the secrets this job's rules name stay in memory for its gateway.
  for (const auto& r : rules) {
    if (r.secret.empty()) continue;
    auto it = all.find(r.secret);
    if (it == all.end()) {
      plan.refusal = "the network rule for " + r.host + " names the secret '" + r.secret + "', which " +
                     (files.secrets.empty() ? "is not available (no secrets file)" : "the secrets file does not hold");
      return plan;
    }
    plan.config.secrets.emplace(it->first, it->second);
  }
  return plan;
}

Result<JobEgress> JobEgress::start(egress::GatewayConfig config, int sandbox_pidfd) {
  auto listener = sys::listen_in_netns(sandbox_pidfd, kGatewayPort);
  if (!listener) return std::unexpected(listener.error());
  auto gateway = egress::Gateway::start(std::move(*listener), std::move(config));
  if (!gateway) return std::unexpected(gateway.error());
  return JobEgress(std::move(*gateway));
}

JobEgress::Attempts JobEgress::finish() {
  if (!gateway_) return {};
  gateway_->stop();
  return {gateway_->take_attempts(), gateway_->dropped_attempts()};
}

}  // namespace airlock::jobs
