// Egress rules (src/egress/policy.cc) as a request's "network" array and as
// `--allow HOST:PORT`, decisions on a destination, and address classes.
// Input: JSON rules, NUL, then lines: "HOST:PORT" for parse_allow, a
// destination "METHOD HOST PORT PATH", an IP address.
// Properties: an accepted policy survives rule_json and parsing again
// unchanged; an IPv4 address and its ::ffff: form get the same class.
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "egress/policy.h"
#include "fuzz/fuzz.h"

namespace egress = airlock::egress;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [rules_text, rest] = airlock::fuzz::split_nul(airlock::fuzz::text(data, size));
  std::istringstream lines{std::string(rest)};
  std::string allow_line, request_line, ip_line;
  std::getline(lines, allow_line);
  std::getline(lines, request_line);
  std::getline(lines, ip_line);

  (void)egress::parse_allow(allow_line);
  auto json = nlohmann::json::parse(rules_text, nullptr, false);
  if (json.is_discarded()) return 0;
  auto policy = egress::parse_policy(json);
  if (!policy) return 0;

  nlohmann::json again = nlohmann::json::array();
  for (const auto& rule : policy->rules) again.push_back(egress::rule_json(rule));
  auto reparsed = egress::parse_policy(again);
  AIRLOCK_CHECK(reparsed.has_value() && reparsed->rules.size() == policy->rules.size());
  for (size_t i = 0; i < reparsed->rules.size(); ++i)
    AIRLOCK_CHECK(egress::rule_json(reparsed->rules[i]) == again[i]);

  egress::Request request;
  unsigned port = 0;
  std::istringstream words(request_line);
  words >> request.method >> request.host >> port >> request.path;
  request.port = static_cast<uint16_t>(port);
  egress::Decision decision = egress::decide(*policy, request);
  if (decision.allowed) {
    AIRLOCK_CHECK(decision.rule != nullptr);
    (void)egress::check_address(*decision.rule, ip_line);
  }

  auto cls = egress::classify_address(ip_line);
  if (cls && ip_line.find(':') == std::string::npos) {
    auto mapped = egress::classify_address("::ffff:" + ip_line);
    AIRLOCK_CHECK(mapped.has_value() && *mapped == *cls);
  }
  return 0;
}
