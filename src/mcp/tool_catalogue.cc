#include "mcp/tool_catalogue.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

const char* const kErrors =
    " When the code fails (a Python traceback, a non-zero exit, a denied network connection, a "
    "timeout, a "
    "memory or CPU limit, an output refused by a check) the result has isError true and says why: "
    "read it, fix "
    "the code and call again. A refusal by the service (a missing scope, an unknown id, a full "
    "queue) is an "
    "error result too, with the service's code and message.";

const char* const kSessionId =
    R"({"type": "string", "minLength": 1, "maxLength": 64, "description": "The session_id that open_session returned."})";

const char* const kDataRequests =
    " When the code asks the application for data (airlock_request.ask in the sandbox), the result "
    "is not an error: its status is input_requested and data_requests lists what the code asks "
    "for and why. Pass that on to the user or the application; never invent the data. Once it is "
    "provided, call again with answers (the request ids) and the data as a file; or refuse a "
    "request with refuse_data_request.";

// What structuredContent.data_requests lists: the requests as the sandboxed
// code wrote them (data to relay, not instructions) and each one's answer.
json data_requests_schema() {
  return json::parse(R"({"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "name": {"type": "string"}, "why": {"type": "string"},
      "description": {"type": ["string", "null"]}, "params": {"type": ["object", "null"]},
      "answer": {"type": "object"}}}})");
}

json policy_schema() {
  return json::parse(R"({
    "type": "object", "additionalProperties": false,
    "description": "Limits for this run, each capped by what the API key's tenant may use (a larger value is refused).",
    "properties": {
      "timeout_s": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "Wall-clock limit in seconds (default 60)."},
      "memory_mb": {"type": "integer", "minimum": 16, "maximum": 65536, "description": "Memory limit in MiB (default 512)."},
      "cpus": {"type": "number", "minimum": 0.1, "maximum": 64, "description": "CPU cores (default 1)."},
      "allow": {"type": "array", "maxItems": 32, "items": {"type": "string", "maxLength": 300},
                "description": "Network destinations as HOST:PORT (e.g. \"api.example.com:443\"); only those the tenant may reach. Default: no network."}
    }})");
}

json output_entry_schema() {
  return json::parse(R"({"type": "object", "properties": {
      "name": {"type": "string"}, "type": {"type": "string"}, "size": {"type": "integer"},
      "sha256": {"type": "string"}, "verdict": {"type": "string"}, "reason": {"type": "string"},
      "uri": {"type": "string"}}})");
}

json run_code_input() {
  json s = json::parse(R"({
    "type": "object", "additionalProperties": false, "required": ["code"],
    "properties": {
      "code": {"type": "string", "minLength": 1, "maxLength": 1000000, "description": "The program: Python 3 source, or a shell script."},
      "language": {"type": "string", "enum": ["python", "shell"], "description": "python (default) or shell."},
      "files": {"type": "array", "maxItems": 32, "description": "Input files, read-only under /inputs/<name>: an uploaded file by id, or a small text given inline.",
        "items": {"type": "object", "additionalProperties": false, "properties": {
          "file_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "An id from upload_file."},
          "name": {"type": "string", "minLength": 1, "maxLength": 128, "description": "File name for inline text (letters, digits, . _ - +)."},
          "text": {"type": "string", "maxLength": 262144, "description": "Inline file content, at most 256 KiB."}}}}
    }})");
  s["properties"]["policy"] = policy_schema();
  s["properties"]["answers"] = json::parse(R"({
    "type": "object", "additionalProperties": false, "required": ["job", "requests"],
    "description": "This run answers data requests of an earlier job that ended input_requested: that job's id and the request ids this run provides the data for (as files).",
    "properties": {
      "job": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The job_id of the job that asked."},
      "requests": {"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 16}, "description": "Request ids, e.g. [\"r1\"]."}}})");
  return s;
}

