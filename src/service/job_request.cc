#include "service/job_request.h"

#include <cmath>
#include <set>

#include "base/number_text.h"
#include "images/image_ref.h"
#include "jobs/run_request.h"
#include "sandbox/profile.h"
#include "service/egress_caps.h"

namespace airlock::service {

using json = nlohmann::json;

std::unexpected<Error> bad_field(const std::string& field, const std::string& why) {
  return fail(field + ": " + why);
}

Status only_known_fields(const json& obj, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [key, _] : obj.items())
    if (!known.count(key)) return bad_field(where + key, "unknown field");
  return {};
}

Result<int> whole_seconds(const json& v, const std::string& field, int lo, int hi) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return bad_field(field, "must be a whole number of seconds from " + std::to_string(lo) + " to " +
                                std::to_string(hi));
  return static_cast<int>(v.get<int64_t>());
}

Result<std::string> parse_image(const json& v) {
  if (!v.is_string()) return bad_field("image", "must be a string");
  if (auto ref = images::parse_image_ref(v.get<std::string>()); !ref) return bad_field("image", ref.error().message());
  return v.get<std::string>();
}

Result<std::string> parse_profile(const json& v, bool for_session) {
  if (!v.is_string()) return bad_field("profile", "must be a string");
  const sandbox::Profile* p = sandbox::find_profile(v.get<std::string>());
  if (p == nullptr) return bad_field("profile", "unknown profile (available: " + sandbox::profile_names() + ")");
  if (for_session && !p->sessions)
    return bad_field("profile", p->name + " is for jobs only: a session's keeper starts its kernel with fork "
                                          "and exec, which " + p->name + " denies");
  return p->name;
}

Result<std::string> parse_snapshot_digest(const json& v) {
  if (!v.is_string() || !is_snapshot_digest(v.get<std::string>()))
    return bad_field("snapshot", "must be a snapshot digest (sha256:<64 hex>)");
  return v.get<std::string>();
}

namespace {

std::unexpected<Error> bad(const std::string& field, const std::string& why) { return bad_field(field, why); }

// A positive number no larger than `max` (in the field's unit), scaled.
Result<uint64_t> bounded(const json& v, const std::string& field, double scale, uint64_t max_scaled) {
  if (!v.is_number()) return bad(field, "must be a number");
  double x = v.get<double>();
  if (!std::isfinite(x) || x <= 0) return bad(field, "must be more than 0");
  double scaled = x * scale;
  if (scaled > static_cast<double>(max_scaled))
    return bad(field,
               "exceeds the tenant's limit of " + number_text(static_cast<double>(max_scaled) / scale));
  return static_cast<uint64_t>(std::llround(scaled));
}

}  // namespace

