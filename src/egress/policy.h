// Egress policy: which destinations a job may reach through the host's
// gateway (docs/egress.md). Pure: parsing, name matching and address
// classification, tested without a network.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "egress/address.h"

namespace airlock::egress {

struct Rule {
  std::string host;                     // "api.example.com" or "*.example.com" (lower case)
  uint16_t port = 0;
  std::vector<std::string> methods;     // empty: any ("GET", "POST", ...)
  std::vector<std::string> path_prefixes;  // empty: any; each starts with '/'
  std::string secret;                   // name of a credential the gateway adds; "" none
  bool allow_private = false;           // may resolve to loopback/private/link-local addresses
  bool tls = false;  // the upstream speaks TLS: the code sends plain http://, the gateway adds TLS
};

struct Policy {
  std::vector<Rule> rules;  // empty: no network
};

// "HOST:PORT" as given to `airlock run --allow`.
Result<Rule> parse_allow(std::string_view text);
// The API form: [{"host": ..., "port": ..., "methods": [...], "paths": [...], "secret": "...",
// "allow_private": false, "tls": false}]. Unknown fields are refused.
Result<Policy> parse_policy(const nlohmann::json& rules);

// Case-insensitive; "*.example.com" matches "a.example.com" and "a.b.example.com", not
// "example.com" itself.
bool host_matches(std::string_view pattern, std::string_view host);

struct Request {
  std::string host;
  uint16_t port = 0;
  std::string method;  // "CONNECT" for a TLS tunnel
  std::string path;    // "" for CONNECT
};

struct Decision {
  bool allowed = false;
  std::string reason;       // why not, or which rule allowed it
  const Rule* rule = nullptr;
};

// The first rule whose host and port match decides; its methods and paths
// must match too. A CONNECT tunnel hides the request from the gateway, so a
// rule with paths or a secret refuses CONNECT.
Decision decide(const Policy& policy, const Request& request);

// A resolved address (address.h) is refused unless public, or the rule names
// private destinations; unspecified, multicast and broadcast never.
Decision check_address(const Rule& rule, std::string_view ip);

// The API form of one rule (the inverse of parse_policy for one entry).
nlohmann::json rule_json(const Rule& rule);

}  // namespace airlock::egress
