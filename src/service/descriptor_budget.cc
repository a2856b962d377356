#include "service/descriptor_budget.h"

#include <algorithm>

namespace airlock::service {

DescriptorBudget plan_descriptors(uint64_t limit, size_t max_running, size_t max_sessions,
                                  size_t configured_max_connections, size_t interpreters) {
  DescriptorBudget b;
  b.reserved = kServiceDescriptors + kDescriptorsPerJob * max_running + kDescriptorsPerSession * max_sessions +
               kDescriptorsPerInterpreter * interpreters;
  uint64_t left = limit > b.reserved ? limit - b.reserved : 0;
  uint64_t fit = std::max<uint64_t>(kMinConnections, left / kDescriptorsPerConnection);
  b.max_connections = static_cast<size_t>(std::min<uint64_t>(configured_max_connections, fit));
  b.cramped = b.max_connections < configured_max_connections;
  return b;
}

}  // namespace airlock::service
