// The API's network field: parsed like --allow-rule, capped by the tenant's
// egress_caps from the service configuration, passed on as --allow-rule.
#include <gtest/gtest.h>

#include <algorithm>

#include "service/config.h"
#include "service/egress_caps.h"
#include "service/job_request.h"

using namespace airlock::service;
using airlock::egress::Rule;
using nlohmann::json;

namespace {

std::vector<Rule> caps_from(const std::string& toml) {
  auto c = parse_config("[egress_caps]\nanalytics = " + toml + "\n");
  EXPECT_TRUE(c) << c.error().message();
  return c ? c->egress_caps["analytics"] : std::vector<Rule>{};
}

std::string refusal(const json& allow, const std::vector<Rule>& caps) {
  PolicyCaps pc;
  pc.network = caps;
  auto r = parse_job_request(json{{"command", {"true"}}, {"policy", {{"allow", allow}}}}, pc);
  return r ? "<accepted>" : r.error().message();
}

}  // namespace

TEST(ServiceEgress, ConfigReadsFilesAndCapsPerTenant) {
  auto c = parse_config(
      "secrets_file = \"/etc/airlock/secrets.toml\"\negress_hosts = \"/etc/airlock/hosts\"\n"
      "egress_ca = \"/etc/airlock/ca.pem\"\n[egress_caps]\n"
      "analytics = [\"*.example.com:443\", {host = \"api.example.com\", port = 443, tls = true, secret = \"ex\"}]\n");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->secrets_file, "/etc/airlock/secrets.toml");
  EXPECT_EQ(c->egress_hosts, "/etc/airlock/hosts");
  ASSERT_EQ(c->egress_caps["analytics"].size(), 2u);
  EXPECT_EQ(c->egress_caps["analytics"][1].secret, "ex");
  EXPECT_FALSE(parse_config("[egress_caps]\nanalytics = [\"no-port\"]\n"));
  EXPECT_FALSE(parse_config("[egress_caps]\nanalytics = [{host = \"a.com\", port = 1, bogus = 1}]\n"));
}

TEST(ServiceEgress, RequestsStayInsideTheTenantsCaps) {
  auto caps = caps_from(
      "[\"*.example.com:443\", {host = \"api.example.com\", port = 443, tls = true, secret = \"ex\"},"
      " {host = \"data.example.com\", port = 80, methods = [\"GET\"], paths = [\"/v1/\"]}]");
  EXPECT_EQ(refusal(json::array({{{"host", "a.example.com"}, {"port", 443}}}), caps), "<accepted>");
  EXPECT_EQ(refusal(json::array({{{"host", "*.b.example.com"}, {"port", 443}}}), caps), "<accepted>");
  EXPECT_EQ(refusal(json::array({{{"host", "api.example.com"}, {"port", 443}, {"tls", true}, {"secret", "ex"}}}), caps),
            "<accepted>");
  EXPECT_EQ(refusal(json::array({{{"host", "data.example.com"}, {"port", 80}, {"methods", {"GET"}},
                                  {"paths", {"/v1/items"}}}}),
                    caps),
            "<accepted>");
  EXPECT_NE(refusal(json::array({{{"host", "evil.test"}, {"port", 443}}}), caps).find("policy.allow[0]: evil.test:443: not in the tenant"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"host", "a.example.com"}, {"port", 80}}}), caps).find("not in the tenant"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"host", "a.example.com"}, {"port", 443}, {"allow_private", true}}}), caps)
                .find("allow_private"),
            std::string::npos);
  // Another tenant's secret, or a secret on a destination without one in the caps.
  EXPECT_NE(refusal(json::array({{{"host", "a.example.com"}, {"port", 443}, {"secret", "ex"}}}), caps)
                .find("the secret 'ex' is not allowed"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"host", "data.example.com"}, {"port", 80}}}), caps).find("methods wider"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"host", "data.example.com"}, {"port", 80}, {"methods", {"GET"}},
                                  {"paths", {"/admin"}}}}),
                    caps)
                .find("paths wider"),
            std::string::npos);
  EXPECT_NE(refusal(json::array({{{"host", "a.example.com"}, {"port", 443}}}), {}).find("not in the tenant"),
            std::string::npos);  // no caps: no network
  EXPECT_NE(refusal(json::array({{{"host", "a.example.com"}, {"port", 443}, {"secret_value", "x"}}}), caps)
                .find("unknown field"),
            std::string::npos);  // a credential never travels in the request
}

TEST(ServiceEgress, RulesAndTheOperatorsFilesReachTheEngine) {
  PolicyCaps pc;
  pc.network = caps_from("[\"api.example.com:443\"]");
  auto r = parse_job_request(json{{"command", {"true"}}, {"policy", {{"allow", {{{"host", "api.example.com"}, {"port", 443}}}}}}}, pc);
  ASSERT_TRUE(r) << r.error().message();
  RunPlacement at;
  at.secrets_file = "/etc/s.toml";
  at.egress_hosts_file = "/etc/hosts.toml";
  auto run = run_request_for(*r, at);
  ASSERT_EQ(run.policy.allow.size(), 1u);
  EXPECT_EQ(airlock::egress::rule_json(run.policy.allow[0]), json({{"host", "api.example.com"}, {"port", 443}}));
  EXPECT_EQ(run.secrets_file, "/etc/s.toml");
  EXPECT_EQ(run.egress_hosts_file, "/etc/hosts.toml");
}
