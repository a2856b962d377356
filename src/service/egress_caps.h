// What a tenant's jobs may name as network destinations: the operator's
// `[egress_caps]` in the service configuration. Pure.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "egress/policy.h"

namespace airlock::service {

// Each wanted rule must fall inside one cap: the same port; the same host, or
// a host the cap's "*.suffix" pattern matches; allow_private, a secret, tls
// only where the cap has them (the same secret name); and no wider methods or
// paths than the cap's. A tenant without caps may name no destination.
Status check_egress_caps(const std::vector<egress::Rule>& wanted, const std::vector<egress::Rule>& caps);

}  // namespace airlock::service
