// Admission of a job by an API node: the queue is the store's, so the caps
// are checked against its counts (a few jobs over a cap can be admitted when
// API nodes admit at the same moment; the counts are not locked).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace airlock::cluster {

// nullopt: admit. Otherwise why not (429), as JobQueue::admit says it: the
// tenant's cap first; a tenant with no queued job is admitted even to a full
// queue, so other tenants cannot keep its first job out.
std::optional<std::string> admission_refusal(size_t queued_total, size_t tenant_queued, size_t max_queued,
                                             size_t tenant_max_queued);

}  // namespace airlock::cluster
