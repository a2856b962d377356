// The keys `airlock serve` accepts at the top level of its configuration
// file (service/config.cc refuses any other). docs/service.md's
// configuration table documents each one; tests/unit/service_config_docs_test.cc
// holds the two to each other.
#pragma once

#include <set>
#include <string>

namespace airlock::service {

const std::set<std::string>& config_file_keys();

}  // namespace airlock::service
