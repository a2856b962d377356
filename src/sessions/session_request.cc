#include "sessions/session_request.h"

#include <algorithm>
#include <cmath>

#include "base/number_text.h"

namespace airlock::service {

using json = nlohmann::json;


Result<SessionRequest> parse_session_request(const json& body, const PolicyCaps& caps, const SessionCaps& sc) {
  if (!body.is_object()) return fail("the body must be a JSON object");
  if (auto st = only_known_fields(body, "", {"image", "profile", "policy", "inputs", "snapshot", "idle_timeout_s", "max_lifetime_s"}); !st)
    return std::unexpected(st.error());
  SessionRequest r;
  r.idle_timeout_s = sc.default_idle_timeout_s;
  r.max_lifetime_s = sc.max_lifetime_s;
  if (body.contains("image")) {
    auto image = parse_image(body["image"]);
    if (!image) return std::unexpected(image.error());
    r.image = *image;
  }
  if (body.contains("profile")) {  // only standard today: compute denies the kernel's fork and exec
    if (auto profile = parse_profile(body["profile"], true); !profile) return std::unexpected(profile.error());
  }
  if (body.contains("policy")) {
    const json& p = body["policy"];
    if (p.is_object() && p.contains("outputs"))
      return bad_field("policy.outputs", "a session's files are downloaded one by one; give no outputs policy");
    if (auto st = parse_policy(p, caps, r.policy); !st) return std::unexpected(st.error());
  }
  if (body.contains("inputs")) {
    auto ids = parse_input_ids(body["inputs"]);
    if (!ids) return std::unexpected(ids.error());
    r.input_ids = std::move(*ids);
  }
  if (body.contains("snapshot")) {
    auto digest = parse_snapshot_digest(body["snapshot"]);
    if (!digest) return std::unexpected(digest.error());
    r.snapshot = *digest;
  }
  if (body.contains("idle_timeout_s")) {
    auto v = whole_seconds(body["idle_timeout_s"], "idle_timeout_s", 1, sc.max_idle_timeout_s);
    if (!v) return std::unexpected(v.error());
    r.idle_timeout_s = *v;
  }
  if (body.contains("max_lifetime_s")) {
    auto v = whole_seconds(body["max_lifetime_s"], "max_lifetime_s", 1, sc.max_lifetime_s);
    if (!v) return std::unexpected(v.error());
    r.max_lifetime_s = *v;
  }
  return r;
}

json session_request_json(const SessionRequest& r) {
  const auto& p = r.policy;
  json env = json::object();
  for (const auto& [k, v] : p.env) env[k] = v;
  json allow = json::array();
  for (const auto& rule : p.allow) allow.push_back(egress::rule_json(rule));
  return {{"image", r.image},
          {"inputs", r.input_ids},
          {"snapshot", r.snapshot},
          {"idle_timeout_s", r.idle_timeout_s},
          {"max_lifetime_s", r.max_lifetime_s},
          {"policy",
           {{"timeout_s", static_cast<double>(p.timeout_ms) / 1000},
            {"memory_mb", p.memory_bytes >> 20},
            {"pids", p.pids},
            {"cpus", p.cpus},
            {"workspace_mb", p.workspace_bytes >> 20},
            {"env", env},
            {"allow", allow}}}};
}

Result<ExecRequest> parse_exec_request(const json& body, uint64_t default_timeout_ms, uint64_t max_timeout_ms) {
  if (!body.is_object()) return fail("the body must be a JSON object");
  if (auto st = only_known_fields(body, "", {"code", "kind", "timeout_s", "wait_s", "answers"}); !st) return std::unexpected(st.error());
  ExecRequest r;
  r.timeout_ms = default_timeout_ms;
  if (!body.contains("code") || !body["code"].is_string()) return bad_field("code", "must be a string");
  r.code = body["code"].get<std::string>();
  if (r.code.size() > (1u << 20)) return bad_field("code", "at most 1 MiB");
  if (body.contains("kind")) {
    if (!body["kind"].is_string()) return bad_field("kind", "must be a string");
    r.kind = body["kind"].get<std::string>();
    if (r.kind != "python" && r.kind != "shell") return bad_field("kind", "must be \"python\" or \"shell\"");
  }
  if (body.contains("timeout_s")) {
    const json& v = body["timeout_s"];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
      return bad_field("timeout_s", "must be a number more than 0");
    double ms = v.get<double>() * 1000;
    if (ms > static_cast<double>(max_timeout_ms))
      return bad_field("timeout_s", "exceeds the tenant's limit of " +
                                        number_text(static_cast<double>(max_timeout_ms) / 1000));
    r.timeout_ms = static_cast<uint64_t>(std::llround(std::max(ms, 1.0)));
  }
  if (body.contains("answers")) {
    const json& a = body["answers"];
    if (!a.is_array() || a.size() > 32) return bad_field("answers", "must be a list of at most 32 request ids");
    for (const auto& id : a) {
      bool ok = id.is_string() && id.get_ref<const std::string&>().size() >= 2 &&
                id.get_ref<const std::string&>().size() <= 12 && id.get_ref<const std::string&>()[0] == 'r' &&
                id.get_ref<const std::string&>().find_first_not_of("0123456789", 1) == std::string::npos;
      if (!ok) return bad_field("answers", "each must be a data request id such as \"r1\"");
      std::string s = id.get<std::string>();
      if (std::find(r.answers.begin(), r.answers.end(), s) != r.answers.end())
        return bad_field("answers", s + " is named twice");
      r.answers.push_back(std::move(s));
    }
  }
  if (body.contains("wait_s")) {
    auto v = whole_seconds(body["wait_s"], "wait_s", 0, kMaxWaitSeconds);
    if (!v) return std::unexpected(v.error());
    r.wait_s = *v;
  }
  return r;
}

}  // namespace airlock::service
