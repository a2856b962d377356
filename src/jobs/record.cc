#include "jobs/record.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "base/base64.h"
#include "base/utf8.h"

namespace airlock::jobs {

void JobRecord::add_limit(const std::string& name) {
  if (std::find(limits_hit.begin(), limits_hit.end(), name) == limits_hit.end())
    limits_hit.push_back(name);
}

namespace {

// "after_record" only when the teardown came after the record (jobs of
// `airlock run` and of the service); it is absent when the removals came first.
nlohmann::json cleanup_json(const Cleanup& c) {
  nlohmann::json j = {{"ok", c.failed.empty()}, {"removed", c.removed}, {"failed", c.failed}};
  if (!c.after_record.empty()) j["after_record"] = c.after_record;
  return j;
}

nlohmann::json type_list(const workspace::TypeSet& types) {
  auto out = nlohmann::json::array();
  for (auto t : types) out.push_back(std::string(workspace::type_name(t)));
  return out;
}

nlohmann::json policy_json(const JobPolicy& p) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : p.env) env[k] = v;
  auto allow = nlohmann::json::array();
  for (const auto& rule : p.allow) allow.push_back(egress::rule_json(rule));
  return {
      {"timeout_ms", p.timeout_ms},
      {"cpu_time_ms", p.cpu_time_ms},
      {"memory_bytes", p.memory_bytes},
      {"pids", p.pids},
      {"cpus", p.cpus},
      {"network", p.allow.empty() ? "none" : "gateway"},
      {"allow", allow},
      {"env", env},
      {"workspace_bytes", p.workspace_bytes},
      {"stdout_cap_bytes", p.stdout_cap_bytes},
      {"inputs",
       {{"max_file_bytes", p.inputs.max_file_bytes},
        {"max_total_bytes", p.inputs.max_total_bytes},
        {"max_count", p.inputs.max_count},
        {"types", type_list(p.inputs.allowed)}}},
      {"outputs",
       {{"max_file_bytes", p.outputs.max_file_bytes},
        {"max_total_bytes", p.outputs.max_total_bytes},
        {"max_count", p.outputs.max_count},
        {"max_depth", p.outputs.max_depth},
        {"types", type_list(p.outputs.allowed)}}},
  };
}

nlohmann::json stream_json(const CapturedStream& s) {
  const StreamEncoding encoding = stream_encoding(s.text);
  return {{"text", encoding == StreamEncoding::kBase64 ? base64_encode(s.text) : s.text},
          {"encoding", encoding_name(encoding)},
          {"bytes", s.bytes},
          {"truncated", s.truncated}};
}

nlohmann::json optional_int(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

size_t json_escaped_size(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t')
      n += 2;
    else if (b < 0x20)
      n += 6;  // \u00XX
    else
      n += 1;
  }
  return n;
}

StreamEncoding stream_encoding(std::string_view bytes) {
  if (!valid_utf8(bytes)) return StreamEncoding::kBase64;
  return json_escaped_size(bytes) <= base64_size(bytes.size()) + kStreamTextSlack
             ? StreamEncoding::kUtf8
             : StreamEncoding::kBase64;
}

std::string_view encoding_name(StreamEncoding encoding) {
  return encoding == StreamEncoding::kBase64 ? "base64" : "utf-8";
}

std::optional<std::string> stream_bytes(const nlohmann::json& stream) {
  if (!stream.is_object() || !stream.contains("text") || !stream["text"].is_string())
    return std::nullopt;
  const std::string& text = stream["text"].get_ref<const std::string&>();
  std::string encoding = "utf-8";  // records before the encoding was named
  if (stream.contains("encoding")) {
    if (!stream["encoding"].is_string()) return std::nullopt;
    encoding = stream["encoding"].get<std::string>();
  }
  if (encoding == "utf-8") return text;
  if (encoding == "base64") return base64_decode(text);
  return std::nullopt;
}

static nlohmann::json timing_json(const Timing& t) {
  nlohmann::json timing = nlohmann::json::object();
  for (const auto& [name, ms] : t.phases) timing[name + "_ms"] = std::round(ms * 1000) / 1000;
  return timing;
}

