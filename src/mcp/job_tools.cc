// run_code, upload_file and get_job_record: jobs through POST /v1/jobs,
// their live output from GET /v1/jobs/{id}/events, their records.
#include <chrono>
#include <thread>

#include "http/url.h"
#include "base/base64.h"
#include "mcp/content.h"
#include "mcp/data_requests.h"
#include "mcp/event_follow.h"
#include "mcp/tools.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

// A record's stdout/stderr ({"text", "encoding"}) as bytes.
std::string stream_bytes(const json& s) {
  std::string text = str(s, "text");
  if (str(s, "encoding") == "base64") {
    auto bytes = base64_decode(text);
    return bytes ? *bytes : "";
  }
  return text;
}

// Uploads one inline file; its id, or an error result.
std::expected<std::string, ToolResult> upload(ApiConnection& api, const std::string& name,
                                              const std::string& bytes) {
  auto r = api.call("POST", "/v1/files?name=" + api::percent_encode(name), bytes,
                    {{"Content-Type", "application/octet-stream"}});
  if (!ok(r)) {
    ToolResult e = api_error_result(r);
    e.content[0]["text"] = "file " + name + ": " + e.content[0]["text"].get<std::string>();
    return std::unexpected(e);
  }
  return str(body_json(r), "id");
}

std::expected<json, ToolResult> job_body(const json& args, ApiConnection& api) {
  json body = {{"code", args["code"]}};
  body["language"] = args.value("language", "python") == "shell" ? "sh" : "python";
  json inputs = json::array();
  for (const auto& f : args.value("files", json::array())) {
    if (f.contains("file_id")) {
      if (f.contains("name") || f.contains("text"))
        return std::unexpected(
            error_result("files: give either file_id, or name and text, not both"));
      inputs.push_back(f["file_id"]);
    } else {
      if (!f.contains("name") || !f.contains("text"))
        return std::unexpected(error_result("files: each entry needs file_id, or name and text"));
      auto id = upload(api, f["name"], f["text"]);
      if (!id) return std::unexpected(id.error());
      inputs.push_back(*id);
    }
  }
  if (!inputs.empty()) body["inputs"] = inputs;
  if (args.contains("answers")) body["answers"] = args["answers"];
  if (args.contains("policy")) {
    json policy = json::object();
    for (const char* k : {"timeout_s", "memory_mb", "cpus"})
      if (args["policy"].contains(k)) policy[k] = args["policy"][k];
    if (args["policy"].contains("allow")) {
      json rules = json::array();
      for (const auto& d : args["policy"]["allow"]) {
        auto rule = allow_rule(d.get<std::string>());
        if (!rule) return std::unexpected(error_result(rule.error()));
        rules.push_back(*rule);
      }
      policy["allow"] = rules;
    }
    body["policy"] = policy;
  }
  return body;
}

void cancel_job(ApiConnection& api, const std::string& id) {
  api.call("POST", "/v1/jobs/" + api::percent_encode(id) + "/cancel");
}

// The job's view once it has finished (polled when the stream was lost;
// a cancellation meanwhile still cancels the job).
json finished_view(ApiConnection& api, const std::string& id, const CallContext& ctx,
                   bool cancelled, std::string& error) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(65);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!cancelled && ctx.is_cancelled()) {
      cancel_job(api, id);
      cancelled = true;
    }
    auto r = api.call("GET", "/v1/jobs/" + api::percent_encode(id));
    if (!ok(r)) {
      error = describe_api_error(r);
      return nullptr;
    }
    json view = body_json(r);
    if (str(view, "state") == "finished") return view;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  error = "the job did not finish";
  return nullptr;
}

std::string describe_attempt(const json& a) {
  std::string text = str(a, "method") + " " + str(a, "host");
  if (a.contains("port") && a["port"].is_number())
    text += ":" + std::to_string(a["port"].get<int>());
  text += str(a, "path");
  std::string reason = str(a, "reason");
  return reason.empty() ? text : text + " (" + reason + ")";
}

}  // namespace

