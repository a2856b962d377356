// The session tools: a session is the server-issued session_id in the
// arguments, never transport state, so any client (or a later connection)
// can go on with it.
#include "http/url.h"
#include "base/base64.h"
#include "mcp/content.h"
#include "mcp/data_requests.h"
#include "mcp/event_follow.h"
#include "mcp/tools.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

std::string session_path(const json& args) {
  return "/v1/sessions/" + api::percent_encode(args["session_id"].get<std::string>());
}

}  // namespace

ToolResult call_result(const json& view) {
  json result = view.value("result", json::object());
  if (!result.is_object()) result = json::object();
  std::string status = str(view, "status");
  ToolResult out;
  json capped = json::array();
  auto field = [&](const char* name, size_t cap) {
    auto t = cap_text(str(result, name), cap);
    if (t.capped) capped.push_back(name);
    return t;
  };
  auto so = field("stdout", kTextCapBytes), se = field("stderr", kTextCapBytes);
  auto value = field("value", kTextCapBytes), error = field("error", kTextCapBytes);
  json figures = result.value("figures", json::array());
  if (!figures.is_array()) figures = json::array();
  json s = {{"call_id", str(view, "id")},
            {"session_id", str(view, "session_id")},
            {"status", status},
            {"stdout", so.text},
            {"stderr", se.text},
            {"value", value.text},
            {"error", error.text},
            {"figures", figures.size()},
            {"capped", capped}};
  s["exit_code"] = str(view, "kind") == "shell" && result.contains("exit_code")
                       ? result["exit_code"]
                       : json(nullptr);
  std::string text = "call " + str(view, "id") + ": " + status + "\n";
  if (!so.text.empty()) text += "--- stdout ---\n" + so.text + (so.text.back() == '\n' ? "" : "\n");
  if (!se.text.empty()) text += "--- stderr ---\n" + se.text + (se.text.back() == '\n' ? "" : "\n");
  if (!value.text.empty()) text += "--- value ---\n" + value.text + "\n";
  if (!error.text.empty())
    text += "--- error ---\n" + error.text + (error.text.back() == '\n' ? "" : "\n");
  if (str(view, "kind") == "shell" && result.contains("exit_code"))
    text += "exit code " + result["exit_code"].dump() + "\n";
  for (const auto* t : {&so, &se, &value, &error}) {
    const char* name = t == &so ? "stdout" : t == &se ? "stderr" : t == &value ? "value" : "error";
    if (t->capped) text += cap_note(name, *t) + "\n";
  }
  json truncated = result.value("truncated", json::object());
  if (truncated.is_object() && truncated.value("figures", false))
    text += "[figures: some did not fit the service's cap and were left out]\n";
  if (!figures.empty())
    text += std::to_string(figures.size()) + " figure(s) follow as PNG images\n";
  out.content.push_back(text_block(text));
  for (const auto& f : figures)
    if (f.is_string() && f.get_ref<const std::string&>().size() <= base64_size(kImageCapBytes))
      out.content.push_back(image_block(f.get<std::string>(), "image/png"));
  out.structured = s;
  out.is_error = status != "ok";
  if (status == "input_requested") {
    // The code asked for data: not an error; the requests lead (see data_requests.h).
    json requests = call_requests(view);
    out.structured["data_requests"] = requests;
    out.content.insert(out.content.begin(),
                       text_block(data_request_text({.kind = "session",
                                                     .session_id = str(view, "session_id"),
                                                     .call_id = str(view, "id")},
                                                    requests, call_requests_refused(view))));
    out.is_error = false;
  }
  return out;
}

ToolResult open_session(const json& args, ApiConnection& api, const CallContext&) {
  json body = json::object();
  if (args.contains("files")) body["inputs"] = args["files"];
  if (args.contains("snapshot")) body["snapshot"] = args["snapshot"];
  if (args.contains("idle_timeout_s")) body["idle_timeout_s"] = args["idle_timeout_s"];
  json policy = json::object();
  if (args.contains("memory_mb")) policy["memory_mb"] = args["memory_mb"];
  if (args.contains("timeout_s")) policy["timeout_s"] = args["timeout_s"];
  if (!policy.empty()) body["policy"] = policy;
  auto r = api.call("POST", "/v1/sessions", body.dump());
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  ToolResult out;
  out.structured = {{"session_id", str(v, "id")},
                    {"state", str(v, "state")},
                    {"idle_timeout_s", v.value("idle_timeout_s", 0)},
                    {"max_lifetime_s", v.value("max_lifetime_s", 0)}};
  out.content.push_back(text_block(
      "session " + str(v, "id") + " is " + str(v, "state") + ": pass session_id \"" + str(v, "id") +
      "\" to run_in_session and the other session tools; close_session when done"));
  return out;
}

ToolResult run_in_session(const json& args, ApiConnection& api, const CallContext& ctx) {
  json body = {{"code", args["code"]}, {"kind", args.value("language", "python")}};
  if (args.contains("timeout_s")) body["timeout_s"] = args["timeout_s"];
  if (args.contains("answers")) body["answers"] = args["answers"];
  std::string base = session_path(args);
  auto r = api.call("POST", base + "/execs", body.dump());
  if (!ok(r)) return api_error_result(r);
  std::string call_id = str(body_json(r), "id");
  ctx.progress("call " + call_id + " submitted");
  auto followed = follow_events(api, base + "/execs/" + api::percent_encode(call_id) + "/events",
                                "result", output_as_progress(ctx), ctx,
                                [&api, &base] { api.call("POST", base + "/interrupt"); });
  json view;
  if (followed.final) view = json::parse(followed.final->data, nullptr, false);
  if (!view.is_object()) {
    auto got = api.call("GET", base + "/execs/" + api::percent_encode(call_id) + "?wait_s=300");
    if (!ok(got)) return api_error_result(got);
    view = body_json(got);
  }
  return call_result(view);
}