json run_code_output() {
  json s = json::parse(R"({
    "type": "object", "required": ["job_id", "outcome"],
    "properties": {
      "job_id": {"type": "string"}, "outcome": {"type": "string"}, "reason": {"type": "string"},
      "exit_code": {"type": ["integer", "null"]}, "stdout": {"type": "string"}, "stderr": {"type": "string"},
      "stdout_capped": {"type": "boolean"}, "stderr_capped": {"type": "boolean"},
      "network_denied": {"type": "array", "items": {"type": "string"}},
      "limits_hit": {"type": "array"},
      "outputs": {"type": "array"}}})");
  s["properties"]["outputs"]["items"] = output_entry_schema();
  s["properties"]["data_requests"] = data_requests_schema();
  return s;
}

std::vector<ToolDef> build() {
  std::vector<ToolDef> tools;
  tools.push_back(
      {"run_code", "Run code once in a fresh sandbox",
       std::string(
           "Runs a Python 3 program or a shell script once, in a fresh sandbox that is thrown away "
           "afterwards. Python has numpy, pandas and matplotlib. Input files are read-only under "
           "/inputs/<name>; files written to /output/ are collected and checked; the working "
           "directory "
           "/workspace is scratch. No network unless policy.allow names a destination the tenant "
           "may "
           "reach. Returns stdout and stderr (each cut at 16 KiB, with a note), the outcome and "
           "the job "
           "id (get_job_record gives the full record). A PNG written to /output comes back as an "
           "image; "
           "other outputs as links with their sha256. Live output is sent as progress while it "
           "runs; "
           "cancelling the request cancels the job.") +
           kErrors + kDataRequests,
       run_code_input(), run_code_output()});
  tools.push_back(
      {"upload_file", "Upload a file for later runs",
       std::string("Stores a file (text, CSV, TSV, JSON, PNG, JPEG or PDF; at most 8 MiB here) for "
                   "run_code or "
                   "open_session, which take its file_id. Give the content as text, or as base64 "
                   "for binary "
                   "files. A file of a type not allowed, or too large, is an error result naming "
                   "the reason."),
       json::parse(
           R"({"type": "object", "additionalProperties": false, "required": ["name"], "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 128, "description": "File name (letters, digits, . _ - +), e.g. sales.csv."},
          "text": {"type": "string", "maxLength": 8388608, "description": "The content as UTF-8 text."},
          "base64": {"type": "string", "maxLength": 11184812, "description": "The content, base64-encoded (binary files)."}}})"),
       json::parse(R"({"type": "object", "required": ["file_id"], "properties": {
          "file_id": {"type": "string"}, "name": {"type": "string"}, "size": {"type": "integer"},
          "sha256": {"type": "string"}, "type": {"type": "string"}}})")});
  tools.push_back({"open_session", "Open a session (a sandbox that keeps state)",
                   std::string("Opens a session: a sandbox with a Python kernel and a shell that "
                               "keep their variables and "
                               "files between calls to run_in_session. Returns a session_id: pass "
                               "it to every session tool. "
                               "Uploaded files (file_id) appear read-only under /inputs/<name>; a "
                               "snapshot digest restores a "
                               "saved /workspace. A session closes after idle_timeout_s without "
                               "use (default 600) and at "
                               "most 4 hours after it opened; close it with close_session when "
                               "done. Too many open sessions "
                               "is an error result: close one."),
                   json::parse(R"({"type": "object", "additionalProperties": false, "properties": {
          "files": {"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "description": "file_ids from upload_file."},
          "snapshot": {"type": "string", "maxLength": 71, "description": "A digest from snapshot_session (sha256:...)."},
          "memory_mb": {"type": "integer", "minimum": 16, "maximum": 65536, "description": "Memory for the whole session (default 512)."},
          "timeout_s": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "Default timeout of each call (default 60)."},
          "idle_timeout_s": {"type": "integer", "minimum": 1, "maximum": 86400}}})"),
                   json::parse(R"({"type": "object", "required": ["session_id"], "properties": {
          "session_id": {"type": "string"}, "state": {"type": "string"},
          "idle_timeout_s": {"type": "number"}, "max_lifetime_s": {"type": "number"}}})")});
  json run_in = json::parse(
      R"({"type": "object", "additionalProperties": false, "required": ["session_id", "code"], "properties": {
          "code": {"type": "string", "minLength": 1, "maxLength": 1000000, "description": "Python source (runs in the session's namespace; the value of a last expression is returned) or a shell command line."},
          "language": {"type": "string", "enum": ["python", "shell"], "description": "python (default) or shell."},
          "timeout_s": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "This call's timeout (default: the session's)."},
          "answers": {"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 16},
                      "description": "Ids of data requests of this session (from an input_requested call) whose data this call answers, after it was written into the session."}}})");
  run_in["properties"]["session_id"] = json::parse(kSessionId);
  json run_in_out = json::parse(R"({"type": "object", "required": ["call_id", "status"], "properties": {
          "call_id": {"type": "string"}, "session_id": {"type": "string"}, "status": {"type": "string"},
          "stdout": {"type": "string"}, "stderr": {"type": "string"}, "value": {"type": "string"},
          "error": {"type": "string"}, "exit_code": {"type": ["integer", "null"]}, "figures": {"type": "integer"},
          "capped": {"type": "array", "items": {"type": "string"}}}})");
  run_in_out["properties"]["data_requests"] = data_requests_schema();
  tools.push_back(
      {"run_in_session", "Run code in an open session",
       std::string(
           "Runs Python or a shell command in an open session, in /workspace, with the variables "
           "and "
           "files earlier calls left. Returns stdout, stderr, the repr of the last expression "
           "(value) "
           "and every matplotlib figure left open, as PNG images (the figures are then closed). "
           "Texts "
           "are cut at 16 KiB with a note. Live output is sent as progress; cancelling the request "
           "interrupts the call (KeyboardInterrupt) and the variables stay. A raised exception "
           "(the "
           "traceback is in error), a non-zero shell exit, a timeout or a dead kernel is an error "
           "result; a timed-out or dead kernel may have lost its variables (the error says so).") +
           " A closed or unknown session_id is an error result: open a new session." +
           kDataRequests + " The session and its variables stay while the request is open.",
       run_in, run_in_out});
  json list_in = json::parse(
      R"({"type": "object", "additionalProperties": false, "required": ["session_id"], "properties": {
          "path": {"type": "string", "maxLength": 1024, "description": "A directory relative to /workspace (default: /workspace itself)."}}})");
  list_in["properties"]["session_id"] = json::parse(kSessionId);
  tools.push_back({"list_session_files", "List files of a session",
                   "Lists a directory of the session's /workspace: name, kind (file, directory, "
                   "symlink, other), "
                   "size. Paths are relative to /workspace; symlinks are listed, never followed.",
                   list_in,
                   json::parse(R"({"type": "object", "required": ["entries"], "properties": {
          "path": {"type": "string"}, "entries": {"type": "array", "items": {"type": "object"}}, "truncated": {"type": "boolean"}}})")});
  json read_in = json::parse(
      R"({"type": "object", "additionalProperties": false, "required": ["session_id", "path"], "properties": {
          "path": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "A file relative to /workspace, e.g. out/chart.png."}}})");
  read_in["properties"]["session_id"] = json::parse(kSessionId);
  tools.push_back(
      {"read_session_file", "Read a file of a session",
       "Reads one file of the session's /workspace. Text (text, CSV, TSV, JSON, SVG) comes back as "
       "text, cut at 16 KiB with a note; a PNG or JPEG as an image; a PDF as a link with its "
       "sha256. "
       "Other types, symlinks and files over 64 MiB are refused (error result).",
       read_in, json::parse(R"({"type": "object", "required": ["path"], "properties": {
          "path": {"type": "string"}, "type": {"type": "string"}, "size": {"type": "integer"},
          "sha256": {"type": "string"}, "capped": {"type": "boolean"}}})")});
  json write_in = json::parse(
      R"({"type": "object", "additionalProperties": false, "required": ["session_id", "path"], "properties": {
          "path": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "Where, relative to /workspace; missing directories are made."},
          "text": {"type": "string", "maxLength": 8388608, "description": "The content as UTF-8 text."},
          "base64": {"type": "string", "maxLength": 11184812, "description": "The content, base64-encoded (binary files)."}}})");
  write_in["properties"]["session_id"] = json::parse(kSessionId);
  tools.push_back(
      {"write_session_file", "Write a file into a session",
       "Writes a file into the session's /workspace (replacing one of that name), under the input "
       "policy: text, CSV, TSV, JSON, PNG, JPEG or PDF, at most 8 MiB here. Give text, or base64 "
       "for "
       "binary content.",
       write_in, json::parse(R"({"type": "object", "required": ["path"], "properties": {
          "path": {"type": "string"}, "size": {"type": "integer"}, "sha256": {"type": "string"}, "type": {"type": "string"}}})")});
  json sid_only = json::parse(
      R"({"type": "object", "additionalProperties": false, "required": ["session_id"], "properties": {}})");
  sid_only["properties"]["session_id"] = json::parse(kSessionId);
  tools.push_back(
      {"snapshot_session", "Snapshot a session's workspace",
       "Saves the session's /workspace as an immutable snapshot and returns its digest; "
       "open_session with that snapshot starts a new session from those files (Python variables "
       "are not part of a snapshot). Snapshots expire after 7 days by default.",
       sid_only, json::parse(R"({"type": "object", "required": ["digest"], "properties": {
          "digest": {"type": "string"}, "size_bytes": {"type": "integer"}, "entries": {"type": "integer"},
          "expires_at": {"type": "string"}}})")});
  tools.push_back(
      {"close_session", "Close a session",
       "Closes a session: a running call is interrupted, every process is killed and the workspace "
       "is removed. Take a snapshot first to keep the files. Closing a closed session is harmless.",
       sid_only,
       json::parse(R"({"type": "object", "required": ["session_id", "state"], "properties": {
          "session_id": {"type": "string"}, "state": {"type": "string"}, "close_reason": {"type": "string"}}})")});
  tools.push_back(
      {"get_job_record", "Read a job's record",
       "Returns the record of a job from run_code: who ran what, with which policy, the input and "
       "output manifests with sha256 and verdicts, the outcome and its reason, usage, network "
       "attempts (allowed or denied) and cleanup; for a job that asked for data, data_requests with "
       "each request's answer (open, answered by a follow-up job, or refused). A job of another "
       "tenant answers like one that does not exist.",
       json::parse(
           R"({"type": "object", "additionalProperties": false, "required": ["job_id"], "properties": {
          "job_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The job_id from run_code."}}})"),
       json::parse(R"({"type": "object", "required": ["job_id", "state"], "properties": {
          "job_id": {"type": "string"}, "state": {"type": "string"}, "outcome": {"type": ["string", "null"]},
          "record": {"type": ["object", "null"]}}})")});
  tools.back().output_schema["properties"]["data_requests"] = data_requests_schema();
  tools.push_back(
      {"refuse_data_request", "Refuse a data request of a job or a session",
       "Refuses one data request (from a run_code or run_in_session result with status "
       "input_requested) with a reason, when the user or the application decides not to provide "
       "the data. Give job_id for a job's request or session_id for a session's, the request_id "
       "(r1, r2, ...) and the reason; the refusal, its reason and the key are recorded. A request "
       "already answered or refused is an error result (409).",
       json::parse(
           R"({"type": "object", "additionalProperties": false, "required": ["request_id", "reason"], "properties": {
          "job_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The job that asked (give this or session_id)."},
          "session_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The session whose call asked (give this or job_id)."},
          "request_id": {"type": "string", "minLength": 1, "maxLength": 16, "description": "The request's id, e.g. r1."},
          "reason": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Why the data is not given; recorded."}}})"),
       json::parse(R"({"type": "object", "required": ["request_id", "state"], "properties": {
          "job_id": {"type": "string"}, "session_id": {"type": "string"}, "request_id": {"type": "string"},
          "state": {"type": "string"}, "reason": {"type": "string"}, "key_id": {"type": "string"}}})")});
  return tools;
}

}  // namespace

const std::vector<ToolDef>& tool_catalogue() {
  static const std::vector<ToolDef> kTools = build();
  return kTools;
}

const ToolDef* find_tool(const std::string& name) {
  for (const auto& t : tool_catalogue())
    if (t.name == name) return &t;
  return nullptr;
}

json tools_list_result() {
  json tools = json::array();
  for (const auto& t : tool_catalogue()) {
    tools.push_back({{"name", t.name},
                     {"title", t.title},
                     {"description", t.description},
                     {"inputSchema", t.input_schema},
                     {"outputSchema", t.output_schema}});
  }
  return json{{"tools", tools}};
}

}  // namespace airlock::mcp
