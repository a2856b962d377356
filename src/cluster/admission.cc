#include "cluster/admission.h"

namespace airlock::cluster {

std::optional<std::string> admission_refusal(size_t queued_total, size_t tenant_queued, size_t max_queued,
                                             size_t tenant_max_queued) {
  if (tenant_queued >= tenant_max_queued)
    return "this tenant already has " + std::to_string(tenant_queued) +
           " queued jobs, its cap (tenant_max_queued " + std::to_string(tenant_max_queued) + ")";
  if (tenant_queued > 0 && queued_total >= max_queued)
    return "the service's queue is full (" + std::to_string(max_queued) + " jobs)";
  return std::nullopt;
}

}  // namespace airlock::cluster