nlohmann::json to_json(const JobRecord::DataRequests& d) {
  auto list = nlohmann::json::array();
  for (const auto& q : d.requests)
    list.push_back({{"id", q.id},
                    {"name", q.name},
                    {"why", q.why},
                    {"description", q.description.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.description)},
                    // Validated by the parser: an object of scalars.
                    {"params", nlohmann::json::parse(q.params_json)}});
  auto refused = nlohmann::json::array();
  for (const auto& f : d.refused) refused.push_back({{"reason", f.reason}, {"bytes", f.bytes}, {"lines", f.lines}});
  return {{"limits",
           {{"requests", d.limits.requests},
            {"bytes_per_request", d.limits.bytes_per_request},
            {"channel_bytes", d.limits.channel_bytes}}},
          {"requests", list},
          {"refused", refused}};
}

nlohmann::json to_json(const JobRecord& r) {
  nlohmann::json timing = timing_json(r.timing);
  auto inputs = nlohmann::json::array();
  for (const auto& e : r.inputs)
    inputs.push_back({{"name", e.name}, {"size", e.size}, {"sha256", e.sha256}, {"type", e.type}});
  auto outputs = nlohmann::json::array();
  for (const auto& e : r.outputs)
    outputs.push_back({{"name", e.name},
                       {"size", e.size},
                       {"sha256", e.sha256},
                       {"type", e.type},
                       {"verdict", e.accepted ? "accepted" : "rejected"},
                       {"reason", e.reason}});
  auto network = nlohmann::json::array();
  for (const auto& a : r.network) network.push_back(egress::to_json(a));
  nlohmann::json out = {
      {"id", r.id},
      {"owner", r.owner},
      {"command", r.command},
      {"image", {{"name", r.image_name},
                 {"digest", r.image_digest},
                 {"manifest_digest", r.image_manifest_digest.empty() ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(r.image_manifest_digest)},
                 {"pinned", r.image_pinned},
                 {"requested", r.image_requested}}},
      {"profile", {{"name", r.profile_name},
                   {"digest", r.profile_digest.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.profile_digest)}}},
      {"policy", policy_json(r.policy)},
      {"inputs", inputs},
      {"snapshot", r.snapshot.digest.empty()
                       ? nlohmann::json(nullptr)
                       : nlohmann::json{{"digest", r.snapshot.digest},
                                        {"entries", r.snapshot.entries},
                                        {"size_bytes", r.snapshot.size_bytes}}},
      {"outputs", outputs},
      {"outcome", std::string(outcome_name(r.outcome))},
      {"reason", r.reason},
      {"exit_code", optional_int(r.exit_code)},
      {"signal", optional_int(r.signal)},
      {"limits_hit", r.limits_hit},
      {"usage",
       {{"wall_ms", r.usage.wall_ms},
        {"cpu_ms", r.usage.cpu_ms},
        {"peak_memory_bytes", r.usage.peak_memory_bytes}}},
      {"stdout", stream_json(r.stdout_stream)},
      {"stderr", stream_json(r.stderr_stream)},
      {"started_at", r.started_at},
      {"finished_at", r.finished_at},
      {"cleanup", cleanup_json(r.cleanup)},
      {"timing", timing},
      {"sandbox",
       {{"start", r.start_kind},
        {"prepared", r.prepared},
        {"start_note", r.start_note},
        {"uid", r.sandbox_uid},
        {"host_uid", r.host_uid},
        {"cgroup", r.cgroup_backend}}},
      {"network", network},
  };
  if (!r.interpreter.empty()) out["sandbox"]["interpreter"] = r.interpreter;
  if (r.network_dropped > 0) out["network_dropped"] = r.network_dropped;
  if (r.data_requests) out["data_requests"] = to_json(*r.data_requests);
  if (r.answers)
    out["answers"] = {{"job", r.answers->job},
                      {"requests", r.answers->requests},
                      {"record_sha256", r.answers->record_sha256}};
  if (r.checks) {
    auto checks = nlohmann::json::array();
    for (const auto& c : *r.checks) checks.push_back(validate::to_json(c));
    out["checks"] = checks;
  }
  if (r.service) {
    const auto& s = *r.service;
    out["tenant"] = s.tenant;
    out["key_id"] = s.key_id;
    out["states"] = {{"created_at", s.created_at},
                     {"started_at", s.started_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.started_at)},
                     {"finished_at", s.finished_at}};
    if (!s.timing.phases.empty()) out["service_timing"] = timing_json(s.timing);
    if (!s.node.empty()) out["node"] = s.node;
  }
  return out;
}

std::string record_text(const JobRecord& record) {
  return to_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string now_rfc3339() { return rfc3339(std::chrono::system_clock::now()); }

std::string rfc3339(std::chrono::system_clock::time_point now) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

}  // namespace airlock::jobs