ToolResult job_result(ApiConnection& api, const json& view) {
  const json& rec =
      view.contains("record") && view["record"].is_object() ? view["record"] : json::object();
  std::string id = str(view, "id");
  std::string outcome = str(view, "outcome");
  ToolResult out;
  json s = {{"job_id", id}, {"outcome", outcome}, {"reason", str(rec, "reason")}};
  s["exit_code"] = rec.contains("exit_code") && rec["exit_code"].is_number_integer()
                       ? rec["exit_code"]
                       : json(nullptr);
  auto so = cap_text(stream_bytes(rec.value("stdout", json::object())));
  auto se = cap_text(stream_bytes(rec.value("stderr", json::object())));
  s["stdout"] = so.text;
  s["stderr"] = se.text;
  s["stdout_capped"] = so.capped;
  s["stderr_capped"] = se.capped;
  json denied = json::array();
  for (const auto& a : rec.value("network", json::array()))
    if (a.is_object() && a.contains("allowed") && a["allowed"] == false)
      denied.push_back(describe_attempt(a));
  s["network_denied"] = denied;
  s["limits_hit"] = rec.value("limits_hit", json::array());

  std::string text = "job " + id + ": " + outcome;
  if (!str(rec, "reason").empty()) text += " (" + str(rec, "reason") + ")";
  text += "\n";
  if (!so.text.empty()) text += "--- stdout ---\n" + so.text + (so.text.back() == '\n' ? "" : "\n");
  if (!se.text.empty()) text += "--- stderr ---\n" + se.text + (se.text.back() == '\n' ? "" : "\n");
  for (const auto* note : {&so, &se}) {
    std::string n = cap_note(note == &so ? "stdout" : "stderr", *note);
    if (!n.empty()) text += n + " (get_job_record has up to the job's stdout cap)\n";
  }
  for (const auto& d : denied) text += "network connection denied: " + d.get<std::string>() + "\n";
  if (!s["limits_hit"].empty()) text += "limits hit: " + s["limits_hit"].dump() + "\n";

  json outputs = json::array();
  std::vector<json> blocks;
  for (const auto& o : rec.value("outputs", json::array())) {
    if (!o.is_object()) continue;
    std::string name = str(o, "name"), verdict = str(o, "verdict"), type = str(o, "type");
    std::string path =
        "/v1/jobs/" + api::percent_encode(id) + "/outputs/" + api::percent_encode(name);
    json entry = {{"name", name},
                  {"type", type},
                  {"size", o.value("size", 0)},
                  {"sha256", str(o, "sha256")},
                  {"verdict", verdict},
                  {"reason", str(o, "reason")}};
    if (verdict != "accepted") {
      text += "output " + name + " rejected: " + str(o, "reason") + "\n";
      outputs.push_back(entry);
      continue;
    }
    if (outcome == "succeeded") entry["uri"] = api.target().base_url + path;
    outputs.push_back(entry);
    if (outcome != "succeeded") continue;  // outputs are kept only for jobs that succeeded
    uint64_t size = o.value("size", uint64_t{0});
    if (type == "png" && size <= kImageCapBytes) {
      auto r = api.call("GET", path);
      if (ok(r)) {
        blocks.push_back(image_block(base64_encode(r.body), "image/png"));
        continue;
      }
    }
    blocks.push_back(
        resource_link(api.target().base_url + path, name, mime_of(type), str(o, "sha256"), size));
  }
  s["outputs"] = outputs;
  out.content.push_back(text_block(text));
  for (auto& b : blocks) out.content.push_back(std::move(b));
  out.structured = s;
  out.is_error = outcome != "succeeded" || !denied.empty();
  if (outcome == "input_requested") {
    // The code asked for data: the requests lead, and it is not an error
    // (the assistant passes them on instead of reading a failure into them).
    json requests = job_requests(view);
    s["data_requests"] = requests;
    out.structured = s;
    out.content.insert(out.content.begin(),
                       text_block(data_request_text({.kind = "job", .job_id = id}, requests,
                                                    job_requests_refused(view))));
    out.is_error = !denied.empty();
  }
  return out;
}

ToolResult run_code(const json& args, ApiConnection& api, const CallContext& ctx) {
  auto body = job_body(args, api);
  if (!body) return body.error();
  auto created = api.call("POST", "/v1/jobs", body->dump());
  if (!ok(created)) return api_error_result(created);
  std::string id = str(body_json(created), "id");
  ctx.progress("job " + id + " queued");
  std::string events = "/v1/jobs/" + api::percent_encode(id) + "/events";
  auto followed = follow_events(api, events, "end", output_as_progress(ctx), ctx,
                                [&api, &id] { cancel_job(api, id); });
  std::string error;
  json view = finished_view(api, id, ctx, followed.cancelled, error);
  if (view.is_null()) return error_result("job " + id + ": " + error);
  return job_result(api, view);
}

ToolResult upload_file(const json& args, ApiConnection& api, const CallContext&) {
  auto bytes = file_content(args);
  if (!bytes) return error_result(bytes.error());
  if (bytes->size() > (8u << 20)) return error_result("the file is larger than 8 MiB");
  std::string name = args["name"];
  auto r = api.call("POST", "/v1/files?name=" + api::percent_encode(name), *bytes,
                    {{"Content-Type", "application/octet-stream"}});
  if (!ok(r)) return api_error_result(r);
  json j = body_json(r);
  ToolResult out;
  out.structured = {{"file_id", str(j, "id")},
                    {"name", str(j, "name")},
                    {"size", j.value("size", 0)},
                    {"sha256", str(j, "sha256")},
                    {"type", str(j, "type")}};
  out.content.push_back(text_block("uploaded " + name + " as file_id " + str(j, "id") + " (" +
                                   str(j, "type") + ", " + std::to_string(j.value("size", 0)) +
                                   " bytes, sha256 " + str(j, "sha256") + ")"));
  return out;
}

ToolResult get_job_record(const json& args, ApiConnection& api, const CallContext&) {
  auto r = api.call("GET", "/v1/jobs/" + api::percent_encode(args["job_id"].get<std::string>()));
  if (!ok(r)) return api_error_result(r);
  json view = body_json(r);
  ToolResult out;
  json record = view.contains("record") ? view["record"] : json(nullptr);
  out.structured = {{"job_id", str(view, "id")},
                    {"state", str(view, "state")},
                    {"outcome", view.contains("outcome") ? view["outcome"] : json(nullptr)},
                    {"record", record}};
  // The requests with their answers as of now (the record has them as asked).
  json requests = job_requests(view);
  if (!requests.empty()) out.structured["data_requests"] = requests;
  auto text = cap_text(view.dump(1, ' ', false, json::error_handler_t::replace), 64 << 10);
  out.content.push_back(
      text_block(text.text + (text.capped ? "\n" + cap_note("record", text) : "")));
  return out;
}

}  // namespace airlock::mcp