ToolResult list_session_files(const json& args, ApiConnection& api, const CallContext&) {
  std::string target = session_path(args) + "/files";
  if (args.contains("path"))
    target += "?path=" + api::percent_encode(args["path"].get<std::string>());
  auto r = api.call("GET", target);
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  ToolResult out;
  json entries = v.value("entries", json::array());
  out.structured = {
      {"path", str(v, "path")}, {"entries", entries}, {"truncated", v.value("truncated", false)}};
  std::string text =
      "/workspace/" + str(v, "path") + ": " + std::to_string(entries.size()) + " entries\n";
  for (const auto& e : entries) {
    text += "  " + str(e, "name") + (str(e, "kind") == "directory" ? "/" : "") + "  " +
            str(e, "kind") + "  " + std::to_string(e.value("size", 0)) + " bytes\n";
  }
  auto capped = cap_text(text);
  out.content.push_back(
      text_block(capped.text + (capped.capped ? "\n" + cap_note("listing", capped) : "")));
  return out;
}

ToolResult read_session_file(const json& args, ApiConnection& api, const CallContext&) {
  std::string path = args["path"];
  std::string target = session_path(args) + "/files/content?path=" + api::percent_encode(path);
  auto r = api.call("GET", target);
  if (!ok(r)) return api_error_result(r);
  std::string type =
      r.headers.count("x-content-type-detected") ? r.headers.at("x-content-type-detected") : "";
  std::string sha = r.headers.count("x-content-sha256") ? r.headers.at("x-content-sha256") : "";
  ToolResult out;
  json s = {
      {"path", path}, {"type", type}, {"size", r.body.size()}, {"sha256", sha}, {"capped", false}};
  if ((type == "png" || type == "jpeg") && r.body.size() <= kImageCapBytes) {
    out.content.push_back(text_block(path + ": " + type + ", " + std::to_string(r.body.size()) +
                                     " bytes, sha256 " + sha));
    out.content.push_back(image_block(base64_encode(r.body), mime_of(type)));
  } else if (type == "text" || type == "csv" || type == "tsv" || type == "json" || type == "svg") {
    auto t = cap_text(r.body);
    s["capped"] = t.capped;
    out.content.push_back(text_block(t.text + (t.capped ? "\n" + cap_note(path, t) : "")));
  } else {
    out.content.push_back(
        resource_link(api.target().base_url + target, path, mime_of(type), sha, r.body.size()));
  }
  out.structured = s;
  return out;
}

ToolResult write_session_file(const json& args, ApiConnection& api, const CallContext&) {
  auto bytes = file_content(args);
  if (!bytes) return error_result(bytes.error());
  if (bytes->size() > (8u << 20)) return error_result("the file is larger than 8 MiB");
  std::string path = args["path"];
  auto r = api.call("PUT", session_path(args) + "/files?path=" + api::percent_encode(path), *bytes,
                    {{"Content-Type", "application/octet-stream"}});
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  ToolResult out;
  out.structured = {{"path", str(v, "path")},
                    {"size", v.value("size", 0)},
                    {"sha256", str(v, "sha256")},
                    {"type", str(v, "type")}};
  out.content.push_back(text_block("wrote /workspace/" + str(v, "path") + " (" + str(v, "type") +
                                   ", " + std::to_string(v.value("size", 0)) + " bytes)"));
  return out;
}

ToolResult snapshot_session(const json& args, ApiConnection& api, const CallContext&) {
  auto r = api.call("POST", session_path(args) + "/snapshots", "{}");
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  ToolResult out;
  out.structured = {{"digest", str(v, "digest")},
                    {"size_bytes", v.value("size_bytes", 0)},
                    {"entries", v.value("entries", 0)},
                    {"expires_at", str(v, "expires_at")}};
  std::string text = "snapshot " + str(v, "digest") + " (" + std::to_string(v.value("entries", 0)) +
                     " entries, " + std::to_string(v.value("size_bytes", 0)) + " bytes; expires " +
                     str(v, "expires_at") +
                     "): open_session with this snapshot starts from these files";
  if (v.contains("skipped") && v["skipped"].is_array() && !v["skipped"].empty())
    text += "\nskipped: " + cap_text(v["skipped"].dump(), 4096).text;
  out.content.push_back(text_block(text));
  return out;
}

ToolResult close_session(const json& args, ApiConnection& api, const CallContext&) {
  auto r = api.call("DELETE", session_path(args));
  if (!ok(r)) return api_error_result(r);
  json v = body_json(r);
  ToolResult out;
  out.structured = {{"session_id", str(v, "id")},
                    {"state", str(v, "state")},
                    {"close_reason", str(v, "close_reason")}};
  out.content.push_back(text_block("session " + str(v, "id") + " is " + str(v, "state") + " (" +
                                   str(v, "close_reason") + ")"));
  return out;
}

}  // namespace airlock::mcp