Status parse_policy(const json& p, const PolicyCaps& caps, jobs::JobPolicy& out) {
  if (!p.is_object()) return bad("policy", "must be an object");
  if (auto st = only_known_fields(p, "policy.", {"timeout_s", "cpu_time_s", "memory_mb", "pids", "cpus", "env",
                                          "network", "allow", "workspace_mb", "stdout_cap_kb", "outputs"});
      !st)
    return st;
  auto take = [&](const char* key, double scale, uint64_t max, uint64_t& field) -> Status {
    if (!p.contains(key)) return {};
    auto v = bounded(p[key], std::string("policy.") + key, scale, max);
    if (!v) return std::unexpected(v.error());
    field = *v;
    return {};
  };
  if (auto st = take("timeout_s", 1000, caps.max_timeout_ms, out.timeout_ms); !st) return st;
  if (auto st = take("cpu_time_s", 1000, caps.max_cpu_time_ms, out.cpu_time_ms); !st) return st;
  if (auto st = take("memory_mb", 1 << 20, caps.max_memory_bytes, out.memory_bytes); !st) return st;
  if (auto st = take("pids", 1, caps.max_pids, out.pids); !st) return st;
  if (auto st = take("workspace_mb", 1 << 20, 4ull << 30, out.workspace_bytes); !st) return st;
  if (auto st = take("stdout_cap_kb", 1 << 10, 16ull << 20, out.stdout_cap_bytes); !st) return st;
  if (out.memory_bytes < (8u << 20)) return bad("policy.memory_mb", "must be at least 8");
  if (out.pids < 4) return bad("policy.pids", "must be at least 4");
  if (p.contains("cpus")) {
    if (!p["cpus"].is_number()) return bad("policy.cpus", "must be a number");
    double c = p["cpus"].get<double>();
    if (!std::isfinite(c) || c < 0.01) return bad("policy.cpus", "must be at least 0.01");
    if (c > caps.max_cpus) return bad("policy.cpus", "exceeds the tenant's limit of " + number_text(caps.max_cpus));
    out.cpus = c;
  }
  if (p.contains("outputs")) {
    const json& o = p["outputs"];
    if (!o.is_object()) return bad("policy.outputs", "must be an object");
    if (auto st = only_known_fields(o, "policy.outputs.", {"types", "max_files", "max_file_mb", "max_total_mb"}); !st)
      return st;
    uint64_t files = out.outputs.max_count;
    if (o.contains("max_files")) {
      auto v = bounded(o["max_files"], "policy.outputs.max_files", 1, 10'000);
      if (!v) return std::unexpected(v.error());
      files = *v;
    }
    out.outputs.max_count = static_cast<size_t>(files);
    if (o.contains("max_file_mb")) {
      auto v = bounded(o["max_file_mb"], "policy.outputs.max_file_mb", 1 << 20, 1ull << 30);
      if (!v) return std::unexpected(v.error());
      out.outputs.max_file_bytes = *v;
    }
    if (o.contains("max_total_mb")) {
      auto v = bounded(o["max_total_mb"], "policy.outputs.max_total_mb", 1 << 20, 4ull << 30);
      if (!v) return std::unexpected(v.error());
      out.outputs.max_total_bytes = *v;
    }
    if (o.contains("types")) {
      if (!o["types"].is_array() || o["types"].empty()) return bad("policy.outputs.types", "must be a non-empty array");
      std::string list;
      for (const auto& t : o["types"]) {
        if (!t.is_string()) return bad("policy.outputs.types", "must hold strings");
        list += (list.empty() ? "" : ",") + t.get<std::string>();
      }
      auto types = jobs::parse_type_list(list);
      if (!types) return bad("policy.outputs.types", types.error().what);
      out.outputs.allowed = *types;
    }
  }
  if (p.contains("network")) {
    if (p["network"] != "none") return bad("policy.network", "only \"none\" (destinations go in policy.allow)");
  }
  if (p.contains("allow")) {
    // Destinations by name only: a secret is named, its value is the operator's.
    auto policy = egress::parse_policy(p["allow"]);
    if (!policy) return bad("policy.allow", policy.error().what);
    if (policy->rules.size() > 64) return bad("policy.allow", "at most 64 destinations");
    if (auto st = check_egress_caps(policy->rules, caps.network); !st) return st;
    out.allow = std::move(policy->rules);
  }
  if (p.contains("env")) {
    if (!p["env"].is_object()) return bad("policy.env", "must be an object of strings");
    if (p["env"].size() > 64) return bad("policy.env", "at most 64 variables");
    for (const auto& [name, value] : p["env"].items()) {
      if (!value.is_string()) return bad("policy.env." + name, "must be a string");
      std::string v = value.get<std::string>();
      if (v.find('\0') != std::string::npos || v.size() > 4096)
        return bad("policy.env." + name, "must be at most 4096 bytes without NUL");
      if (!jobs::valid_env_name(name)) return bad("policy.env." + name, "is not a valid variable name");
      out.env.emplace_back(name, v);
    }
  }
  return {};
}

namespace {

Result<std::vector<std::string>> string_array(const json& v, const std::string& field, size_t max) {
  if (!v.is_array()) return bad(field, "must be an array of strings");
  if (v.size() > max) return bad(field, "at most " + std::to_string(max) + " entries");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return bad(field + "[" + std::to_string(i) + "]", "must be a string");
    std::string s = v[i].get<std::string>();
    if (s.find('\0') != std::string::npos) return bad(field + "[" + std::to_string(i) + "]", "contains NUL");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

bool is_snapshot_digest(const std::string& s) {
  if (s.rfind("sha256:", 0) != 0) return false;
  std::string hex = s.substr(7);
  return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Result<std::vector<std::string>> parse_input_ids(const json& v) {
  auto ids = string_array(v, "inputs", 32);
  if (!ids) return std::unexpected(ids.error());
  std::set<std::string> seen;
  for (const auto& id : *ids)
    if (!seen.insert(id).second) return bad("inputs", "file " + id + " is listed twice");
  return ids;
}

Result<JobRequest> parse_job_request(const json& body, const PolicyCaps& caps) {
  if (!body.is_object()) return fail("the body must be a JSON object");
  if (auto st = only_known_fields(body, "", {"command", "code", "language", "image", "profile", "inputs", "snapshot", "policy", "checks", "wait_s",
                                             "answers"});
      !st)
    return std::unexpected(st.error());
  JobRequest r;
  bool has_command = body.contains("command"), has_code = body.contains("code");
  if (has_command == has_code) return fail("give exactly one of \"command\" or \"code\"");
  if (has_command) {
    auto cmd = string_array(body["command"], "command", 256);
    if (!cmd) return std::unexpected(cmd.error());
    if (cmd->empty() || (*cmd)[0].empty()) return bad("command", "must name a program");
    r.command = std::move(*cmd);
    if (body.contains("language")) return bad("language", "only with \"code\"");
  } else {
    if (!body["code"].is_string()) return bad("code", "must be a string");
    std::string language = "python";
    if (body.contains("language")) {
      if (!body["language"].is_string()) return bad("language", "must be a string");
      language = body["language"].get<std::string>();
    }
    if (language == "python") {
      r.code_name = "main.py";
      r.command = {"python3", "/inputs/main.py"};
    } else if (language == "sh") {
      r.code_name = "main.sh";
      r.command = {"sh", "/inputs/main.sh"};
    } else {
      return bad("language", "must be \"python\" or \"sh\"");
    }
    r.code = body["code"].get<std::string>();
    if (r.code->size() > (1u << 20)) return bad("code", "at most 1 MiB");
  }
  if (body.contains("image")) {
    auto image = parse_image(body["image"]);
    if (!image) return std::unexpected(image.error());
    r.image = *image;
  }
  if (body.contains("profile")) {
    auto profile = parse_profile(body["profile"], false);
    if (!profile) return std::unexpected(profile.error());
    r.profile = *profile;
  }
  if (body.contains("inputs")) {
    auto ids = parse_input_ids(body["inputs"]);
    if (!ids) return std::unexpected(ids.error());
    r.input_ids = std::move(*ids);
  }
  if (body.contains("policy"))
    if (auto st = parse_policy(body["policy"], caps, r.policy); !st) return std::unexpected(st.error());
  if (body.contains("snapshot")) {
    auto digest = parse_snapshot_digest(body["snapshot"]);
    if (!digest) return std::unexpected(digest.error());
    r.snapshot = *digest;
  }
  if (body.contains("checks")) {
    if (!body["checks"].is_array()) return bad("checks", "must be an array");
    r.checks = body["checks"];
  }
  if (body.contains("wait_s")) {
    auto wait = whole_seconds(body["wait_s"], "wait_s", 0, kMaxWaitSeconds);
    if (!wait) return std::unexpected(wait.error());
    r.wait_s = *wait;
  }
  if (body.contains("answers")) {
    auto answers = parse_answers(body["answers"]);
    if (!answers) return std::unexpected(answers.error());
    r.answers = std::move(*answers);
  }
  return r;
}

Result<JobRequest::Answers> parse_answers(const json& a) {
  if (!a.is_object()) return bad("answers", "must be an object {\"job\", \"requests\"}");
  if (auto st = only_known_fields(a, "answers.", {"job", "requests", "record_sha256"}); !st)
    return std::unexpected(st.error());
  JobRequest::Answers out;
  if (!a.contains("job") || !a["job"].is_string() || a["job"].get_ref<const std::string&>().empty() ||
      a["job"].get_ref<const std::string&>().size() > 128)
    return bad("answers.job", "must be a job id");
  out.job = a["job"].get<std::string>();
  if (!a.contains("requests") || !a["requests"].is_array() || a["requests"].empty() || a["requests"].size() > 64)
    return bad("answers.requests", "must list 1-64 request ids (r1, r2, ...)");
  std::set<std::string> seen;
  for (const auto& id : a["requests"]) {
    const bool ok = id.is_string() && id.get_ref<const std::string&>().size() >= 2 &&
                    id.get_ref<const std::string&>().size() <= 8 && id.get_ref<const std::string&>()[0] == 'r' &&
                    id.get_ref<const std::string&>().find_first_not_of("0123456789", 1) == std::string::npos;
    if (!ok) return bad("answers.requests", "must list request ids (r1, r2, ...)");
    if (!seen.insert(id.get<std::string>()).second)
      return bad("answers.requests", id.get<std::string>() + " is listed twice");
    out.requests.push_back(id.get<std::string>());
  }
  if (a.contains("record_sha256") && a["record_sha256"].is_string()) out.record_sha256 = a["record_sha256"].get<std::string>();
  return out;
}

jobs::RunRequest run_request_for(const JobRequest& r, const RunPlacement& at) {
  jobs::RunRequest run;
  run.command = r.command;
  run.inputs = at.input_paths;
  run.output_dir = at.output_dir;
  run.quiet = true;
  run.image = r.image.empty() ? "host" : r.image;
  run.image_dir = at.image_dir;
  run.profile = r.profile;
  run.state_dir = at.state_dir;
  run.snapshot_manifest = at.snapshot_manifest;
  run.content_dir = at.content_dir;
  if (!r.policy.allow.empty()) {  // the operator's files matter only to a job with network rules
    run.egress_hosts_file = at.egress_hosts_file;
    run.secrets_file = at.secrets_file;
    run.egress_ca_file = at.egress_ca_file;
  }
  run.policy = r.policy;
  return run;
}

}  // namespace airlock::service
