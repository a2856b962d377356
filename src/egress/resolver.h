// Names to addresses for the gateway: the operator's static overrides first
// (an /etc/hosts-style file, like curl --resolve), then IP literals, then the
// host's resolver. Every address is checked against the rule
// (check_address) before the gateway may connect to it, so a name cannot be
// re-pointed at the host's loopback or a private network (DNS rebinding).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "egress/policy.h"

namespace airlock::egress {

// name (lower case) -> addresses, in file order.
using HostOverrides = std::map<std::string, std::vector<std::string>>;

// "ADDRESS NAME [NAME...]" lines; '#' starts a comment. Pure.
Result<HostOverrides> parse_host_overrides(std::string_view text);
Result<HostOverrides> load_host_overrides(const std::string& path);

struct Resolved {
  std::vector<std::string> addresses;  // those the rule allows, in order
  std::string reason;                  // why none is usable, when empty
};

// The addresses of `host` that `rule` allows. An error only when the name
// does not resolve at all.
Result<Resolved> resolve_checked(const HostOverrides& overrides, const Rule& rule, const std::string& host);

}  // namespace airlock::egress
