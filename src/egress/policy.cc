#include "egress/policy.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "base/strings.h"

namespace airlock::egress {
namespace {

std::string lower(std::string_view s) { return ascii_lower(s); }

// A DNS name (or a "*." suffix pattern): labels of [a-z0-9-], 1..63 bytes, total <= 253.
bool valid_host(std::string_view host, bool pattern) {
  if (pattern && host.rfind("*.", 0) == 0) host.remove_prefix(2);
  if (host.empty() || host.size() > 253) return false;
  size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-') || ++label > 63) return false;
  }
  return label > 0;
}

Result<uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return fail("port '" + std::string(text) + "' is not a number");
  unsigned long port = std::stoul(std::string(text));
  if (port == 0 || port > 65535) return fail("port " + std::string(text) + " is out of range");
  return static_cast<uint16_t>(port);
}

}  // namespace

Result<Rule> parse_allow(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return fail("'" + std::string(text) + "' must be HOST:PORT");
  Rule r;
  r.host = lower(text.substr(0, colon));
  if (!valid_host(r.host, true)) return fail("'" + std::string(text.substr(0, colon)) + "' is not a host name");
  auto port = parse_port(text.substr(colon + 1));
  if (!port) return std::unexpected(port.error());
  r.port = *port;
  return r;
}

Result<Policy> parse_policy(const nlohmann::json& rules) {
  Policy p;
  if (rules.is_null()) return p;
  if (!rules.is_array()) return fail("network: must be an array of destinations");
  if (rules.size() > 64) return fail("network: at most 64 destinations");
  static const std::set<std::string> known = {"host", "port", "methods", "paths", "secret", "allow_private", "tls"};
  static const std::set<std::string> methods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT"};
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& j = rules[i];
    std::string at = "network[" + std::to_string(i) + "]";
    if (!j.is_object()) return fail(at + ": must be an object");
    for (const auto& [key, _] : j.items())
      if (!known.count(key)) return fail(at + "." + key + ": unknown field");
    if (!j.contains("host") || !j["host"].is_string()) return fail(at + ".host: a string is required");
    if (!j.contains("port") || !j["port"].is_number_integer() || j["port"].get<int64_t>() < 0)
      return fail(at + ".port: a port number is required");
    auto rule = parse_allow(j["host"].get<std::string>() + ":" + std::to_string(j["port"].get<int64_t>()));
    if (!rule) return fail(at + ": " + rule.error().what);
    if (j.contains("methods")) {
      if (!j["methods"].is_array()) return fail(at + ".methods: must be an array");
      for (const auto& m : j["methods"]) {
        if (!m.is_string() || !methods.count(m.get<std::string>()))
          return fail(at + ".methods: one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, CONNECT");
        rule->methods.push_back(m.get<std::string>());
      }
    }
    if (j.contains("paths")) {
      if (!j["paths"].is_array()) return fail(at + ".paths: must be an array");
      for (const auto& path : j["paths"]) {
        if (!path.is_string() || path.get<std::string>().rfind('/', 0) != 0)
          return fail(at + ".paths: each must start with '/'");
        rule->path_prefixes.push_back(path.get<std::string>());
      }
    }
    if (j.contains("secret")) {
      if (!j["secret"].is_string() || j["secret"].get<std::string>().empty())
        return fail(at + ".secret: the name of a secret (never its value)");
      rule->secret = j["secret"].get<std::string>();
    }
    if (j.contains("allow_private")) {
      if (!j["allow_private"].is_boolean()) return fail(at + ".allow_private: must be true or false");
      rule->allow_private = j["allow_private"].get<bool>();
    }
    if (j.contains("tls")) {
      if (!j["tls"].is_boolean()) return fail(at + ".tls: must be true or false");
      rule->tls = j["tls"].get<bool>();
    }
    p.rules.push_back(std::move(*rule));
  }
  return p;
}

bool host_matches(std::string_view pattern, std::string_view host) {
  std::string p = lower(pattern), h = lower(host);
  if (p.rfind("*.", 0) == 0) {
    std::string suffix = p.substr(1);  // ".example.com"
    return h.size() > suffix.size() && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return p == h;
}

Decision decide(const Policy& policy, const Request& req) {
  for (const auto& rule : policy.rules) {
    if (rule.port != req.port || !host_matches(rule.host, req.host)) continue;
    if (!rule.methods.empty() && std::find(rule.methods.begin(), rule.methods.end(), req.method) == rule.methods.end())
      return {false, "method " + req.method + " is not allowed for " + rule.host + ":" + std::to_string(rule.port),
              &rule};
    if (req.method == "CONNECT" && (!rule.path_prefixes.empty() || !rule.secret.empty()))
      return {false,
              "CONNECT to " + rule.host + ":" + std::to_string(rule.port) +
                  " is refused: the rule limits paths or adds a credential, so the gateway must see "
                  "each request (send plain http://" + req.host + "/...; the gateway adds TLS)",
              &rule};
    if (!rule.path_prefixes.empty()) {
      bool ok = std::any_of(rule.path_prefixes.begin(), rule.path_prefixes.end(),
                            [&](const std::string& prefix) { return req.path.rfind(prefix, 0) == 0; });
      if (!ok) return {false, "path " + req.path + " is not allowed for " + rule.host, &rule};
    }
    return {true, "allowed by " + rule.host + ":" + std::to_string(rule.port), &rule};
  }
  return {false, req.host + ":" + std::to_string(req.port) + " is not in the job's network policy", nullptr};
}

Decision check_address(const Rule& rule, std::string_view ip) {
  auto info = describe_address(ip);
  if (!info) return {false, info.error().what, &rule};
  AddressClass c = info->cls;
  std::string cls(class_name(c));
  if (c == AddressClass::kPublic) return {true, std::string(ip) + " is public", &rule};
  bool never = c == AddressClass::kUnspecified || c == AddressClass::kMulticast ||
               c == AddressClass::kBroadcast;
  if (rule.allow_private && !never)
    return {true, std::string(ip) + " is " + cls + ", allowed by the rule", &rule};
  return {false,
          rule.host + " resolved to " + std::string(ip) + " (" + cls + "), which the policy " +
              (never ? "can never name" : "does not name") + "; it is " + info->detail,
          &rule};
}

nlohmann::json rule_json(const Rule& r) {
  nlohmann::json j = {{"host", r.host}, {"port", r.port}};
  if (!r.methods.empty()) j["methods"] = r.methods;
  if (!r.path_prefixes.empty()) j["paths"] = r.path_prefixes;
  if (!r.secret.empty()) j["secret"] = r.secret;
  if (r.allow_private) j["allow_private"] = true;
  if (r.tls) j["tls"] = true;
  return j;
}

}  // namespace airlock::egress
